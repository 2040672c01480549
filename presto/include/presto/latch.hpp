#pragma once
// Latch: a single-use count-down (std::latch). Threads wait() until count_down() has brought
// the count to zero; from then on wait() returns at once, for ever.
//
//   presto::Latch ready{workers, "workers ready"};
//   ... each worker: set up, then ready.count_down(); ...
//   ready.wait();                  // every worker has set up
//
// count_down(n) below zero raises UsageError naming the latch and the thread (std::latch makes
// it undefined behaviour). wait() has timed (wait_until, wait_for: false if the deadline
// passed first) and cancellable (wait(token): presto::Cancelled) forms. WaitGroup
// (wait_group.hpp) is the reusable, Go-style variant that can also count up.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include <presto/stop_token.hpp>
#include <presto/synchro_object.hpp>

namespace presto {

class Latch : public SynchroObject {
 public:
  // UsageError if expected < 0.
  explicit Latch(std::ptrdiff_t expected, std::string name = {});
  ~Latch() noexcept(false) override;

  // Decrements the count by n >= 0; at zero, wakes every waiter.
  void count_down(std::ptrdiff_t n = 1);
  // True once the count is zero.
  bool try_wait() const noexcept { return count_.load(std::memory_order_acquire) == 0; }
  void wait();
  void wait(const StopToken& token);
  bool wait_until(Clock::time_point deadline);
  template <class Rep, class Period>
  bool wait_for(const std::chrono::duration<Rep, Period>& timeout) {
    return wait_until(Clock::now() + std::chrono::ceil<Clock::duration>(timeout));
  }
  // count_down(n), then wait().
  void arrive_and_wait(std::ptrdiff_t n = 1);

  // The count now (a snapshot).
  std::ptrdiff_t count() const noexcept { return count_.load(std::memory_order_acquire); }
  std::string_view kind() const noexcept override { return "latch"; }

 protected:
  // Adds n (any sign) to the count; at zero wakes every waiter. UsageError, naming `operation`,
  // if the count would go below zero.
  void add(std::ptrdiff_t n, const char* operation);

 private:
  // Waits until the count is zero: true; false if the wait gave up.
  WaitStatus wait_on(const Clock::time_point* deadline, const StopToken& token);

  // Changed under the spinlock; read without it by try_wait (hence atomic).
  std::atomic<std::ptrdiff_t> count_;
};

}  // namespace presto
