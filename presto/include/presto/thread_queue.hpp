#pragma once
// ThreadQueue: an intrusive FIFO/LIFO queue of threads that never allocates. Every Thread has
// one queue link, so a thread is on at most one ThreadQueue at a time: the wait queue of the
// SynchroObject it is blocked on, or the ready queue of a ThreadPool. Custom pools and
// synchronization objects use it to hold threads.
//
// Not synchronized: the owner protects it (a SynchroObject with its spinlock, a pool with its
// own lock). push on a thread that is already on a queue is a UsageError.

#include <cstddef>

#include <presto/detail/queue_hook.hpp>

namespace presto {

class Thread;

class ThreadQueue {
 public:
  ThreadQueue() = default;
  ThreadQueue(const ThreadQueue&) = delete;
  ThreadQueue& operator=(const ThreadQueue&) = delete;
  ~ThreadQueue() = default;

  void push_back(Thread& t);
  void push_front(Thread& t);
  Thread* pop_front() noexcept;  // nullptr when empty
  Thread* pop_back() noexcept;   // nullptr when empty
  bool remove(Thread& t) noexcept;  // false if t is not on this queue
  bool contains(const Thread& t) const noexcept;

  Thread* front() const noexcept { return list_.head != nullptr ? list_.head->owner : nullptr; }
  Thread* back() const noexcept { return list_.tail != nullptr ? list_.tail->owner : nullptr; }
  bool empty() const noexcept { return list_.size == 0; }
  std::size_t size() const noexcept { return list_.size; }

  // Calls f(Thread&) for each thread, front to back. f must not modify the queue.
  template <class F>
  void for_each(F&& f) const {
    for (detail::QueueHook* h = list_.head; h != nullptr; h = h->next) f(*h->owner);
  }

 private:
  detail::HookList list_;
};

}  // namespace presto
