// Race points (presto/detail/race_point.hpp): the installed hook, in builds that have them.

#include "race_point.hpp"

namespace presto::detail {

#ifdef PRESTO_RACE_POINTS
std::atomic<RacePointHook> race_point_hook{nullptr};

bool set_race_point_hook(RacePointHook hook) noexcept {
  race_point_hook.store(hook, std::memory_order_release);
  return true;
}
#else
bool set_race_point_hook(RacePointHook) noexcept { return false; }
#endif

}  // namespace presto::detail
