#include <presto/thread_queue.hpp>

#include <presto/errors.hpp>
#include <presto/thread.hpp>

namespace presto {

void ThreadQueue::push_back(Thread& t) {
  if (t.queue_hook_.list != nullptr) throw UsageError(t.describe() + " is already on a queue");
  list_.push_back(t.queue_hook_);
}

void ThreadQueue::push_front(Thread& t) {
  if (t.queue_hook_.list != nullptr) throw UsageError(t.describe() + " is already on a queue");
  list_.push_front(t.queue_hook_);
}

Thread* ThreadQueue::pop_front() noexcept {
  detail::QueueHook* h = list_.head;
  if (h == nullptr) return nullptr;
  list_.unlink(*h);
  return h->owner;
}

Thread* ThreadQueue::pop_back() noexcept {
  detail::QueueHook* h = list_.tail;
  if (h == nullptr) return nullptr;
  list_.unlink(*h);
  return h->owner;
}

bool ThreadQueue::remove(Thread& t) noexcept {
  if (t.queue_hook_.list != &list_) return false;
  list_.unlink(t.queue_hook_);
  return true;
}

bool ThreadQueue::contains(const Thread& t) const noexcept { return t.queue_hook_.list == &list_; }

}  // namespace presto
