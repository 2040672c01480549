#pragma once
// RawSpinlock: the non-virtual, one-byte spinlock PRESTO's own objects use internally.
// presto::Spinlock (spinlock.hpp) is the overridable class for applications; both share
// ttas_lock() so there is one acquisition algorithm. Its holder (and a thread spinning for it)
// is never preempted; a preemption that came meanwhile waits for the next quantum.

#include <atomic>

#include <presto/detail/cpu.hpp>
#include <presto/detail/preempt_count.hpp>

namespace presto::detail {

// Test-and-test-and-set with exponential backoff: one atomic exchange when free; while held,
// waiters spin on a plain load of their cached copy and back off, so a release costs the
// holder one cache miss per waiter instead of a storm of failed exchanges.
// Out of line: the uncontended lock is one exchange, inlined into the dispatch path.
[[gnu::noinline, gnu::cold]] inline void ttas_lock_contended(std::atomic<bool>& word) noexcept {
  do {
    Backoff backoff;
    while (word.load(std::memory_order_relaxed)) backoff.pause();
  } while (word.exchange(true, std::memory_order_acquire));
}

[[gnu::always_inline]] inline void ttas_lock(std::atomic<bool>& word) noexcept {
  if (word.exchange(true, std::memory_order_acquire)) [[unlikely]] ttas_lock_contended(word);
}

inline bool ttas_try_lock(std::atomic<bool>& word) noexcept {
  return !word.load(std::memory_order_relaxed) && !word.exchange(true, std::memory_order_acquire);
}

class RawSpinlock {
 public:
  RawSpinlock() = default;
  RawSpinlock(const RawSpinlock&) = delete;
  RawSpinlock& operator=(const RawSpinlock&) = delete;

  [[gnu::always_inline]] void lock() noexcept {
    preempt_disable();
    ttas_lock(locked_);
  }
  bool try_lock() noexcept {
    preempt_disable();
    if (ttas_try_lock(locked_)) return true;
    preempt_enable_quietly();
    return false;
  }
  [[gnu::always_inline]] void unlock() noexcept {
    locked_.store(false, std::memory_order_release);
    preempt_enable_quietly();
  }
  // For a holder that cannot be preempted anyway (inside its processor's gate): the lock
  // without the preemption count.
  [[gnu::always_inline]] void lock_unpreemptible() noexcept { ttas_lock(locked_); }
  [[gnu::always_inline]] void unlock_unpreemptible() noexcept { locked_.store(false, std::memory_order_release); }
  bool is_locked() const noexcept { return locked_.load(std::memory_order_relaxed); }
  // Whether the lock is free, as an acquisition would see it: when true, everything the last
  // holder did under it is visible to the caller (Condition::signal's check for a waiter still
  // on its way to sleep). Takes nothing: the lock may be taken right after.
  bool is_free_acquire() const noexcept { return !locked_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace presto::detail
