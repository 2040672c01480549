#include <presto/asat_allocation.hpp>

#include <cstdio>

#include <presto/errors.hpp>

namespace presto {

namespace {
std::string seconds(std::chrono::nanoseconds d) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", std::chrono::duration<double>(d).count());
  return text;
}
}  // namespace

AsatAllocation::AsatAllocation(AsatParameters parameters) : parameters_(parameters) {
  if (parameters_.eval.count() <= 0) throw UsageError("AsatAllocation: eval (ASAT_EVAL_TIME) must be positive");
  if (parameters_.bad.count() <= 0) throw UsageError("AsatAllocation: bad (ASAT_BAD_TIME) must be positive");
  if (parameters_.bad_trig == 0) throw UsageError("AsatAllocation: bad_trig (ASAT_BAD_TRIG) must be at least 1");
  if (parameters_.good_trig == 0) throw UsageError("AsatAllocation: good_trig (ASAT_GOOD_TRIG) must be at least 1");
}

std::size_t AsatAllocation::decide(std::size_t current, std::size_t limit, AllocationEnvironment& env) {
  const std::chrono::nanoseconds now = env.now();
  if (evaluated_ && now - last_ < parameters_.eval) return current;  // the common case: one clock read
  evaluated_ = true;
  last_ = now;
  if (env.timed_barrier(current) > parameters_.bad) {
    ++bad_;
    good_ = 0;
  } else {
    ++good_;
    bad_ = 0;
  }
  if (bad_ >= parameters_.bad_trig && current > 1) {
    bad_ = 0;
    return current - 1;
  }
  if (good_ >= parameters_.good_trig && current < limit) {
    good_ = 0;
    if (may_grow(current, env) && env.timed_barrier(current + 1) <= parameters_.bad) return current + 1;
  }
  return current;
}

bool AsatAllocation::may_grow(std::size_t /*current*/, AllocationEnvironment& /*env*/) { return true; }

std::string AsatAllocation::describe_as(const char* name) const {
  return std::string(name) + "(eval " + seconds(parameters_.eval) + ", bad " + seconds(parameters_.bad) + ", bad_trig " +
         std::to_string(parameters_.bad_trig) + ", good_trig " + std::to_string(parameters_.good_trig) + ")";
}

std::string AsatAllocation::describe() const { return describe_as("asat"); }

}  // namespace presto
