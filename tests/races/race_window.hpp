#pragma once
// RaceWindow: holds the first arrival at an armed race point (presto/detail/race_point.hpp)
// until another processor has taken the step the point waits for, so that a test meets a race
// window in every run. For the races suite, which is built only where the library has race
// points (-Drace_points=true). The hook is a plain function, so there is one window for the
// process: `race_window`, installed by a RaceWindow::Installed for the length of a test.

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

#include <catch2/catch.hpp>
#include <presto/detail/race_point.hpp>

#include "random_delays.hpp"

namespace presto::test {

class RaceWindow {
 public:
  // How long a held arrival waits for the step before the round fails (timed_out()).
  static constexpr auto kPatience = std::chrono::seconds(20);

  struct Installed {
    Installed() { REQUIRE(detail::set_race_point_hook(&RaceWindow::hook)); }
    ~Installed() { restore_session_hook(); }  // the session's delays, if any (random_delays.hpp)
    Installed(const Installed&) = delete;
    Installed& operator=(const Installed&) = delete;
  };

  // Before a round: nothing armed, nothing seen.
  void reset() {
    armed_.store(false);
    held_.store(false);
    met_.store(false);
    released_.store(false);
    timed_out_.store(false);
  }
  // The next arrival at a point whose name starts with `point` is held until `taken()` holds.
  // `taken` is polled on the held OS thread, inside the runtime: it may read atomics and
  // counters (LocalQueuePool::served_steals()), never fork, join, wait, yield or lock
  // (presto/detail/race_point.hpp).
  void arm(const char* point, std::function<bool()> taken) {
    taken_ = std::move(taken);
    point_.store(point, std::memory_order_relaxed);
    armed_.store(true, std::memory_order_release);
  }

  bool held() const noexcept { return held_.load(std::memory_order_acquire); }
  // The arrival came before the step was taken: the window was open when it got there.
  bool met() const noexcept { return met_.load(std::memory_order_acquire); }
  // The held thread has been let go (after the step, or on timing out).
  bool released() const noexcept { return released_.load(std::memory_order_acquire); }
  bool timed_out() const noexcept { return timed_out_.load(std::memory_order_acquire); }

 private:
  static void hook(const char* point) noexcept;

  std::function<bool()> taken_;  // written before armed_ is set, read after it is taken
  std::atomic<const char*> point_{""};
  std::atomic<bool> armed_{false};
  std::atomic<bool> held_{false};
  std::atomic<bool> met_{false};
  std::atomic<bool> released_{false};
  std::atomic<bool> timed_out_{false};
};

inline RaceWindow race_window;

inline void RaceWindow::hook(const char* point) noexcept {
  RaceWindow& w = race_window;
  if (!w.armed_.load(std::memory_order_acquire)) return;
  const char* armed_point = w.point_.load(std::memory_order_relaxed);
  if (std::strncmp(point, armed_point, std::strlen(armed_point)) != 0) return;
  bool armed = true;
  if (!w.armed_.compare_exchange_strong(armed, false, std::memory_order_acq_rel)) return;  // another took it
  w.met_.store(!w.taken_(), std::memory_order_relaxed);
  w.held_.store(true, std::memory_order_release);
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (!w.taken_()) {
    if (std::chrono::steady_clock::now() > deadline) {
      w.timed_out_.store(true, std::memory_order_relaxed);
      break;
    }
    std::this_thread::yield();
  }
  w.released_.store(true, std::memory_order_release);
}

}  // namespace presto::test
