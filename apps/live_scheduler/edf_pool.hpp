// EdfPool and LoggingScheduler: an earliest-deadline-first discipline and a scheduler that
// records its decisions, written the way a user writes them: from public headers only.
// Used by presto-live-scheduler, the user's guide (chapter 4) and the sched tests.
//
// EdfPool: the ready thread whose Thread::deadline() is earliest runs first; threads without
// a deadline run after every thread with one; equal deadlines run in the order they became
// ready. The deadline is read in put(), so a thread's set_deadline() takes effect the next
// time it becomes ready. A binary heap under a presto::Spinlock: O(log n) a put or get, no
// allocation once the heap has grown. It gives any thread to any processor (it does not
// honour Thread::affinity(), so ThreadPool::has_work_for's default fits it).
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

class EdfPool final : public presto::ThreadPool {
 public:
  EdfPool() { heap_.reserve(1024); }

  void put(presto::Thread& t) override {
    const auto d = t.deadline();
    const Key key = d ? d->time_since_epoch().count() : std::numeric_limits<Key>::max();
    std::scoped_lock guard{lock_};
    heap_.push_back(Entry{key, sequence_++, &t});
    std::push_heap(heap_.begin(), heap_.end(), later);
    size_.store(heap_.size(), std::memory_order_relaxed);
  }

  presto::Thread* get(presto::Processor&) override {
    if (size_.load(std::memory_order_relaxed) == 0) return nullptr;  // cheap check, no lock
    std::scoped_lock guard{lock_};
    if (heap_.empty()) return nullptr;
    std::pop_heap(heap_.begin(), heap_.end(), later);
    presto::Thread* t = heap_.back().thread;
    heap_.pop_back();
    size_.store(heap_.size(), std::memory_order_relaxed);
    return t;
  }

  std::size_t size() const noexcept override { return size_.load(std::memory_order_relaxed); }
  std::string_view name() const noexcept override { return "earliest-deadline-first"; }

 private:
  using Key = presto::Clock::rep;
  struct Entry {
    Key deadline;
    std::uint64_t sequence;
    presto::Thread* thread;
  };
  // std heap order: "a before b in the comparator" means b is served first.
  static bool later(const Entry& a, const Entry& b) noexcept {
    if (a.deadline != b.deadline) return a.deadline > b.deadline;
    return a.sequence > b.sequence;
  }

  presto::Spinlock lock_;
  std::vector<Entry> heap_;
  std::uint64_t sequence_ = 0;
  std::atomic<std::size_t> size_{0};
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
