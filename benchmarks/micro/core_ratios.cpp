// core_ratios: the three performance targets of the core runtime, each measured beside its
// baseline in the same run, on one processor:
//   yield between two threads            <= 3x a raw Boost.Context switch
//   fork + join of an empty thread       >= 4x faster than Boost.Fiber's
//   uncontended Monitor entry + exit     <= 2x std::mutex lock + unlock
// Usage: core_ratios [--quick]

#include <boost/context/fiber.hpp>
#include <boost/fiber/all.hpp>
#include <cstring>
#include <mutex>

#include <presto/presto.hpp>

#include "../support/harness.hpp"

namespace ctx = boost::context;
using presto::bench::measure;
using presto::bench::Result;

namespace {

// Raw Boost.Context: two fibers switching back and forth; one operation = one switch.
Result raw_switch(std::uint64_t switches, int reps) {
  return measure("switch", "boost.context", 1, switches, reps, [switches] {
    ctx::fiber other{[](ctx::fiber&& back) {
      for (;;) back = std::move(back).resume();
      return std::move(back);
    }};
    for (std::uint64_t i = 0; i < switches / 2; ++i) other = std::move(other).resume();
  });
}

// PRESTO: two threads on one processor yield to each other; one operation = one yield, which
// is one switch.
Result presto_yield(std::uint64_t yields, int reps) {
  presto::Runtime rt{{.processors = 1}};
  return measure("yield", "presto", 1, yields, reps, [&] {
    rt.run([yields] {
      auto other = presto::fork([yields] {
        for (std::uint64_t i = 0; i < yields / 2; ++i) presto::this_thread::yield();
      });
      for (std::uint64_t i = 0; i < yields / 2; ++i) presto::this_thread::yield();
      other.join();
    });
  });
}

Result presto_fork_join(std::uint64_t n, int reps) {
  presto::Runtime rt{{.processors = 1}};
  return measure("fork_join", "presto", 1, n, reps, [&] {
    rt.run([n] {
      for (std::uint64_t i = 0; i < n; ++i) presto::fork([] {}).join();
    });
  });
}

Result fiber_fork_join(std::uint64_t n, int reps) {
  return measure("fork_join", "boost.fiber", 1, n, reps, [n] {
    for (std::uint64_t i = 0; i < n; ++i) boost::fibers::fiber([] {}).join();
  });
}

Result presto_monitor(std::uint64_t n, int reps) {
  presto::Runtime rt{{.processors = 1}};
  return measure("monitor_entry_exit", "presto", 1, n, reps, [&] {
    rt.run([n] {
      presto::Monitor m{"m"};
      for (std::uint64_t i = 0; i < n; ++i) {
        presto::Monitor::Entry e{m};
        asm volatile("" ::: "memory");
      }
    });
  });
}

Result std_mutex(std::uint64_t n, int reps) {
  return measure("mutex_lock_unlock", "std", 1, n, reps, [n] {
    std::mutex m;
    for (std::uint64_t i = 0; i < n; ++i) {
      std::lock_guard g(m);
      asm volatile("" ::: "memory");
    }
  });
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const std::uint64_t scale = quick ? 10 : 1;
  const int reps = quick ? 3 : 7;
  Result raw = raw_switch(20'000'000 / scale, reps);
  Result yield = presto_yield(20'000'000 / scale, reps);
  Result fork = presto_fork_join(2'000'000 / scale, reps);
  Result fiber = fiber_fork_join(2'000'000 / scale, reps);
  Result monitor = presto_monitor(50'000'000 / scale, reps);
  Result mutex = std_mutex(50'000'000 / scale, reps);
  presto::bench::print_ratios({
      {"yield / raw Boost.Context switch", yield, raw, 3.0, true},
      {"fork+join: Boost.Fiber / presto", fork, fiber, 4.0, false},
      {"Monitor entry+exit / std::mutex lock+unlock", monitor, mutex, 2.0, true},
  });
  return 0;
}
