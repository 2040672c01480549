#include <presto/semaphore.hpp>

#include <presto/errors.hpp>
#include <presto/predicted_return.hpp>
#include <presto/thread.hpp>

namespace presto {

Semaphore::Semaphore(std::ptrdiff_t initial, std::string name) : SynchroObject(std::move(name)), count_(initial) {
  if (initial < 0) throw UsageError(describe() + " created with a negative count " + std::to_string(initial));
}

Semaphore::~Semaphore() noexcept(false) { check_no_waiters(); }

// acquire(): a predicted-return entry where there are such (predicted_return.hpp), so that two
// threads that wake each other through semaphores, each acquiring at a place of its own, return
// into their own code predicted after the switch.
#if PRESTO_PREDICTED_RETURN
PRESTO_PREDICTED_RETURN_ENTRY("_ZN6presto9Semaphore7acquireEv", "_ZN6presto9Semaphore12acquire_bodyEv");
#else
void Semaphore::acquire() { acquire_body(); }
#endif

// Used: the entry calls it from assembly, which link-time optimization does not see.
[[gnu::used]] void Semaphore::acquire_body() {
  spin_lock();
  if (take()) {
    spin_unlock();
    return;
  }
  const WaitPolicy policy = wait_.resolve();
  if (policy.mode != WaitMode::block) {
    spin_unlock();
    if (wait_.spin(policy, [&] { return count_.load(std::memory_order_relaxed) > 0 && try_acquire(); })) return;
    spin_lock();
    if (take()) {
      spin_unlock();
      return;
    }
  }
  wait_.before_sleep(policy);
  block();  // release() hands us its unit directly
  wait_.after_sleep(policy);
}

bool Semaphore::take() noexcept {
  const std::ptrdiff_t c = count_.load(std::memory_order_relaxed);
  if (c <= 0) return false;
  count_.store(c - 1, std::memory_order_relaxed);
  return true;
}

bool Semaphore::try_acquire() noexcept {
  spin_lock();
  const bool got = take();
  spin_unlock();
  return got;
}

bool Semaphore::acquire_until(const Clock::time_point* deadline, const StopToken& token) {
  if (try_acquire()) return true;
  CancellableWait waiting{*this, token};
  spin_lock();
  if (take()) {
    spin_unlock();
    return true;
  }
  switch (waiting.block(deadline)) {
    case WaitStatus::woken: return true;  // release() handed us its unit
    case WaitStatus::timed_out: return false;
    case WaitStatus::cancelled: break;
  }
  waiting.throw_cancelled("acquire");
}

void Semaphore::release(std::ptrdiff_t n) {
  if (n < 0) {
    throw UsageError(Thread::current().describe() + " released " + describe() + " by a negative count " +
                     std::to_string(n));
  }
  ThreadQueue woken;
  spin_lock();
  for (; n > 0; --n) {
    Thread* t = recall();
    if (t == nullptr) break;
    woken.push_back(*t);
  }
  count_.store(count_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  spin_unlock();
  Thread* const first = woken.pop_front();
  if (first == nullptr) return;
  wait_.on_wakeup();
  if (woken.empty()) {
    wakeup_handoff(*first);  // one waiter, which may take our processor when we next sleep
    return;
  }
  first->wakeup(*this);
  wakeup_all(woken);
}

std::ptrdiff_t Semaphore::value() const noexcept {
  auto& self = const_cast<Semaphore&>(*this);
  self.spin_lock();
  std::ptrdiff_t v = count_.load(std::memory_order_relaxed);
  self.spin_unlock();
  return v;
}

}  // namespace presto
