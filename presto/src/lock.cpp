#include <presto/lock.hpp>

#include <cstdio>
#include <exception>
#include <string>

#include <presto/monitor.hpp>

#include "race_point.hpp"

namespace presto {

Lock::Lock(std::string name) : SynchroObject(std::move(name)) {}

Lock::~Lock() noexcept(false) { check_destroyable(); }

void Lock::check_destroyable() noexcept(false) {
  check_no_waiters();
  const std::uintptr_t w = word_.exchange(0, std::memory_order_acq_rel);
  Thread* holder = reinterpret_cast<Thread*>(w & ~kWaitersBit);
  if (holder == nullptr) return;
  Thread& me = Thread::current();
  if (holder == &me) {
    --me.locks_held_;  // released with the lock
    if (me.deferred_wake_ != nullptr) me.wake_deferred();
    return;
  }
  const ThreadState s = holder->state();
  if (s == ThreadState::abandoned || s == ThreadState::terminated) return;  // nobody can release it any more
  std::string message = describe() + " destroyed by " + me.describe() + " while " + holder->describe() + " holds it";
  if (std::uncaught_exceptions() > 0) {
    std::fputs(("presto: " + message + "\n").c_str(), stderr);
    return;
  }
  throw UsageError(message);
}

bool Lock::try_lock() {
  Thread& me = Thread::current();
  std::uintptr_t w = word_.load(std::memory_order_relaxed);
  if ((w & ~kWaitersBit) == address(me)) {
    throw UsageError(me.describe() + " tried to acquire " + describe() + ", which it already holds");
  }
  const bool acquired = (w & ~kWaitersBit) == 0 &&
                        word_.compare_exchange_strong(w, address(me) | (w & kWaitersBit),
                                                      std::memory_order_acquire, std::memory_order_relaxed);
  if (acquired) ++me.locks_held_;
  return acquired;
}

template <class Wait>
bool Lock::acquire_or_wait(Thread& me, Wait&& wait) {
  for (;;) {
    std::uintptr_t w = word_.load(std::memory_order_relaxed);
    if ((w & ~kWaitersBit) == address(me)) {
      throw UsageError(me.describe() + " tried to acquire " + describe() + ", which it already holds");
    }
    if ((w & ~kWaitersBit) == 0) {  // free (perhaps with sleepers still queued): compete for it
      if (word_.compare_exchange_weak(w, address(me) | (w & kWaitersBit), std::memory_order_acquire,
                                      std::memory_order_relaxed)) {
        return true;
      }
      continue;
    }
    spin_lock();
    w = word_.load(std::memory_order_relaxed);
    if ((w & ~kWaitersBit) == 0 ||
        ((w & kWaitersBit) == 0 &&
         !word_.compare_exchange_strong(w, w | kWaitersBit, std::memory_order_relaxed))) {
      spin_unlock();  // released meanwhile: try again
      continue;
    }
    if (!wait()) return false;
  }
}

void Lock::lock_slow(Thread& me) {
  const WaitPolicy policy = wait_.resolve();
  if (policy.mode != WaitMode::block) {
    if (owner() == &me) {
      throw UsageError(me.describe() + " tried to acquire " + describe() + ", which it already holds");
    }
    const bool taken = wait_.spin(policy, [&] {
      std::uintptr_t w = word_.load(std::memory_order_relaxed);
      return (w & ~kWaitersBit) == 0 && word_.compare_exchange_strong(w, address(me) | (w & kWaitersBit),
                                                                         std::memory_order_acquire, std::memory_order_relaxed);
    });
    if (taken) return;
  }
  acquire_or_wait(me, [&] {
    wait_.before_sleep(policy);
    block_as(me);  // the holder's unlock now takes the slow path and wakes us
    wait_.after_sleep(policy);
    return true;
  });
}

bool Lock::lock_until(const Clock::time_point* deadline, const StopToken& token) {
  Thread& me = Thread::current();
  if (try_lock()) return true;
  // A waiter that gives up leaves kWaitersBit set at worst: the holder's unlock then takes the
  // slow path once and finds nobody to wake.
  CancellableWait waiting{*this, token};
  const bool acquired = acquire_or_wait(me, [&] {
    switch (waiting.block(deadline)) {
      case WaitStatus::woken: return true;
      case WaitStatus::timed_out: return false;
      case WaitStatus::cancelled: break;
    }
    waiting.throw_cancelled("lock");
  });
  if (acquired) ++me.locks_held_;
  return acquired;
}

void Lock::unlock_slow(Thread& me) {
  std::uintptr_t w = word_.load(std::memory_order_relaxed);
  if ((w & ~kWaitersBit) != address(me)) {
    Thread* holder = reinterpret_cast<Thread*>(w & ~kWaitersBit);
    throw UsageError(me.describe() + " released " + describe() + ", which it does not hold (" +
                     (holder != nullptr ? "held by " + holder->describe() : std::string("nobody holds it")) + ")");
  }
  spin_lock();
  Thread* next = recall();
  word_.store(has_waiters() ? kWaitersBit : 0, std::memory_order_release);
  spin_unlock();
  if (next != nullptr) {
    PRESTO_RACE_POINT("Lock::unlock_slow: the next waiter recalled, the lock free, not yet woken");
    wait_.on_wakeup();
    next->wakeup(*this);
  }
}

Monitor::~Monitor() noexcept(false) { check_destroyable(); }

}  // namespace presto
