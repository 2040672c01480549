#pragma once
// SpinWait: how every lock of presto::locks polls a word it waits on. It pauses the CPU
// (relax_cpu) and, after kPolitePolls polls, yields the OS thread on every further poll: when
// processors outnumber cores (a multiprogrammed machine) the thread that must move (the holder,
// or the waiter next in a queue) may be descheduled by the OS, and spinning on would only keep
// it off its core. On a machine with a core per processor the yield is never reached in a
// critical section shorter than ~10 us.
//
// A header of this extension's own (not presto/detail), so the extension needs only the public
// core headers.

#include <thread>

namespace presto::locks {

// One spin-wait hint to the CPU (x86 `pause`, ARM `yield`). The same as presto::detail's, which
// is not part of the core's contract (detail/), so the extension keeps its own five lines.
inline void relax_cpu() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#endif
}

// Pauses `n` times: the delay of the backoff locks.
inline void delay(unsigned n) noexcept {
  for (unsigned i = 0; i < n; ++i) relax_cpu();
}

class SpinWait {
 public:
  // About 10-40 us of pauses on a 2020s x86 core before the first yield.
  static constexpr unsigned kPolitePolls = 1024;
  void poll() noexcept {
    if (polls_ < kPolitePolls) {
      ++polls_;
      relax_cpu();
    } else {
      std::this_thread::yield();
    }
  }

 private:
  unsigned polls_ = 0;
};

// The size of the cache line that the queue locks give each waiter's flag, so that waiters spin
// on lines of their own (64 bytes on x86-64 and most ARM cores).
inline constexpr std::size_t kCacheLine = 64;

}  // namespace presto::locks
