#include <presto/local_queue_pool.hpp>

#include <mutex>

#include <presto/errors.hpp>
#include <presto/processor.hpp>
#include <presto/runtime.hpp>

namespace presto {

LocalQueuePool::~LocalQueuePool() = default;

void LocalQueuePool::attach(const Runtime& rt) {
  std::size_t n = rt.processors();
  if (queues_ != nullptr && n == count_) return;
  if (size() != 0) throw UsageError("LocalQueuePool: cannot change the number of queues while threads are queued");
  runtime_ = &rt;
  queues_ = std::make_unique<Queue[]>(n);
  count_ = n;
}

LocalQueuePool::Queue& LocalQueuePool::queue_for_put() noexcept {
  Processor* p = Processor::current();
  if (p != nullptr && &p->runtime() == runtime_) return queues_[p->index()];
  return queues_[round_robin_.fetch_add(1, std::memory_order_relaxed) % count_];
}

void LocalQueuePool::put(Thread& t) {
  if (queues_ == nullptr) throw UsageError("LocalQueuePool used before it was attached to a runtime");
  Queue& q = queue_for_put();
  std::lock_guard lock(q.lock);
  q.threads.push_back(t);
  q.size.fetch_add(1, std::memory_order_relaxed);
}

Thread* LocalQueuePool::take(Queue& q) noexcept {
  if (q.size.load(std::memory_order_relaxed) == 0) return nullptr;  // look before locking
  std::lock_guard lock(q.lock);
  Thread* t = q.threads.pop_front();
  if (t != nullptr) q.size.fetch_sub(1, std::memory_order_relaxed);
  return t;
}

Thread* LocalQueuePool::get(Processor& p) {
  if (queues_ == nullptr) return nullptr;
  const std::size_t home = p.index() % count_;
  for (std::size_t i = 0; i < count_; ++i) {
    if (Thread* t = take(queues_[(home + i) % count_])) return t;
  }
  return nullptr;
}

std::size_t LocalQueuePool::size() const noexcept {
  std::size_t n = 0;
  for (std::size_t i = 0; i < count_; ++i) n += queues_[i].size.load(std::memory_order_relaxed);
  return n;
}

}  // namespace presto
