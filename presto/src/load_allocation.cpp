#include <presto/load_allocation.hpp>

#include <algorithm>
#include <cstdio>

#include <presto/errors.hpp>

namespace presto {

LoadAllocation::LoadAllocation(std::chrono::nanoseconds interval) : interval_(interval) {
  if (interval_.count() <= 0) throw UsageError("LoadAllocation: the interval must be positive");
}

std::size_t processors_left(std::size_t limit, AllocationEnvironment& env) {
  const std::size_t hardware = env.hardware_processors();
  const std::size_t others = env.others_running();
  const std::size_t left = others < hardware ? hardware - others : 1;
  return std::clamp<std::size_t>(left, 1, std::max<std::size_t>(limit, 1));
}

std::size_t LoadAllocation::decide(std::size_t current, std::size_t limit, AllocationEnvironment& env) {
  const std::chrono::nanoseconds now = env.now();
  if (looked_ && now - last_ < interval_) return current;
  looked_ = true;
  last_ = now;
  return processors_left(limit, env);
}

std::string LoadAllocation::describe() const {
  char text[64];
  std::snprintf(text, sizeof text, "load(interval %g s)", std::chrono::duration<double>(interval_).count());
  return text;
}

}  // namespace presto
