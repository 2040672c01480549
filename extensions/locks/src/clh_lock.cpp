#include <presto/locks/clh_lock.hpp>

namespace presto::locks {

ClhLock::ClhLock() {
  QueueNode* n = take_queue_node();  // unlocked: the first acquirer's predecessor
  n->locked.store(false, std::memory_order_relaxed);
  tail_.store(n, std::memory_order_relaxed);
}

ClhLock::~ClhLock() { give_queue_node(tail_.load(std::memory_order_relaxed)); }

void ClhLock::wait_for(QueueNode* pred, QueueNode* mine) noexcept {
  SpinWait w;
  while (pred->locked.load(std::memory_order_acquire)) w.poll();
  holder_ = mine;
  pred_ = pred;
}

void ClhLock::acquire() noexcept {
  QueueNode* n = take_queue_node();
  n->locked.store(true, std::memory_order_relaxed);
  wait_for(tail_.exchange(n, std::memory_order_acq_rel), n);
}

bool ClhLock::try_acquire() noexcept {
  QueueNode* t = tail_.load(std::memory_order_acquire);
  if (t->locked.load(std::memory_order_acquire)) return false;
  QueueNode* n = take_queue_node();
  n->locked.store(true, std::memory_order_relaxed);
  if (!tail_.compare_exchange_strong(t, n, std::memory_order_acq_rel, std::memory_order_acquire)) {
    give_queue_node(n);
    return false;
  }
  wait_for(t, n);  // t was free; it is held again only in the recycling race of the header
  return true;
}

void ClhLock::release() noexcept {
  QueueNode* pred = pred_;
  holder_->locked.store(false, std::memory_order_release);
  give_queue_node(pred);
}

}  // namespace presto::locks
