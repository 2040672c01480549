#include <presto/fifo_pool.hpp>

#include <mutex>

#include <presto/thread.hpp>

namespace presto {

void FifoPool::put(Thread& t) {
  std::lock_guard lock(lock_);
  queue_.push_back(t);
  size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // under lock_
}

Thread* FifoPool::get(Processor&) {
  if (size_.load(std::memory_order_relaxed) == 0) return nullptr;  // look before locking
  std::lock_guard lock(lock_);
  Thread* t = queue_.pop_front();
  if (t != nullptr) size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);  // under lock_
  return t;
}

}  // namespace presto
