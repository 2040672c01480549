#pragma once
// TasLock: test-and-set. A waiter retries the atomic exchange in a loop: every attempt is a
// write that takes the cache line from the holder and from every other waiter, so the bus
// traffic grows with the number of waiters and slows the holder down (Anderson 1990, the
// curve that rises fastest). Here as the baseline of the family; use it only for experiments.
//
// Not FIFO (no fairness at all). Like every presto::locks lock it is a presto::Spinlock: its
// holder, and a thread spinning for it, is never preempted (rule A), and it goes wherever a
// Spinlock& is accepted.

#include <atomic>

#include <presto/locks/spin_wait.hpp>
#include <presto/spinlock.hpp>

namespace presto::locks {

class TasLock final : public Spinlock {
 protected:
  void acquire() noexcept override {
    SpinWait w;
    while (flag_.exchange(true, std::memory_order_acquire)) w.poll();
  }
  bool try_acquire() noexcept override { return !flag_.exchange(true, std::memory_order_acquire); }
  void release() noexcept override { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> flag_{false};
};

}  // namespace presto::locks
