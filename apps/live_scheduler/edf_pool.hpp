// EdfPool and LoggingScheduler: an earliest-deadline-first discipline and a scheduler that
// records its decisions, written the way a user writes them: from public headers only.
// Used by presto-live-scheduler, the user's guide (chapter 4) and the sched tests.
//
// EdfPool: the ready thread whose Thread::deadline() is earliest runs first; threads without
// a deadline run after every thread with one; equal deadlines run in the order they became
// ready. The deadline is read in put(), so a thread's set_deadline() takes effect the next
// time it becomes ready. A HeapPool (heap_pool.hpp) keyed by the deadline.
//
// LoggingScheduler: the default decisions (the pool's put and get), plus a record of every
// dispatch: the ids of the threads in the order processors took them, up to a capacity
// reserved in advance (next() runs in the dispatch path: it must not allocate). A Spinlock
// makes the decisions one at a time, so that the log is exact; it serializes dispatching,
// which is the price of the record.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <presto/presto.hpp>

#include "heap_pool.hpp"

// The deadline as a number: threads without one after every thread with one.
struct DeadlineKey {
  presto::Clock::rep operator()(const presto::Thread& t) const noexcept {
    const auto d = t.deadline();
    return d ? d->time_since_epoch().count() : std::numeric_limits<presto::Clock::rep>::max();
  }
};

class EdfPool final : public HeapPool<DeadlineKey> {
 public:
  EdfPool() : HeapPool("earliest-deadline-first") {}
};

class LoggingScheduler final : public presto::Scheduler {
 public:
  explicit LoggingScheduler(std::unique_ptr<presto::ThreadPool> pool, std::size_t capacity = 4096)
      : presto::Scheduler(std::move(pool)), log_(capacity) {}

  presto::Thread* next(presto::Processor& p) override {
    std::scoped_lock guard{lock_};  // one decision at a time: the log's order is the dispatch order
    presto::Thread* t = presto::Scheduler::next(p);
    if (t != nullptr) {
      if (count_ < log_.size()) log_[count_] = t->id();
      ++count_;
    }
    return t;
  }
  std::string_view name() const noexcept override { return "logging"; }

  // The ids of the threads dispatched so far, oldest first (at most the capacity).
  std::vector<std::uint64_t> dispatched() const {
    std::scoped_lock guard{lock_};
    return {log_.begin(), log_.begin() + static_cast<std::ptrdiff_t>(std::min(count_, log_.size()))};
  }
  // Every decision that dispatched a thread, logged or not.
  std::size_t decisions() const {
    std::scoped_lock guard{lock_};
    return count_;
  }

 private:
  mutable presto::Spinlock lock_;
  std::vector<std::uint64_t> log_;
  std::size_t count_ = 0;
};
