#pragma once
// Semaphore: Dijkstra's counting semaphore. acquire() (P) takes a unit, sleeping while there
// is none; release(n) (V) adds n units, handing them directly to the longest waiters, so a
// woken thread never has to compete for its unit. How acquire() waits (sleep, spin, spin then
// sleep) is the semaphore's wait policy (set_wait_policy); the timed acquires always sleep.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include <presto/stop_token.hpp>
#include <presto/synchro_object.hpp>
#include <presto/wait_policy.hpp>

namespace presto {

class Semaphore : public SynchroObject {
 public:
  explicit Semaphore(std::ptrdiff_t initial = 0, std::string name = {});
  ~Semaphore() noexcept(false) override;

  void acquire();
  bool try_acquire() noexcept;
  // Waits for a unit until `deadline` (sleeping, whatever the wait policy); false if it
  // passed first. A deadline already past makes it a try_acquire.
  bool try_acquire_until(Clock::time_point deadline) { return acquire_until(&deadline, StopToken{}); }
  template <class Rep, class Period>
  bool try_acquire_for(const std::chrono::duration<Rep, Period>& timeout) {
    return try_acquire_until(Clock::now() + std::chrono::ceil<Clock::duration>(timeout));
  }
  // As acquire(), but throws Cancelled (without a unit) if a stop is requested on `token`
  // before a unit is handed over (presto/stop_token.hpp).
  void acquire(const StopToken& token) { acquire_until(nullptr, token); }
  // As try_acquire_until, and throws Cancelled as acquire(token).
  bool try_acquire_until(Clock::time_point deadline, const StopToken& token) { return acquire_until(&deadline, token); }
  // Adds n >= 0 units. UsageError if n < 0.
  void release(std::ptrdiff_t n = 1);
  // Units available now (a snapshot).
  std::ptrdiff_t value() const noexcept;

  std::string_view kind() const noexcept override { return "semaphore"; }

  // How a thread that finds it without a unit waits (presto/wait_policy.hpp); WaitMode::inherit (the
  // default) takes the runtime's RuntimeConfig::wait_policy. UsageError for a negative budget.
  void set_wait_policy(WaitPolicy policy) { wait_.set_policy(policy, describe()); }
  WaitPolicy wait_policy() const noexcept { return wait_.policy(); }
  // The measured cost of a block + wake-up here, the competitive mode's budget (0 until measured).
  std::chrono::nanoseconds block_cost() const noexcept { return wait_.block_cost(); }

 private:
  bool take() noexcept;  // one unit if there is one; spinlock held
  // acquire() itself: acquire is its predicted-return entry where there are such (see
  // Condition::wait_body).
  [[gnu::visibility("hidden")]] void acquire_body();
  bool acquire_until(const Clock::time_point* deadline, const StopToken& token);

  // Changed under the spinlock; read without it by spinning waiters (hence atomic, relaxed).
  std::atomic<std::ptrdiff_t> count_;
  detail::WaitState wait_;
};

}  // namespace presto
