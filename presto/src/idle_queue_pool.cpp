#include <presto/idle_queue_pool.hpp>

#include <mutex>

#include <presto/errors.hpp>
#include <presto/processor.hpp>
#include <presto/runtime.hpp>
#include <presto/thread.hpp>

namespace presto {

IdleQueuePool::~IdleQueuePool() = default;

void IdleQueuePool::attach(const Runtime& rt) {
  const std::size_t n = rt.processors();
  if (slots_ != nullptr && n == count_) return;
  if (size() != 0) throw UsageError("IdleQueuePool: cannot change the number of processors while threads are queued");
  slots_ = std::make_unique<Slot[]>(n);
  count_ = n;
  std::lock_guard guard(idle_lock_);
  idle_.clear();
  idle_.reserve(n);  // never grows past n: push_back in get() does not allocate
  waiting_.store(0, std::memory_order_relaxed);
}

void IdleQueuePool::put(Thread& t) {
  if (count_ == 0) [[unlikely]] throw UsageError("IdleQueuePool used before it was attached to a runtime");
  if (waiting_.load(std::memory_order_relaxed) != 0) {
    std::lock_guard guard(idle_lock_);
    if (!idle_.empty()) {
      const std::size_t i = idle_.front();
      idle_.erase(idle_.begin());
      waiting_.store(idle_.size(), std::memory_order_relaxed);
      slots_[i].waiting.store(false, std::memory_order_relaxed);
      // The slot is empty: a processor leaves the idle queue only when given a thread.
      handed_.fetch_add(1, std::memory_order_relaxed);
      slots_[i].handed.store(&t, std::memory_order_release);
      return;
    }
  }
  ready_.push_back(t);
}

Thread* IdleQueuePool::take_handed(std::size_t i) noexcept {
  if (slots_[i].handed.load(std::memory_order_relaxed) == nullptr) return nullptr;
  Thread* t = slots_[i].handed.exchange(nullptr, std::memory_order_acquire);
  if (t != nullptr) handed_.fetch_sub(1, std::memory_order_relaxed);
  return t;
}

Thread* IdleQueuePool::get(Processor& p) {
  if (count_ == 0) return nullptr;
  const std::size_t home = p.index() < count_ ? p.index() : 0;
  if (Thread* t = take_handed(home)) return t;
  if (Thread* t = ready_.pop_front()) return t;
  if (handed_.load(std::memory_order_relaxed) != 0) {
    for (std::size_t i = 0; i < count_; ++i) {
      if (Thread* t = take_handed(i)) return t;
    }
  }
  if (slots_[home].waiting.load(std::memory_order_relaxed)) return nullptr;  // queued already
  std::lock_guard guard(idle_lock_);
  // A thread handed here since the first look (possible only if this processor was queued
  // then) is taken now rather than left behind the queueing.
  if (Thread* t = take_handed(home)) return t;
  slots_[home].waiting.store(true, std::memory_order_relaxed);
  idle_.push_back(home);
  waiting_.store(idle_.size(), std::memory_order_relaxed);
  return nullptr;
}

std::size_t IdleQueuePool::size() const noexcept {
  return ready_.size() + handed_.load(std::memory_order_relaxed);
}

}  // namespace presto
