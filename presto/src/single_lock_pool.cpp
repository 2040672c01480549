#include <presto/single_lock_pool.hpp>

#include <mutex>

#include <presto/errors.hpp>
#include <presto/runtime.hpp>
#include <presto/spinlock.hpp>
#include <presto/thread.hpp>

namespace presto {

SingleLockPool::SingleLockPool() noexcept = default;

SingleLockPool::SingleLockPool(std::unique_ptr<Spinlock> lock) : own_(std::move(lock)), lock_(own_.get()) {
  if (!own_) throw UsageError("SingleLockPool: given a null lock (std::unique_ptr<Spinlock>)");
}

SingleLockPool::~SingleLockPool() = default;

void SingleLockPool::attach(const Runtime& rt) {
  if (own_) return;  // its own lock: no tie to a runtime
  if (lock_ != nullptr && lock_ != &rt.free_list_lock()) {
    throw UsageError("SingleLockPool: already attached to another runtime; make one pool per runtime");
  }
  lock_ = &rt.free_list_lock();
}

void SingleLockPool::put(Thread& t) {
  if (lock_ == nullptr) [[unlikely]] throw UsageError("SingleLockPool used before it was attached to a runtime");
  std::lock_guard guard(*lock_);
  queue_.push_back(t);
  size_.store(queue_.size(), std::memory_order_relaxed);
}

Thread* SingleLockPool::get(Processor&) {
  if (size_.load(std::memory_order_relaxed) == 0) return nullptr;  // look before locking
  std::lock_guard guard(*lock_);
  Thread* t = queue_.pop_front();
  size_.store(queue_.size(), std::memory_order_relaxed);
  return t;
}

}  // namespace presto
