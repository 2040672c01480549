#pragma once
// Spin-wait helpers shared by every busy-waiting loop in PRESTO.

#include <thread>

namespace presto::detail {

// One spin-wait hint to the CPU (x86 `pause`, ARM `yield`): lowers power and frees the
// sibling hyper-thread while a loop polls a shared word.
inline void relax_cpu() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#endif
}

// Exponential backoff (Anderson's "Ethernet-style" delay): 1, 2, 4, ... pauses per round, then
// sched_yield once the delay would exceed 2^kMaxRound pauses, because a processor may share a
// core with the lock holder (more processors than cores) and spinning would only delay it.
class Backoff {
 public:
  void pause() noexcept {
    if (round_ < kMaxRound) {
      for (unsigned i = 0, n = 1u << round_; i < n; ++i) relax_cpu();
      ++round_;
    } else {
      std::this_thread::yield();
    }
  }
  void reset() noexcept { round_ = 0; }

 private:
  static constexpr unsigned kMaxRound = 10;  // 1,023 pauses before yielding, ~10-40 us on x86
  unsigned round_ = 0;
};

}  // namespace presto::detail
