#include <presto/lifo_pool.hpp>

#include <mutex>

namespace presto {

void LifoPool::put(Thread& t) {
  std::lock_guard lock(lock_);
  stack_.push_front(t);
  size_.fetch_add(1, std::memory_order_relaxed);
}

Thread* LifoPool::get(Processor&) {
  if (size_.load(std::memory_order_relaxed) == 0) return nullptr;
  std::lock_guard lock(lock_);
  Thread* t = stack_.pop_front();
  if (t != nullptr) size_.fetch_sub(1, std::memory_order_relaxed);
  return t;
}

}  // namespace presto
