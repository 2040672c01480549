#pragma once
// Barrier: a cyclic barrier for a fixed number of parties. Each arrive_and_wait() sleeps
// until `parties` threads have arrived in the current phase; then they all go on and the next
// phase begins. Exactly one thread per phase (the last to arrive) gets `true`, for work that
// must be done once per phase. How the others wait for the last one (sleep, spin, spin then
// sleep) is the barrier's wait policy (set_wait_policy).
//
// Timed and cancellable arrivals (arrive_and_wait_until, arrive_and_wait(token)): a thread that
// gives up *withdraws its arrival*, as if it had never arrived, and the phase still needs
// `parties` arrivals. So the barrier stays usable: the parties that gave up can arrive again
// (a retry loop), and a phase can never complete on behalf of a thread that is no longer
// there, which would let the others run ahead of work it did not do. (std::barrier has no
// timed wait; breaking the barrier for everybody, Java's choice, turns one slow party into
// an error for all, which a deadline on one thread should not do.) If the phase completes
// while the thread is giving up, the arrival counts and the call reports `passed`: nothing
// is withdrawn from a completed phase.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <presto/stop_token.hpp>
#include <presto/synchro_object.hpp>
#include <presto/wait_policy.hpp>

namespace presto {

class Barrier : public SynchroObject {
 public:
  // UsageError if parties == 0.
  explicit Barrier(std::size_t parties, std::string name = {});
  ~Barrier() noexcept(false) override;

  bool arrive_and_wait();

  enum class Arrival {
    timed_out,  // the deadline passed first: the arrival was withdrawn
    passed,     // the phase completed; another thread arrived last
    last,       // the phase completed with this arrival (arrive_and_wait()'s `true`)
  };
  // Arrives and waits until the phase completes or `deadline` passes (sleeping, whatever the
  // wait policy); on time-out the arrival is withdrawn (see above).
  Arrival arrive_and_wait_until(Clock::time_point deadline) { return arrive_until(&deadline, StopToken{}); }
  template <class Rep, class Period>
  Arrival arrive_and_wait_for(const std::chrono::duration<Rep, Period>& timeout) {
    return arrive_and_wait_until(Clock::now() + std::chrono::ceil<Clock::duration>(timeout));
  }
  // As arrive_and_wait(), but if a stop is requested on `token` before the phase completes,
  // withdraws the arrival and throws Cancelled (presto/stop_token.hpp).
  bool arrive_and_wait(const StopToken& token) { return arrive_until(nullptr, token) == Arrival::last; }
  // Both: a deadline and a token.
  Arrival arrive_and_wait_until(Clock::time_point deadline, const StopToken& token) {
    return arrive_until(&deadline, token);
  }

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
  Arrival arrive_until(const Clock::time_point* deadline, const StopToken& token);
  // Spinlock held, released: the last arrival ends the phase and wakes its waiters.
  void complete_phase();

  const std::size_t parties_;
  std::size_t arrived_ = 0;  // guarded by the spinlock
  // Changed under the spinlock; read without it by spinning waiters (hence atomic).
  std::atomic<std::uint64_t> phase_{0};
  detail::WaitState wait_;
};

}  // namespace presto
