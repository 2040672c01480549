#pragma once
// Semaphore: Dijkstra's counting semaphore. acquire() (P) takes a unit, sleeping while there
// is none; release(n) (V) adds n units, handing them directly to the longest waiters, so a
// woken thread never has to compete for its unit.

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include <presto/synchro_object.hpp>

namespace presto {

class Semaphore : public SynchroObject {
 public:
  explicit Semaphore(std::ptrdiff_t initial = 0, std::string name = {});
  ~Semaphore() noexcept(false) override;

  void acquire();
  bool try_acquire() noexcept;
  bool try_acquire_until(Clock::time_point deadline);
  template <class Rep, class Period>
  bool try_acquire_for(const std::chrono::duration<Rep, Period>& timeout) {
    return try_acquire_until(Clock::now() + std::chrono::ceil<Clock::duration>(timeout));
  }
  // Adds n >= 0 units. UsageError if n < 0.
  void release(std::ptrdiff_t n = 1);
  // Units available now (a snapshot).
  std::ptrdiff_t value() const noexcept;

  std::string_view kind() const noexcept override { return "semaphore"; }

 private:
  std::ptrdiff_t count_;  // guarded by the spinlock
};

}  // namespace presto
