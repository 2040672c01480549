#pragma once
// McsLock: Mellor-Crummey and Scott's list-based queue lock (1991). A waiter appends its node
// with one exchange on the tail and spins on a flag in its own node; the holder's release
// clears its successor's flag. Each waiter spins on a line of its own (local spinning even
// without coherent caches), a release costs one miss, and the lock itself is one pointer:
// no per-lock array as in AndersonLock.
//
// FIFO, in the order of the exchanges on the tail. Nodes come from a per-OS-thread free list
// (presto/locks/queue_node.hpp): the uncontended lock+unlock is one exchange, one
// compare-exchange and two out-of-line calls. Oversubscribed it suffers as every FIFO lock does.

#include <atomic>

#include <presto/locks/queue_node.hpp>
#include <presto/spinlock.hpp>

namespace presto::locks {

class McsLock final : public Spinlock {
 public:
  McsLock() = default;

 protected:
  void acquire() noexcept override;
  bool try_acquire() noexcept override;
  void release() noexcept override;

 private:
  std::atomic<QueueNode*> tail_{nullptr};
  QueueNode* holder_ = nullptr;  // the holder's node, for release
};

}  // namespace presto::locks
