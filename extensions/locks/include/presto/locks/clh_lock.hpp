#pragma once
// ClhLock: Craig, Landin and Hagersten's queue lock (1993). A waiter sets its node's flag,
// swaps it into the tail and spins on its predecessor's flag; release clears its own flag and
// the releaser takes the predecessor's node as its spare. Like McsLock each waiter spins on
// one line and a release costs one miss, and the release needs no compare-exchange (the holder
// never looks for its successor); the waiter spins on a line another thread wrote, which is
// local on cache-coherent machines only.
//
// FIFO, in the order of the swaps on the tail. Nodes come from a per-OS-thread free list
// (presto/locks/queue_node.hpp); the lock owns one node (the tail at rest). try_lock succeeds
// only when the lock is free with nobody in line; in one rare race (the tail node recycled and
// taken again between its two reads) it then waits out one critical section instead of failing.
// Oversubscribed it suffers as every FIFO lock does.

#include <atomic>

#include <presto/locks/queue_node.hpp>
#include <presto/spinlock.hpp>

namespace presto::locks {

class ClhLock final : public Spinlock {
 public:
  ClhLock();
  ~ClhLock() override;

 protected:
  void acquire() noexcept override;
  bool try_acquire() noexcept override;
  void release() noexcept override;

 private:
  void wait_for(QueueNode* pred, QueueNode* mine) noexcept;

  std::atomic<QueueNode*> tail_;
  QueueNode* holder_ = nullptr;  // the holder's node and its predecessor's, for release
  QueueNode* pred_ = nullptr;
};

}  // namespace presto::locks
