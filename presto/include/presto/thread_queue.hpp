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
namespace detail {
class OwnedQueue;
}

class ThreadQueue {
 public:
  ThreadQueue() = default;
  ThreadQueue(const ThreadQueue&) = delete;
  ThreadQueue& operator=(const ThreadQueue&) = delete;
  ~ThreadQueue() = default;

  // The operations that take a thread are templates only so that they can be defined here,
  // before Thread is; call them with any Thread (or subclass) object.
  template <class T = Thread>
  [[gnu::always_inline]] void push_back(T& t) {  // inline: every ready queue's push is this
    list_.push_back(link(t));
  }
  template <class T = Thread>
  [[gnu::always_inline]] void push_front(T& t) {
    list_.push_front(link(t));
  }
  Thread* pop_front() noexcept { return list_.head != nullptr ? list_.pop_front().owner : nullptr; }
  Thread* pop_back() noexcept { return list_.tail != nullptr ? unlink_owner(*list_.tail) : nullptr; }
  // false if t is not on this queue
  template <class T = Thread>
  bool remove(T& t) noexcept {
    detail::QueueHook& h = hook(t);
    if (h.current_list() != &list_) return false;
    list_.unlink(h);
    return true;
  }
  template <class T = Thread>
  bool contains(const T& t) const noexcept {
    return hook(const_cast<T&>(t)).current_list() == &list_;
  }

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
  friend class detail::OwnedQueue;  // its ring keeps the same rule for threads already queued

  template <class T>
  static detail::QueueHook& hook(T& t) noexcept {
    return t.queue_hook_;  // T is Thread or derives from it; ThreadQueue is Thread's friend
  }
  template <class T>
  static detail::QueueHook& link(T& t) {
    detail::QueueHook& h = hook(t);
    if (h.list != nullptr) throw_already_queued(*h.owner);
    return h;
  }
  Thread* unlink_owner(detail::QueueHook& h) noexcept {
    list_.unlink(h);
    return h.owner;
  }
  [[noreturn]] static void throw_already_queued(const Thread& t);

  detail::HookList list_;
};

}  // namespace presto
