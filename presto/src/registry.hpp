#pragma once
// Registry: a list of the live threads started on one processor (or from OS threads), so the
// runtime can report every blocked thread, abandon the survivors of a failed run, and let
// debuggers list threads, without a global lock on the thread-start path.

#include <cstddef>

#include <presto/detail/queue_hook.hpp>
#include <presto/detail/raw_spinlock.hpp>

namespace presto::detail {

class Registry {
 public:
  void add(Thread& t) noexcept;
  void remove(Thread& t) noexcept;
  std::size_t size() const noexcept;
  // Calls f(Thread&) for each thread, under the registry's lock.
  template <class F>
  void for_each(F&& f) {
    lock_.lock();
    for (QueueHook* h = list_.head; h != nullptr;) {
      QueueHook* next = h->next;  // f may not remove, but may inspect freely
      f(*h->owner);
      h = next;
    }
    lock_.unlock();
  }

 private:
  mutable RawSpinlock lock_;
  HookList list_;
};

}  // namespace presto::detail
