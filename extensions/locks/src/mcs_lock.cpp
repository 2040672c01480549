#include <presto/locks/mcs_lock.hpp>

namespace presto::locks {

void McsLock::acquire() noexcept {
  QueueNode* n = take_queue_node();
  n->next.store(nullptr, std::memory_order_relaxed);
  n->locked.store(true, std::memory_order_relaxed);
  if (QueueNode* pred = tail_.exchange(n, std::memory_order_acq_rel)) {
    pred->next.store(n, std::memory_order_release);
    SpinWait w;
    while (n->locked.load(std::memory_order_acquire)) w.poll();
  }
  holder_ = n;
}

bool McsLock::try_acquire() noexcept {
  if (tail_.load(std::memory_order_relaxed) != nullptr) return false;
  QueueNode* n = take_queue_node();
  n->next.store(nullptr, std::memory_order_relaxed);
  QueueNode* expected = nullptr;
  if (!tail_.compare_exchange_strong(expected, n, std::memory_order_acq_rel, std::memory_order_relaxed)) {
    give_queue_node(n);
    return false;
  }
  holder_ = n;
  return true;
}

void McsLock::release() noexcept {
  QueueNode* n = holder_;
  QueueNode* succ = n->next.load(std::memory_order_acquire);
  if (succ == nullptr) {
    QueueNode* expected = n;
    if (tail_.compare_exchange_strong(expected, nullptr, std::memory_order_release, std::memory_order_relaxed)) {
      give_queue_node(n);
      return;
    }
    SpinWait w;  // a successor swapped itself in and is about to link itself
    while ((succ = n->next.load(std::memory_order_acquire)) == nullptr) w.poll();
  }
  succ->locked.store(false, std::memory_order_release);
  give_queue_node(n);
}

}  // namespace presto::locks
