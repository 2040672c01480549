#include <presto/once_flag.hpp>

#include <presto/errors.hpp>
#include <presto/thread.hpp>

namespace presto {

bool OnceFlag::begin() {
  Thread& me = Thread::current();
  spin_lock();
  for (;;) {
    const int s = state_.load(std::memory_order_relaxed);
    if (s == kDone) {
      spin_unlock();
      return false;
    }
    if (s == kIdle) {
      state_.store(kRunning, std::memory_order_relaxed);
      runner_ = &me;
      spin_unlock();
      return true;
    }
    if (runner_ == &me) {
      spin_unlock();
      throw UsageError(me.describe() + " called call_once on " + describe() +
                       " from inside its own initialisation: it would wait for itself");
    }
    block();  // the runner's end() or fail() wakes every waiter
    spin_lock();
  }
}

void OnceFlag::finish(int state) noexcept {
  ThreadQueue woken;
  spin_lock();
  state_.store(state, std::memory_order_release);
  runner_ = nullptr;
  while (Thread* t = recall()) woken.push_back(*t);
  spin_unlock();
  try {
    wakeup_all(woken);
  } catch (...) {
    // Only a subclass's wakeup can throw; such a thread stays blocked (reported as deadlock).
  }
}

}  // namespace presto
