#include <presto/lock.hpp>
#include <presto/monitor.hpp>

namespace presto {

Lock::Lock(std::string name) : SynchroObject(std::move(name)) {}

Lock::~Lock() noexcept(false) { check_no_waiters(); }

bool Lock::try_lock() {
  Thread& me = Thread::current();
  std::uintptr_t w = word_.load(std::memory_order_relaxed);
  if ((w & ~kWaitersBit) == address(me)) {
    throw UsageError(me.describe() + " tried to acquire " + describe() + ", which it already holds");
  }
  return (w & ~kWaitersBit) == 0 &&
         word_.compare_exchange_strong(w, address(me) | (w & kWaitersBit), std::memory_order_acquire,
                                       std::memory_order_relaxed);
}

void Lock::lock_slow(Thread& me) {
  for (;;) {
    std::uintptr_t w = word_.load(std::memory_order_relaxed);
    if ((w & ~kWaitersBit) == address(me)) {
      throw UsageError(me.describe() + " tried to acquire " + describe() + ", which it already holds");
    }
    if ((w & ~kWaitersBit) == 0) {  // free (perhaps with sleepers still queued): compete for it
      if (word_.compare_exchange_weak(w, address(me) | (w & kWaitersBit), std::memory_order_acquire,
                                      std::memory_order_relaxed)) {
        return;
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
    block();  // the holder's unlock now takes the slow path and wakes us
  }
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
  if (next != nullptr) next->wakeup(*this);
}

Monitor::~Monitor() noexcept(false) { check_no_waiters(); }

}  // namespace presto
