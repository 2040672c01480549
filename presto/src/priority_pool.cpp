#include <presto/priority_pool.hpp>

#include <algorithm>
#include <mutex>

#include <presto/runtime.hpp>
#include <presto/thread.hpp>

namespace presto {

bool PriorityPool::before(const Entry& a, const Entry& b) noexcept {
  // std heap order: "a is less than b" means b is served first.
  if (a.priority != b.priority) return a.priority < b.priority;
  return a.sequence > b.sequence;
}

void PriorityPool::attach(const Runtime& rt) { pinned_.attach(rt.processors()); }

void PriorityPool::put(Thread& t) {
  if (pinned_.put(t)) return;
  std::lock_guard lock(lock_);
  heap_.push_back(Entry{t.priority(), sequence_++, &t});
  std::push_heap(heap_.begin(), heap_.end(), &PriorityPool::before);
  size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // under lock_
}

Thread* PriorityPool::get(Processor& p) {
  if (Thread* t = pinned_.get(p)) return t;
  if (size_.load(std::memory_order_relaxed) == 0) return nullptr;
  std::lock_guard lock(lock_);
  if (heap_.empty()) return nullptr;
  std::pop_heap(heap_.begin(), heap_.end(), &PriorityPool::before);
  Thread* t = heap_.back().thread;
  heap_.pop_back();
  size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);  // under lock_
  return t;
}

}  // namespace presto
