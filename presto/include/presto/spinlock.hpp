#pragma once
// Spinlock: PRESTO's non-relinquishing lock. A thread that finds it held busy-waits (it keeps
// its processor) until the holder unlocks. Use it for critical sections shorter than a context
// switch; use Lock or Monitor otherwise.
//
// The default algorithm is test-and-test-and-set with exponential backoff. Subclass and
// override lock/try_lock/unlock to try another (ticket, MCS, Anderson's queue lock, ...);
// every PRESTO object accepts any Spinlock through the std Lockable names, so
// std::scoped_lock works. A Spinlock is not recursive: relocking it from its holder spins
// forever, exactly as in PRESTO.
//
// Cost: an uncontended lock+unlock is one atomic exchange and one store. Calls through a
// `Spinlock&` are virtual; on an object whose type is known (a local or member Spinlock)
// the compiler devirtualises them. Never block, yield or sleep while holding one.

#include <atomic>

#include <presto/detail/raw_spinlock.hpp>

namespace presto {

class Spinlock {
 public:
  Spinlock() = default;
  Spinlock(const Spinlock&) = delete;
  Spinlock& operator=(const Spinlock&) = delete;
  virtual ~Spinlock() = default;

  virtual void lock() noexcept { detail::ttas_lock(locked_); }
  // PRESTO's checklock(): acquire only if free; true on success.
  virtual bool try_lock() noexcept { return detail::ttas_try_lock(locked_); }
  virtual void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 protected:
  // The state of the default algorithm. Subclasses with their own state may ignore it.
  std::atomic<bool> locked_{false};
};

}  // namespace presto
