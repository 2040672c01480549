#include <presto/detail/owned_queue.hpp>

#include <presto/detail/cpu.hpp>

#include "asymmetric_fence.hpp"

namespace presto::detail {

void OwnedQueue::revoke() noexcept {
  // Under lock_: from now on the owner takes the lock too. The heavy fence pairs with the
  // owner's light one: either its next read of the bias sees it cleared, or its announcement
  // is visible below and we wait for the hold it is in (a yield's spans a context switch).
  biased_.store(false, std::memory_order_relaxed);
  revocations_.store(revocations_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  heavy_fence();
  Backoff backoff;
  while (owner_busy_.load(std::memory_order_acquire)) backoff.pause();
}

}  // namespace presto::detail
