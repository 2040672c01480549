#include <presto/detail/pinned_queues.hpp>

#include <presto/errors.hpp>
#include <presto/processor.hpp>
#include <presto/thread.hpp>

namespace presto::detail {

void PinnedQueues::attach(std::size_t processors) {
  if (queues_ != nullptr && processors == count_) return;
  if (size() != 0) throw UsageError("a pool cannot change its number of processors while pinned threads are queued");
  queues_ = std::make_unique<Queue[]>(processors);
  count_ = processors;
}

bool PinnedQueues::put(Thread& t) {
  const std::optional<std::size_t> k = t.affinity();
  if (!k || *k >= count_) [[likely]] return false;
  size_.fetch_add(1, std::memory_order_relaxed);  // before the push: size() never misses it
  queues_[*k].push_back(t);
  return true;
}

Thread* PinnedQueues::get(const Processor& p) noexcept {
  if (size() == 0 || p.index() >= count_) [[likely]] return nullptr;
  Thread* t = queues_[p.index()].pop_front();
  if (t != nullptr) size_.fetch_sub(1, std::memory_order_relaxed);
  return t;
}

bool PinnedQueues::has_work_for(const Processor& p) const noexcept {
  return p.index() < count_ && queues_[p.index()].size() != 0;
}

}  // namespace presto::detail
