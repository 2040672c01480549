#pragma once
// NonPreemptable: a region of a thread that preemption (RuntimeConfig::quantum) leaves alone.
//
//   {
//     presto::NonPreemptable guard;  // from here to the end of the scope ...
//     ...                            // ... this thread is not preempted
//   }                                // a quantum that expired meanwhile preempts it here
//
// or PRESTO's calls, which must pair up on the same thread:
//   presto::this_thread::nonpreemptable(); ... presto::this_thread::preemptable();
//
// Regions nest. A thread may still yield, sleep or block inside one: the region is the
// thread's, not its processor's, and goes with it. Use one around code that must not be
// descheduled midway: a critical section under an OS mutex (std::mutex, a function-local
// static's initialisation) that other presto threads on the same processor may also take, or
// a short burst whose latency matters. Holding a Spinlock already implies one.
//
// Cost: one increment and one decrement of a per-OS-thread word; no system call.

#include <presto/detail/preempt_count.hpp>

namespace presto {

class [[nodiscard]] NonPreemptable {
 public:
  NonPreemptable() noexcept { detail::preempt_disable(); }
  NonPreemptable(const NonPreemptable&) = delete;
  NonPreemptable& operator=(const NonPreemptable&) = delete;
  ~NonPreemptable() { detail::preempt_enable(); }
};

namespace this_thread {

// Opens a region in which the calling thread is not preempted.
inline void nonpreemptable() noexcept { detail::preempt_disable(); }
// Closes the innermost region opened by nonpreemptable(); UsageError, naming the thread, if
// there is none (not checked under ThreadSanitizer, where preemption is off).
void preemptable();

}  // namespace this_thread

}  // namespace presto
