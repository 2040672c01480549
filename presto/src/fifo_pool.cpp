#include <presto/fifo_pool.hpp>

#include <mutex>

namespace presto {

void FifoPool::put(Thread& t) {
  std::lock_guard lock(lock_);
  queue_.push_back(t);
  size_.fetch_add(1, std::memory_order_relaxed);
}

Thread* FifoPool::get(Processor&) {
  if (size_.load(std::memory_order_relaxed) == 0) return nullptr;  // look before locking
  std::lock_guard lock(lock_);
  Thread* t = queue_.pop_front();
  if (t != nullptr) size_.fetch_sub(1, std::memory_order_relaxed);
  return t;
}

}  // namespace presto
