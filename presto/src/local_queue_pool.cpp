#include <presto/local_queue_pool.hpp>

#include <presto/errors.hpp>
#include <presto/processor.hpp>
#include <presto/runtime.hpp>
#include <presto/thread.hpp>

namespace presto {

LocalQueuePool::~LocalQueuePool() = default;

void LocalQueuePool::attach(const Runtime& rt) {
  std::size_t n = rt.processors();
  if (queues_ != nullptr && n == count_) return;
  if (size() != 0) throw UsageError("LocalQueuePool: cannot change the number of queues while threads are queued");
  pinned_.attach(n);
  runtime_ = &rt;
  queues_ = std::make_unique<Queue[]>(n);
  count_ = n;
}

void LocalQueuePool::put(Thread& t) {
  if (count_ == 0) [[unlikely]] throw UsageError("LocalQueuePool used before it was attached to a runtime");
  if (pinned_.put(t)) return;
  Processor* p = Processor::current();
  std::size_t i = 0;
  if (p != nullptr && &p->runtime() == runtime_ && p->index() < count_) [[likely]] {
    i = p->index();
  } else {
    i = round_robin_.fetch_add(1, std::memory_order_relaxed) % count_;
  }
  queues_[i].push_back(t);
}

Thread* LocalQueuePool::get(Processor& p) {
  if (count_ == 0) return nullptr;
  if (Thread* t = pinned_.get(p)) return t;
  const std::size_t home = p.index() < count_ ? p.index() : 0;
  if (Thread* t = queues_[home].pop_front()) [[likely]] return t;
  for (std::size_t i = home + 1; i != home; ++i) {  // steal, starting at the neighbour
    if (i == count_) {
      i = 0;
      if (home == 0) break;
    }
    if (Thread* t = queues_[i].pop_front()) return t;
  }
  return nullptr;
}

std::size_t LocalQueuePool::unpinned() const noexcept {
  std::size_t n = 0;
  for (std::size_t i = 0; i < count_; ++i) n += queues_[i].size();
  return n;
}

std::size_t LocalQueuePool::size() const noexcept { return unpinned() + pinned_.size(); }

bool LocalQueuePool::has_work_for(const Processor& p) const noexcept {
  return pinned_.has_work_for(p) || unpinned() != 0;
}

}  // namespace presto
