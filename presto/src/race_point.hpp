#pragma once
// PRESTO_RACE_POINT(name): a race point (presto/detail/race_point.hpp) where the library is built
// with -Drace_points=true (PRESTO_RACE_POINTS defined), nothing otherwise. `name` is a string
// literal naming the function and the two steps it comes between.

#include <presto/detail/race_point.hpp>

#ifdef PRESTO_RACE_POINTS
#include <atomic>

namespace presto::detail {
extern std::atomic<RacePointHook> race_point_hook;
}  // namespace presto::detail

#define PRESTO_RACE_POINT(name)                                                                  \
  do {                                                                                           \
    if (::presto::detail::RacePointHook hook_ =                                                  \
            ::presto::detail::race_point_hook.load(std::memory_order_acquire)) {                 \
      hook_(name);                                                                               \
    }                                                                                            \
  } while (false)
#else
#define PRESTO_RACE_POINT(name) static_cast<void>(0)
#endif
