#include <presto/lifo_pool.hpp>

#include <mutex>

#include <presto/thread.hpp>

namespace presto {

void LifoPool::put(Thread& t) {
  std::lock_guard lock(lock_);
  stack_.push_front(t);
  size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // under lock_
}

Thread* LifoPool::get(Processor&) {
  if (size_.load(std::memory_order_relaxed) == 0) return nullptr;
  std::lock_guard lock(lock_);
  Thread* t = stack_.pop_front();
  if (t != nullptr) size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);  // under lock_
  return t;
}

}  // namespace presto
