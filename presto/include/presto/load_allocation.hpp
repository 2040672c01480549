#pragma once
// LoadAllocation: sizes the job from the OS run queue, as ASAT version 1 consulted `uptime`
// (thesis §4.2.1). At a region entry, once `interval` has passed since the last look, it
// reads how many threads of other programs are running or ready (AllocationEnvironment::
// others_running) and takes the processors they leave free: hardware processors - others,
// between 1 and the limit. The first region looks at once.
//
// It needs no barrier and does not thrash against itself, but it trusts one sample of a
// queue that changes every few milliseconds, and jobs that adapt at the same moment each
// count the others' threads from before: two such jobs can both shrink, or both grow.

#include <chrono>
#include <cstddef>
#include <string>

#include <presto/allocation_policy.hpp>

namespace presto {

class LoadAllocation final : public AllocationPolicy {
 public:
  // UsageError if interval is not positive.
  explicit LoadAllocation(std::chrono::nanoseconds interval = std::chrono::milliseconds(500));

  std::size_t decide(std::size_t current, std::size_t limit, AllocationEnvironment& env) override;
  std::string describe() const override;

  std::chrono::nanoseconds interval() const noexcept { return interval_; }

 private:
  std::chrono::nanoseconds interval_;
  bool looked_ = false;
  std::chrono::nanoseconds last_{};
};

// The processors the OS leaves this job: hardware - others, between 1 and limit. Shared by
// LoadAllocation and HybridAllocation.
std::size_t processors_left(std::size_t limit, AllocationEnvironment& env);

}  // namespace presto
