#include "timer_service.hpp"

#include <utility>

#include <presto/thread.hpp>

#include "futex.hpp"
#include "race_point.hpp"

namespace presto::detail {

void TimerService::start() {
  if (!thread_.idle()) return;  // still in its loop: the last run armed no timer
  stop_.store(false, std::memory_order_relaxed);
  thread_.start();
}

void TimerService::stop() noexcept {
  lock_.lock();
  const bool armed = std::exchange(armed_, false);
  lock_.unlock();
  // Unarmed, the loop sleeps on an empty heap, and nothing can add to it before the next run.
  if (armed) end_loop();
}

void TimerService::end_loop() noexcept {
  if (thread_.idle()) return;
  // Both under the lock, in which the loop reads them: outside it, the loop could read stop_
  // before the store and wake_ after the increment, then sleep on the new value with nobody left
  // to wake it (a runtime's destructor hung so, once, under AddressSanitizer).
  lock_.lock();
  stop_.store(true, std::memory_order_release);
  wake_.fetch_add(1, std::memory_order_release);
  lock_.unlock();
  futex_wake_all(wake_);
  thread_.wait_idle();
}

void TimerService::place(std::size_t i, Thread* t) noexcept {
  heap_[i] = t;
  t->timer_index_.store(i, std::memory_order_relaxed);
}

void TimerService::sift_up(std::size_t i) noexcept {
  Thread* t = heap_[i];
  while (i > 0) {
    std::size_t parent = (i - 1) / 2;
    if (heap_[parent]->deadline_ <= t->deadline_) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, t);
}

void TimerService::sift_down(std::size_t i) noexcept {
  Thread* t = heap_[i];
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && heap_[child + 1]->deadline_ < heap_[child]->deadline_) ++child;
    if (t->deadline_ <= heap_[child]->deadline_) break;
    place(i, heap_[child]);
    i = child;
  }
  place(i, t);
}

void TimerService::erase(Thread& t) noexcept {
  std::size_t i = t.timer_index_.load(std::memory_order_relaxed);
  Thread* last = heap_.back();
  heap_.pop_back();
  t.timer_index_.store(Thread::kNoTimer, std::memory_order_relaxed);
  if (last != &t) {
    place(i, last);
    sift_down(i);
    sift_up(last->timer_index_.load(std::memory_order_relaxed));
  }
}

void TimerService::add(Thread& t, Clock::time_point deadline) {
  lock_.lock();
  try {
    heap_.push_back(&t);
  } catch (...) {
    lock_.unlock();
    throw;
  }
  pending_.fetch_add(1, std::memory_order_seq_cst);
  armed_ = true;
  t.deadline_ = deadline;
  sift_up(heap_.size() - 1);
  const bool earliest = heap_.front() == &t;
  if (earliest) wake_.fetch_add(1, std::memory_order_release);
  lock_.unlock();
  if (earliest) futex_wake_one(wake_);
}

void TimerService::cancel(Thread& t) noexcept {
  lock_.lock();
  // No poke when this empties the heap: a cancelled timer's thread is being woken, and the
  // processor that runs it will check for halting when it next idles.
  if (t.timer_index_.load(std::memory_order_relaxed) != Thread::kNoTimer) {
    erase(t);
    pending_.fetch_sub(1, std::memory_order_seq_cst);
  }
  lock_.unlock();
}

void TimerService::loop() noexcept {
  Backoff backoff;
  for (;;) {
    lock_.lock();
    if (stop_.load(std::memory_order_acquire)) {
      lock_.unlock();
      return;
    }
    const std::uint32_t seen = wake_.load(std::memory_order_acquire);
    if (heap_.empty()) {
      lock_.unlock();
      futex_wait(wake_, seen);
      continue;
    }
    Thread* t = heap_.front();
    if (t->deadline_ > Clock::now()) {
      Clock::time_point deadline = t->deadline_;
      lock_.unlock();
      PRESTO_RACE_POINT("TimerService::loop: the earliest deadline read, not yet asleep till it");
      futex_wait(wake_, seen, deadline);
      continue;
    }
    // Due. Its object's spinlock comes second here, so only try it (lock order is object ->
    // timers everywhere else); the invariant guarantees t is still queued on it.
    SynchroObject& so = *t->waiting_on_;
    if (!so.spin_try_lock()) {
      lock_.unlock();
      backoff.pause();
      continue;
    }
    backoff.reset();
    erase(*t);
    so.waiting_.remove(*t);
    t->timed_out_ = true;
    lock_.unlock();
    PRESTO_RACE_POINT("TimerService::loop: a waiter timed out and taken off its object, not yet woken");
    try {
      t->wakeup(so);  // virtual: instrumented threads see their timeouts
    } catch (...) {
      // wakeup of a thread we just dequeued cannot fail unless a subclass throws; it would
      // stay blocked and show up in the deadlock report.
    }
    so.spin_unlock();
    // Only now: until here a wake-up was coming, so the system could not halt.
    if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1) on_drained_();
  }
}

}  // namespace presto::detail
