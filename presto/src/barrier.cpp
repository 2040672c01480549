#include <presto/barrier.hpp>

#include <presto/errors.hpp>
#include <presto/thread.hpp>

namespace presto {

Barrier::Barrier(std::size_t parties, std::string name) : SynchroObject(std::move(name)), parties_(parties) {
  if (parties == 0) throw UsageError(describe() + " created for 0 parties");
}

Barrier::~Barrier() noexcept(false) { check_no_waiters(); }

// Inlined into both arrivals: the untimed one stays as it was before the timed one came.
[[gnu::always_inline]] inline void Barrier::complete_phase() {
  arrived_ = 0;
  phase_.store(phase_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  ThreadQueue woken;
  while (Thread* t = recall()) woken.push_back(*t);
  spin_unlock();
  if (!woken.empty()) wait_.on_wakeup();
  wakeup_all(woken);
}

bool Barrier::arrive_and_wait() {
  spin_lock();
  if (++arrived_ < parties_) {
    const WaitPolicy policy = wait_.resolve();
    if (policy.mode != WaitMode::block) {
      const std::uint64_t mine = phase_.load(std::memory_order_relaxed);
      spin_unlock();
      if (wait_.spin(policy, [&] { return phase_.load(std::memory_order_acquire) != mine; })) return false;
      spin_lock();
      if (phase_.load(std::memory_order_relaxed) != mine) {
        spin_unlock();
        return false;
      }
    }
    wait_.before_sleep(policy);
    block();  // the last arrival wakes the whole phase
    wait_.after_sleep(policy);
    return false;
  }
  complete_phase();
  return true;
}

Barrier::Arrival Barrier::arrive_until(const Clock::time_point* deadline, const StopToken& token) {
  CancellableWait waiting{*this, token};
  spin_lock();
  if (++arrived_ == parties_) {
    complete_phase();
    return Arrival::last;
  }
  const std::uint64_t mine = phase_.load(std::memory_order_relaxed);
  const WaitStatus status = waiting.block(deadline);
  if (status == WaitStatus::woken) return Arrival::passed;
  spin_lock();
  if (phase_.load(std::memory_order_relaxed) != mine) {  // completed as we gave up: it counted us
    spin_unlock();
    return Arrival::passed;
  }
  --arrived_;  // withdraw
  spin_unlock();
  if (status == WaitStatus::cancelled) waiting.throw_cancelled("arrive_and_wait");
  return Arrival::timed_out;
}

std::uint64_t Barrier::phase() const noexcept {
  auto& self = const_cast<Barrier&>(*this);
  self.spin_lock();
  std::uint64_t p = phase_.load(std::memory_order_relaxed);
  self.spin_unlock();
  return p;
}

}  // namespace presto
