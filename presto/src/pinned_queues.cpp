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

std::size_t PinnedQueues::size() const noexcept {
  std::size_t n = 0;
  for (std::size_t i = 0; i < count_; ++i) n += queues_[i].size();
  return n;
}

bool PinnedQueues::has_work_for(const Processor& p) const noexcept {
  return p.index() < count_ && queues_[p.index()].size() != 0;
}

}  // namespace presto::detail
