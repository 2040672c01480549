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

// The TTAS acquisition shared by TtasLock and the backoff locks: spin reading `flag` until it
// reads free, try the exchange, and call after_failure() when another thread won it.
template <class AfterFailure>
void ttas_acquire(std::atomic<bool>& flag, AfterFailure&& after_failure) noexcept {
  SpinWait w;
  for (;;) {
    while (flag.load(std::memory_order_relaxed)) w.poll();
    if (!flag.exchange(true, std::memory_order_acquire)) return;
    after_failure();
  }
}

inline bool ttas_try_acquire(std::atomic<bool>& flag) noexcept {
  return !flag.load(std::memory_order_relaxed) && !flag.exchange(true, std::memory_order_acquire);
}

class TtasLock final : public Spinlock {
 protected:
  void acquire() noexcept override {
    ttas_acquire(flag_, [] {});
  }
  bool try_acquire() noexcept override { return ttas_try_acquire(flag_); }
  void release() noexcept override { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> flag_{false};
};

}  // namespace presto::locks
