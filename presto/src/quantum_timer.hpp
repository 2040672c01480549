#pragma once
// Preemption (RuntimeConfig::quantum). Each processor's OS thread owns a POSIX timer on the
// monotonic clock that sends it SIGURG every quantum; the processor pauses it while it is
// parked, so an idle runtime gets no signal. (A timer on the thread's CPU-time clock would need
// no pausing, but Linux checks those only at the scheduler tick: a 1 ms quantum became 4 ms.)
// The handler (quantum_timer.cpp) preempts the running presto
// thread if it ran for a whole quantum and was interrupted in application code, outside the
// runtime and holding no spinlock (Dispatch::quantum_expired); see docs/design/runtime.md.

#include <chrono>

#include <time.h>

namespace presto::detail {

class QuantumTimer {
 public:
  // Why this process cannot preempt presto threads, or nullptr if it can. Preemption needs
  // x86-64 Linux, no sanitizer (their fiber bookkeeping cannot follow a switch made inside a
  // signal handler), and the presto library linked as a shared object, so that its code (like
  // libc's) can be told from application code by address.
  static const char* unavailable() noexcept;
  // True if `pc` lies in the application's own code (the main executable's text).
  static bool in_application(const void* pc) noexcept;

  // Arms, for the calling OS thread, a timer that signals it every `quantum`; none if the
  // quantum is zero.
  explicit QuantumTimer(std::chrono::microseconds quantum);
  QuantumTimer(const QuantumTimer&) = delete;
  QuantumTimer& operator=(const QuantumTimer&) = delete;
  ~QuantumTimer();

  // Stops the signals while the processor parks, and starts them again (a system call each).
  void pause() noexcept;
  void resume() noexcept;

 private:
  timer_t timer_{};
  itimerspec period_{};
  bool armed_ = false;
};

}  // namespace presto::detail
