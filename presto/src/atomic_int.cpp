#include <presto/atomic_int.hpp>

#include <presto/thread.hpp>

namespace presto {

AtomicInt::~AtomicInt() noexcept(false) { check_no_waiters(); }

AtomicInt::value_type AtomicInt::wait(value_type old) {
  for (;;) {
    spin_lock();
    // Announce the waiter before checking the value: an update either sees waiters_ != 0 and
    // wakes us (after taking the spinlock, so only once we sleep), or happened before our load.
    waiters_.fetch_add(1, std::memory_order_seq_cst);
    value_type v = value_.load(std::memory_order_seq_cst);
    if (v != old) {
      waiters_.fetch_sub(1, std::memory_order_seq_cst);
      spin_unlock();
      return v;
    }
    block();
  }
}

void AtomicInt::wake_all() {
  ThreadQueue woken;
  spin_lock();
  while (Thread* t = recall()) {
    woken.push_back(*t);
    waiters_.fetch_sub(1, std::memory_order_seq_cst);
  }
  spin_unlock();
  wakeup_all(woken);
}

}  // namespace presto
