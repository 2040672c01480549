#include "quantum_timer.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <mutex>

#include <link.h>
#include <pthread.h>
#include <ucontext.h>
#include <unistd.h>

#include <presto/detail/preempt_count.hpp>
#include <presto/processor.hpp>

#include "dispatch.hpp"
#include "sanitizers.hpp"

namespace presto::detail {

__thread __attribute__((tls_model("initial-exec"))) unsigned tl_preempt_disabled = 0;
__thread __attribute__((tls_model("initial-exec"))) bool tl_preempt_pending = false;

namespace {

constexpr int kSignal = SIGURG;  // ignored by default, as Go's runtime chose for the same job

// The executable segments of the main program, found once (process-wide, like the signal
// handler itself) and read by the handler.
struct TextRanges {
  static constexpr std::size_t kMax = 8;
  std::array<std::uintptr_t, kMax> begin{};
  std::array<std::uintptr_t, kMax> end{};
  std::size_t count = 0;
  const char* unavailable = nullptr;
};

TextRanges ranges;

// Unused where preemption is unavailable (the sanitizers, other platforms).
[[maybe_unused]] void on_quantum(int, siginfo_t* info, void* context) {
  if (info->si_code != SI_TIMER) return;  // not our timer
  const int saved_errno = errno;
  if (Processor* p = Processor::current()) Dispatch::quantum_expired(*p, *static_cast<ucontext_t*>(context));
  errno = saved_errno;
}

void find_ranges() {
#if PRESTO_ASAN || PRESTO_TSAN
  ranges.unavailable = "preemption is off under the sanitizers";
  return;
#elif !defined(__x86_64__) || !defined(__linux__)
  ranges.unavailable = "preemption needs x86-64 Linux";
  return;
#else
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& out = *static_cast<TextRanges*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0 || out.count == TextRanges::kMax) continue;
          out.begin[out.count] = info->dlpi_addr + ph.p_vaddr;
          out.end[out.count] = out.begin[out.count] + ph.p_memsz;
          ++out.count;
        }
        return 1;  // the main program comes first: stop after it
      },
      &ranges);
  if (ranges.count == 0 || QuantumTimer::in_application(reinterpret_cast<const void*>(&on_quantum))) {
    ranges.count = 0;
    ranges.unavailable = "preemption needs the presto library linked as a shared object";
    return;
  }
  struct sigaction sa{};
  sa.sa_sigaction = &on_quantum;
  sigemptyset(&sa.sa_mask);
  // SA_NODEFER: the handler may switch to another presto thread; the signal stays unblocked on
  // this OS thread. SA_RESTART: interrupted system calls go on. Not SA_ONSTACK: the handler must
  // run on the interrupted presto thread's own stack, which it may leave.
  sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
  if (sigaction(kSignal, &sa, nullptr) != 0) ranges.unavailable = "the preemption signal handler could not be installed";
#endif
}

const TextRanges& text_ranges() {
  static std::once_flag once;
  std::call_once(once, find_ranges);
  return ranges;
}

}  // namespace

const char* QuantumTimer::unavailable() noexcept {
  try {
    return text_ranges().unavailable;
  } catch (...) {
    return "preemption could not be set up";
  }
}

bool QuantumTimer::in_application(const void* pc) noexcept {
  const auto a = reinterpret_cast<std::uintptr_t>(pc);
  for (std::size_t i = 0; i < ranges.count; ++i) {
    if (a >= ranges.begin[i] && a < ranges.end[i]) return true;
  }
  return false;
}

QuantumTimer::QuantumTimer(std::chrono::microseconds quantum) {
  if (quantum.count() <= 0 || unavailable() != nullptr) return;
  sigevent event{};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = kSignal;
  event._sigev_un._tid = gettid();  // sigev_notify_thread_id, which this glibc does not name
  if (timer_create(CLOCK_MONOTONIC, &event, &timer_) != 0) return;
  period_.it_interval.tv_sec = static_cast<time_t>(quantum.count() / 1'000'000);
  period_.it_interval.tv_nsec = static_cast<long>(quantum.count() % 1'000'000 * 1000);
  period_.it_value = period_.it_interval;
  armed_ = true;
  resume();
}

QuantumTimer::~QuantumTimer() {
  if (armed_) timer_delete(timer_);
}

void QuantumTimer::pause() noexcept {
  if (!armed_) return;
  const itimerspec off{};
  timer_settime(timer_, 0, &off, nullptr);
}

void QuantumTimer::resume() noexcept {
  if (armed_) timer_settime(timer_, 0, &period_, nullptr);
}

}  // namespace presto::detail
