#pragma once
// Test-and-test-and-set with backoff (Anderson 1990, section 3): after a failed exchange a
// waiter delays before it reads the flag again, so the waiters that saw the lock free at the
// same release do not all retry at once.
//
// TtasStaticBackoffLock: a fixed delay of `delay` pauses after each failed exchange. Anderson's
// static slots: good when the delay matches the number of waiters, too long with few (the
// lock sits free while everyone waits out their delay), too short with many.
//
// TtasExponentialBackoffLock: the delay starts at `initial` pauses and doubles after each
// failed exchange up to `cap` pauses (Ethernet's backoff): adapts to the number of waiters, at
// the price of unfairness (a newcomer with a short delay beats old waiters with long ones).
//
// Not FIFO. Both take their delays at construction; the defaults were chosen on a 2-core x86-64
// (benchmarks/micro/spinlocks.cpp): ~1 us static, 4 .. 4096 pauses exponential.

#include <algorithm>
#include <atomic>

#include <presto/locks/spin_wait.hpp>
#include <presto/locks/ttas_lock.hpp>
#include <presto/spinlock.hpp>

namespace presto::locks {

class TtasStaticBackoffLock final : public Spinlock {
 public:
  explicit TtasStaticBackoffLock(unsigned delay = 64) noexcept : delay_(delay) {}

 protected:
  void acquire() noexcept override {
    ttas_acquire(flag_, [this] { delay(delay_); });
  }
  bool try_acquire() noexcept override { return ttas_try_acquire(flag_); }
  void release() noexcept override { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> flag_{false};
  const unsigned delay_;
};

class TtasExponentialBackoffLock final : public Spinlock {
 public:
  explicit TtasExponentialBackoffLock(unsigned initial = 4, unsigned cap = 4096) noexcept
      : initial_(std::max(1u, initial)), cap_(std::max(initial_, cap)) {}

 protected:
  void acquire() noexcept override {
    unsigned d = initial_;
    ttas_acquire(flag_, [&] {
      delay(d);
      d = std::min(cap_, 2 * d);
    });
  }
  bool try_acquire() noexcept override { return ttas_try_acquire(flag_); }
  void release() noexcept override { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> flag_{false};
  const unsigned initial_, cap_;
};

}  // namespace presto::locks
