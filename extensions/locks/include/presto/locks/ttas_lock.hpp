#pragma once
// TtasLock: test-and-test-and-set ("spin on read"). A waiter spins reading its cached copy of
// the flag and tries the exchange only when it reads free. While the lock is held the waiters
// generate no traffic; at each release all of them miss, see it free and try the exchange at
// once, and the losers miss again: the quiescence time after a release grows with the number
// of waiters (Anderson 1990).
//
// Not FIFO. TtasStaticBackoffLock and TtasExponentialBackoffLock add a delay after a failed
// exchange; presto::Spinlock's own default is exponential backoff.

#include <atomic>

#include <presto/locks/spin_wait.hpp>
#include <presto/spinlock.hpp>

namespace presto::locks {

class TtasLock final : public Spinlock {
 protected:
  void acquire() noexcept override {
    SpinWait w;
    for (;;) {
      while (flag_.load(std::memory_order_relaxed)) w.poll();
      if (!flag_.exchange(true, std::memory_order_acquire)) return;
    }
  }
  bool try_acquire() noexcept override {
    return !flag_.load(std::memory_order_relaxed) && !flag_.exchange(true, std::memory_order_acquire);
  }
  void release() noexcept override { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> flag_{false};
};

}  // namespace presto::locks
