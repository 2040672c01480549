#pragma once
// RuntimeAllocation: a runtime's allocation policy and the environment it observes (the
// real clock, a timed barrier over the runtime's processors, /proc). Runtime owns one;
// Runtime::begin_parallel_region and set_allocation_policy forward here.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>

#include <presto/allocation_policy.hpp>
#include <presto/thread.hpp>

namespace presto {
class Runtime;
}

namespace presto::detail {

class RuntimeAllocation final : public AllocationEnvironment {
 public:
  RuntimeAllocation(Runtime& rt, std::unique_ptr<AllocationPolicy> policy);

  // Runtime::begin_parallel_region: asks the policy (unless another thread is inside it, or
  // it is FixedAllocation) and sets the count it returns.
  void begin_region() {
    if (adaptive_.load(std::memory_order_relaxed)) consult();
  }
  std::unique_ptr<AllocationPolicy> replace(std::unique_ptr<AllocationPolicy> next, std::size_t limit);
  const AllocationPolicy& policy() const noexcept { return *policy_; }

  std::chrono::nanoseconds now() override;
  std::chrono::nanoseconds timed_barrier(std::size_t processors) override;
  std::size_t others_running() override;
  std::size_t hardware_processors() override;

  // The policy PRESTO_ALLOCATION names (nullptr when unset); UsageError for an unknown name.
  static std::unique_ptr<AllocationPolicy> from_environment();

 private:
  void consult();
  bool try_enter() noexcept { return !busy_.exchange(true, std::memory_order_acquire); }
  void exit() noexcept { busy_.store(false, std::memory_order_release); }

  Runtime& rt_;
  std::unique_ptr<AllocationPolicy> policy_;
  std::size_t limit_;
  std::atomic<bool> adaptive_;  // not FixedAllocation: region entries consult the policy
  std::atomic<bool> busy_{false};  // a thread is inside decide(), or the policy is being replaced
  std::atomic<const Thread*> deciding_{nullptr};  // the thread inside decide(), for misuse reports
};

}  // namespace presto::detail
