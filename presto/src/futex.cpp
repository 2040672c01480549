#include "futex.hpp"

#include <climits>
#include <ctime>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace presto::detail {

namespace {
long futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t value, const timespec* timeout) {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op | FUTEX_PRIVATE_FLAG, value,
                 timeout, nullptr, 0);
}
}  // namespace

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                std::optional<Clock::time_point> deadline) noexcept {
  if (!deadline) {
    futex(word, FUTEX_WAIT, expected, nullptr);
    return;
  }
  auto left = *deadline - Clock::now();
  if (left <= Clock::duration::zero()) return;
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
  timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  futex(word, FUTEX_WAIT, expected, &ts);  // relative timeout, on CLOCK_MONOTONIC like Clock
}

void futex_wake_one(std::atomic<std::uint32_t>& word) noexcept { futex(word, FUTEX_WAKE, 1, nullptr); }

void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept { futex(word, FUTEX_WAKE, INT_MAX, nullptr); }

}  // namespace presto::detail
