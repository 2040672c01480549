#pragma once
// Spinlock: PRESTO's non-relinquishing lock. A thread that finds it held busy-waits (it keeps
// its processor) until the holder unlocks. Use it for critical sections shorter than a context
// switch; use Lock or Monitor otherwise.
//
// The default algorithm is test-and-test-and-set with exponential backoff. Subclass and
// override acquire/try_acquire/release to try another (ticket, MCS, Anderson's queue lock, ...);
// every PRESTO object accepts any Spinlock through the std Lockable names (lock, try_lock,
// unlock), so std::scoped_lock works. A Spinlock is not recursive: relocking it from its holder
// spins forever, exactly as in PRESTO.
//
// Preemption (RuntimeConfig::quantum): a thread holding a Spinlock, or spinning for one, is
// never preempted (Zahorjan, Lazowska and Eager's rule: never deschedule a lock holder). The
// non-virtual lock/try_lock/unlock keep that count around the overridable algorithm; a quantum
// that expired meanwhile preempts the thread when it releases its last spinlock.
//
// Cost: an uncontended lock+unlock is one atomic exchange, one store and two increments of a
// per-OS-thread word. Calls of the algorithm through a `Spinlock&` are virtual; on an object
// whose type is known (a local or member Spinlock) the compiler devirtualises them. Never
// block, yield or sleep while holding one.

#include <atomic>

#include <presto/detail/preempt_count.hpp>
#include <presto/detail/raw_spinlock.hpp>

namespace presto {

class SynchroObject;

class Spinlock {
 public:
  Spinlock() = default;
  Spinlock(const Spinlock&) = delete;
  Spinlock& operator=(const Spinlock&) = delete;
  virtual ~Spinlock() = default;

  void lock() noexcept {
    detail::preempt_disable();
    acquire();
  }
  // PRESTO's checklock(): acquire only if free; true on success.
  bool try_lock() noexcept {
    detail::preempt_disable();
    if (try_acquire()) return true;
    detail::preempt_enable();
    return false;
  }
  void unlock() noexcept {
    release();
    detail::preempt_enable();
  }

 protected:
  // The algorithm. acquire returns once the caller holds the lock; try_acquire takes it only
  // if it is free (true on success); release frees it. Called with preemption disabled.
  // release may run on another presto thread than acquire, on the same OS thread: a
  // SynchroObject's spinlock (SynchroObject::set_spinlock) is released by the context that
  // runs after a thread that went to sleep holding it.
  virtual void acquire() noexcept { detail::ttas_lock(locked_); }
  virtual bool try_acquire() noexcept { return detail::ttas_try_lock(locked_); }
  virtual void release() noexcept { locked_.store(false, std::memory_order_release); }

  // The state of the default algorithm. Subclasses with their own state may ignore it.
  std::atomic<bool> locked_{false};

 private:
  friend class SynchroObject;  // counts preemption as its built-in spinlock does, around the algorithm
};

}  // namespace presto
