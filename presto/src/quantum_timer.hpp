#pragma once
// Preemption (RuntimeConfig::quantum). Each processor's OS thread owns a POSIX timer on its
// own CPU-time clock that sends it SIGURG every quantum of CPU it uses: a parked processor
// uses no CPU and gets no signal. The handler (quantum_timer.cpp) preempts the running presto
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

  // Arms, for the calling OS thread, a timer that signals it every `quantum` of the CPU time
  // it uses; none if the quantum is zero.
  explicit QuantumTimer(std::chrono::microseconds quantum);
  QuantumTimer(const QuantumTimer&) = delete;
  QuantumTimer& operator=(const QuantumTimer&) = delete;
  ~QuantumTimer();

 private:
  timer_t timer_{};
  bool armed_ = false;
};

}  // namespace presto::detail
