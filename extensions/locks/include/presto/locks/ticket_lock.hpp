#pragma once
// TicketLock with proportional backoff (Mellor-Crummey and Scott 1991): a waiter takes the next
// ticket with one fetch-and-add and waits until now_serving reaches it, pausing between polls
// for `backoff` pauses per thread ahead of it, so waiters far back in line read the shared word
// rarely. Release is one store.
//
// FIFO: threads acquire in the order their fetch-and-add took tickets. All waiters still poll
// one word, so each release costs a miss per waiter (less than TTAS: no failed exchanges).
// Oversubscribed (more processors than cores) it suffers as every FIFO lock does: the thread
// whose turn it is may be descheduled, and nobody behind it can pass.

#include <atomic>
#include <cstdint>

#include <presto/locks/spin_wait.hpp>
#include <presto/spinlock.hpp>

namespace presto::locks {

class TicketLock final : public Spinlock {
 public:
  // `backoff`: pauses per waiter ahead between two polls (0: poll continuously).
  explicit TicketLock(unsigned backoff = 32) noexcept : backoff_(backoff) {}

 protected:
  void acquire() noexcept override {
    const std::uint32_t mine = next_.fetch_add(1, std::memory_order_relaxed);
    SpinWait w;
    for (;;) {
      const std::uint32_t serving = serving_.load(std::memory_order_acquire);
      if (serving == mine) return;
      delay(backoff_ * (mine - serving - 1));
      w.poll();
    }
  }
  bool try_acquire() noexcept override {
    std::uint32_t serving = serving_.load(std::memory_order_acquire);
    std::uint32_t expected = serving;
    return next_.compare_exchange_strong(expected, serving + 1, std::memory_order_acquire, std::memory_order_relaxed);
  }
  void release() noexcept override {
    serving_.store(serving_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

 private:
  alignas(kCacheLine) std::atomic<std::uint32_t> next_{0};
  alignas(kCacheLine) std::atomic<std::uint32_t> serving_{0};
  const unsigned backoff_;
};

}  // namespace presto::locks
