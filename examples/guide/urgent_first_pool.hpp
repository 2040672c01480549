// Guide, chapter 4: a ThreadPool of our own. Used by custom_pool.cpp and pool_conformance.cpp.
//
// UrgentFirstPool: two FIFO queues. A thread whose priority() is above zero when it becomes
// ready goes to the urgent queue, every other thread to the normal one; get() serves the
// urgent queue first. One Spinlock guards both queues.
//
// The ThreadPool contract (thread_pool.hpp) shapes every line:
// - put/get are called concurrently from every processor (put also from OS threads), inside
//   the dispatch path: the pool synchronizes itself, with a Spinlock, never a blocking lock;
// - no allocation on the common path: ThreadQueue links threads through their own hook;
// - the pool reads attributes (priority()) but never changes a thread's state, and gives back
//   every thread it was given exactly once;
// - size() is cheap (read on every idle check) and exact when nothing is in flight;
// - no static state: two runtimes may each have one.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string_view>

#include <presto/presto.hpp>

class UrgentFirstPool final : public presto::ThreadPool {
 public:
  void put(presto::Thread& t) override {
    std::scoped_lock guard{lock_};
    (t.priority() > 0 ? urgent_ : normal_).push_back(t);
    size_.fetch_add(1, std::memory_order_relaxed);
  }

  presto::Thread* get(presto::Processor&) override {
    if (size_.load(std::memory_order_relaxed) == 0) return nullptr;  // cheap check, no lock
    std::scoped_lock guard{lock_};
    presto::Thread* t = urgent_.pop_front();
    if (t == nullptr) t = normal_.pop_front();
    if (t != nullptr) size_.fetch_sub(1, std::memory_order_relaxed);
    return t;
  }

  std::size_t size() const noexcept override { return size_.load(std::memory_order_relaxed); }
  std::string_view name() const noexcept override { return "urgent-first"; }

 private:
  presto::Spinlock lock_;
  presto::ThreadQueue urgent_;
  presto::ThreadQueue normal_;
  std::atomic<std::size_t> size_{0};
};
