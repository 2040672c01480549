#pragma once
// Barrier: a cyclic barrier for a fixed number of parties. Each arrive_and_wait() sleeps
// until `parties` threads have arrived in the current phase; then they all go on and the next
// phase begins. Exactly one thread per phase (the last to arrive) gets `true`, for work that
// must be done once per phase. How the others wait for the last one (sleep, spin, spin then
// sleep) is the barrier's wait policy (set_wait_policy).

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <presto/synchro_object.hpp>
#include <presto/wait_policy.hpp>

namespace presto {

class Barrier : public SynchroObject {
 public:
  // UsageError if parties == 0.
  explicit Barrier(std::size_t parties, std::string name = {});
  ~Barrier() noexcept(false) override;

  bool arrive_and_wait();

  std::size_t parties() const noexcept { return parties_; }
  std::uint64_t phase() const noexcept;  // phases completed so far (a snapshot)
  std::string_view kind() const noexcept override { return "barrier"; }

  // How a thread that finds it incomplete waits (presto/wait_policy.hpp); WaitMode::inherit (the
  // default) takes the runtime's RuntimeConfig::wait_policy. UsageError for a negative budget.
  void set_wait_policy(WaitPolicy policy) { wait_.set_policy(policy, describe()); }
  WaitPolicy wait_policy() const noexcept { return wait_.policy(); }
  // The measured cost of a block + wake-up here, the competitive mode's budget (0 until measured).
  std::chrono::nanoseconds block_cost() const noexcept { return wait_.block_cost(); }

 private:
  const std::size_t parties_;
  std::size_t arrived_ = 0;  // guarded by the spinlock
  // Changed under the spinlock; read without it by spinning waiters (hence atomic).
  std::atomic<std::uint64_t> phase_{0};
  detail::WaitState wait_;
};

}  // namespace presto
