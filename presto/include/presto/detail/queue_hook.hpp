#pragma once
// Intrusive links for lists of threads: ThreadQueue (ready pools, wait queues). A thread has
// one hook per list it can be on at once.

#include <presto/version.hpp>  // first: the C++20 check

#include <atomic>
#include <cstddef>

namespace presto {
class Thread;
}

namespace presto::detail {

// `list` identifies the list the thread is on (nullptr: none), so membership tests and
// removals are O(1) and never walk a list; `owner` hands the thread back without offsetof.
// `list` is written only by the owner of the list the thread joins or leaves, under that
// list's lock, but it is read without it by a list that asks whether the thread is its own
// (ThreadQueue::remove, for ThreadPool::withdraw): those accesses are relaxed atomics (plain
// moves on every machine PRESTO runs on) so that the unsynchronized read is well-defined.
struct QueueHook {
  QueueHook* prev = nullptr;
  QueueHook* next = nullptr;
  const void* list = nullptr;
  Thread* owner = nullptr;

  const void* current_list() const noexcept {
    return std::atomic_ref<const void*>(const_cast<const void*&>(list)).load(std::memory_order_relaxed);
  }
  void set_list(const void* l) noexcept { std::atomic_ref<const void*>(list).store(l, std::memory_order_relaxed); }
};

struct HookList {
  QueueHook* head = nullptr;
  QueueHook* tail = nullptr;
  std::size_t size = 0;

  void push_back(QueueHook& h) noexcept {
    h.set_list(this);
    h.next = nullptr;
    h.prev = tail;
    if (tail != nullptr) {
      tail->next = &h;
    } else {
      head = &h;
    }
    tail = &h;
    ++size;
  }
  void push_front(QueueHook& h) noexcept {
    h.set_list(this);
    h.prev = nullptr;
    h.next = head;
    if (head != nullptr) {
      head->prev = &h;
    } else {
      tail = &h;
    }
    head = &h;
    ++size;
  }
  // Precondition: size != 0.
  QueueHook& pop_front() noexcept {
    QueueHook& h = *head;
    head = h.next;
    if (head != nullptr) {
      head->prev = nullptr;
    } else {
      tail = nullptr;
    }
    h.next = nullptr;
    h.set_list(nullptr);
    --size;
    return h;
  }
  // Precondition: h.list == this.
  void unlink(QueueHook& h) noexcept {
    if (h.prev != nullptr) {
      h.prev->next = h.next;
    } else {
      head = h.next;
    }
    if (h.next != nullptr) {
      h.next->prev = h.prev;
    } else {
      tail = h.prev;
    }
    h.prev = h.next = nullptr;
    h.set_list(nullptr);
    --size;
  }
};

}  // namespace presto::detail
