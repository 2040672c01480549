#pragma once
// TimerService: the deadlines of sleeping threads (sleep_for, timed waits), kept in a binary
// heap and served by one OS thread per runtime (a HostThread, made at the first run and kept),
// which sleeps on a futex until the earliest deadline and then wakes the thread. A run that
// arms no timer leaves that thread asleep in its loop and costs it nothing: only a run that
// armed one makes the thread leave its loop at the end, so that it touches nothing of the run
// once the run has ended. Processors never poll for timers, so an idle
// runtime uses no CPU even while timers are pending.
//
// Invariant: a thread has a timer entry exactly while it waits, with a deadline, in the queue
// of a SynchroObject. Entries are added and removed under that object's spinlock (then the
// service's own lock), so a waker that recall()s the thread cancels its timer, and the timer
// thread, which takes the object's spinlock with try_lock while holding its own lock, always
// finds the thread still queued.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include <presto/detail/raw_spinlock.hpp>
#include <presto/synchro_object.hpp>

#include "host_thread.hpp"

namespace presto {
class Thread;
}

namespace presto::detail {

class TimerService {
 public:
  // `on_drained` runs on the timer thread each time the last pending timer has fired.
  explicit TimerService(std::function<void()> on_drained) : on_drained_(std::move(on_drained)) {
    heap_.reserve(1024);
  }
  TimerService(const TimerService&) = delete;
  TimerService& operator=(const TimerService&) = delete;
  ~TimerService() { end_loop(); }

  // A run begins: serve its timers, on the timer thread (made by the first start(); throws
  // std::system_error if it cannot be). Called by the run's caller, as stop() is.
  void start();
  // A run has ended (its processors have stopped): returns once the timer thread can no longer
  // touch a thread of the run, so that its survivors can be abandoned (their timers cancelled)
  // before the next start().
  void stop() noexcept;
  // Called with the spinlock of the object `t` waits on held.
  void add(Thread& t, Clock::time_point deadline);
  void cancel(Thread& t) noexcept;
  // Timers armed or firing: while non-zero, a wake-up can still come.
  std::size_t pending() const noexcept { return pending_.load(std::memory_order_acquire); }

 private:
  void loop() noexcept;
  void end_loop() noexcept;  // the loop returns and the thread waits for the next start()
  void sift_up(std::size_t i) noexcept;
  void sift_down(std::size_t i) noexcept;
  void erase(Thread& t) noexcept;
  void place(std::size_t i, Thread* t) noexcept;

  std::function<void()> on_drained_;
  RawSpinlock lock_;
  std::vector<Thread*> heap_;
  std::atomic<std::uint32_t> wake_{0};
  std::atomic<std::size_t> pending_{0};
  std::atomic<bool> stop_{false};
  bool armed_ = false;    // a timer was added since the last stop(); guarded by lock_
  HostThread thread_{"presto-timers", [this] { loop(); }};  // last: it ends first
};

}  // namespace presto::detail
