#pragma once
// The calling OS thread's reasons not to be preempted (see presto/non_preemptable.hpp and
// docs/design/runtime.md, "Preemption"). The runtime's quantum signal handler reads them on the
// OS thread it interrupts, so they are plain per-OS-thread words (__thread: no TLS wrapper) and
// a compiler-only fence orders them against the code they guard.
//
// A presto thread never gives up its processor while it holds a spinlock or is inside a
// NonPreemptable region (the one exception, a thread sleeping on a SynchroObject whose spinlock
// it holds, has that spinlock released by the next context on the same OS thread), so counting
// per OS thread counts per running thread.

#include <presto/version.hpp>  // first: the C++20 check

#include <atomic>

namespace presto::detail {

// Under ThreadSanitizer preemption is off (QuantumTimer::unavailable), and the count is not
// kept: TSan takes each presto thread for a thread of its own and would report the OS thread's
// word, touched in turn by every presto thread that runs there, as a data race.
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kCountPreemption = false;
#else
inline constexpr bool kCountPreemption = true;
#endif

// Spinlocks held and NonPreemptable regions entered by the thread running on this OS thread.
// initial-exec: one %fs-relative access, no __tls_get_addr call from the shared library.
extern __thread __attribute__((tls_model("initial-exec"))) unsigned tl_preempt_disabled;
// A quantum expired while preemption was disabled: preempt when the count drops to zero.
extern __thread __attribute__((tls_model("initial-exec"))) bool tl_preempt_pending;

// Yields the processor if a preemption is pending and the caller may be preempted (library).
void preempt_pending() noexcept;

inline void preempt_disable() noexcept {
  if constexpr (!kCountPreemption) return;
  ++tl_preempt_disabled;
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

// For the runtime's own locks: a pending preemption waits for the next quantum.
inline void preempt_enable_quietly() noexcept {
  if constexpr (!kCountPreemption) return;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  --tl_preempt_disabled;
}

// For application-facing guards (Spinlock, NonPreemptable): a pending preemption happens here.
inline void preempt_enable() noexcept {
  if constexpr (!kCountPreemption) return;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (--tl_preempt_disabled == 0 && tl_preempt_pending) [[unlikely]] preempt_pending();
}

}  // namespace presto::detail
