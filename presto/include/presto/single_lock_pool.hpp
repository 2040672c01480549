#pragma once
// SingleLockPool: one global FIFO ready queue guarded by the runtime's free-list lock
// (Runtime::free_list_lock()). With RuntimeConfig::free_lists = FreeLists::central, one lock
// then guards the ready queue, the control-block free list and the stack free list: the
// "single lock" alternative of Anderson, Lazowska and Levy, the simplest thread management
// and the one with the fewest lock operations per fork (low latency), but every processor
// serializes on that lock (throughput does not grow with processors). Processors look at the
// queue's size before taking the lock, so idle ones do not hammer it.
//
// Made for experiments (benchmarks/thread_management.cpp) more than production: prefer
// LocalQueuePool. The pool must be attached to a runtime before use (the runtime does it).
// Like the paper's package it knows no processor affinity: Thread::affinity() is ignored.
//
// The lock is a variable of the experiment: SingleLockPool(std::make_unique<McsLock>()) guards
// the queue with a Spinlock of the caller's choice (presto::locks has the family) instead of the
// runtime's free-list lock, so every fork, wakeup, yield and dispatch takes that lock. Taken
// inside the dispatch path with preemption off; the lock must follow Spinlock's contract
// (never block). Such a pool may move between runtimes (one at a time).

#include <atomic>
#include <cstddef>
#include <memory>
#include <string_view>

#include <presto/spinlock.hpp>
#include <presto/thread_pool.hpp>
#include <presto/thread_queue.hpp>

namespace presto {

class SingleLockPool final : public ThreadPool {
 public:
  // Guarded by the runtime's free-list lock (Runtime::free_list_lock()).
  SingleLockPool() noexcept;
  // Guarded by `lock` (UsageError if null).
  explicit SingleLockPool(std::unique_ptr<Spinlock> lock);
  ~SingleLockPool() override;
  void put(Thread& t) override;
  Thread* get(Processor& p) override;
  std::size_t size() const noexcept override { return size_.load(std::memory_order_relaxed); }
  std::string_view name() const noexcept override { return "single-lock"; }
  void attach(const Runtime& rt) override;

 private:
  std::unique_ptr<Spinlock> own_;  // the caller's lock, or null
  Spinlock* lock_ = nullptr;       // own_, or the runtime's free-list lock once attached
  ThreadQueue queue_;              // under *lock_
  std::atomic<std::size_t> size_{0};
};

}  // namespace presto
