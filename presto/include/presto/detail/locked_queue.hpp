#pragma once
// LockedQueue: a ThreadQueue under its own spinlock, with a size readable without the lock.
// The building block of the FIFO and LIFO pools and the pinned queues (a processor's own queue
// of LocalQueuePool is an OwnedQueue).

#include <atomic>
#include <cstddef>
#include <mutex>

#include <presto/detail/raw_spinlock.hpp>
#include <presto/thread_queue.hpp>

namespace presto::detail {

class LockedQueue {
 public:
  // Inline everywhere: the dispatch path's queue operations are these.
  template <class T = Thread>
  [[gnu::always_inline]] void push_back(T& t) {
    std::lock_guard lock(lock_);
    queue_.push_back(t);
    publish_size();
  }
  template <class T = Thread>
  void push_front(T& t) {
    std::lock_guard lock(lock_);
    queue_.push_front(t);
    publish_size();
  }
  [[gnu::always_inline]] Thread* pop_front() noexcept {
    if (size() == 0) return nullptr;  // look before locking
    std::lock_guard lock(lock_);
    Thread* t = queue_.pop_front();
    publish_size();
    return t;
  }
  Thread* pop_back() noexcept {
    if (size() == 0) return nullptr;
    std::lock_guard lock(lock_);
    Thread* t = queue_.pop_back();
    publish_size();
    return t;
  }
  // Takes `t` out if it is queued here (ThreadPool::withdraw); false if it is not.
  template <class T = Thread>
  bool withdraw(T& t) noexcept {
    if (size() == 0) return false;
    std::lock_guard lock(lock_);
    const bool removed = queue_.remove(t);
    publish_size();
    return removed;
  }
  // Exact while no push or pop is in flight.
  std::size_t size() const noexcept { return size_.load(std::memory_order_relaxed); }

 private:
  void publish_size() noexcept { size_.store(queue_.size(), std::memory_order_relaxed); }  // under lock_

  RawSpinlock lock_;
  ThreadQueue queue_;
  std::atomic<std::size_t> size_{0};
};

}  // namespace presto::detail
