#pragma once
// QueueNode: the per-acquisition record of the MCS and CLH queue locks, one cache line each.
// PRESTO's Lockable interface (lock()/unlock(), no node argument) leaves the node to the lock:
// acquire takes one from a free list of the calling OS thread and the lock gives it back at
// release (MCS: the holder's own; CLH: its predecessor's, as in Craig's algorithm). A holder
// never switches threads (it may not block, yield or be preempted), so acquire and release
// run on the same OS thread. Nodes are allocated the first time an OS thread nests more
// acquisitions than it has nodes, and freed when the OS thread ends.
//
// For the queue locks of this extension; not for applications.

#include <atomic>

#include <presto/locks/spin_wait.hpp>

namespace presto::locks {

struct alignas(kCacheLine) QueueNode {
  std::atomic<QueueNode*> next{nullptr};  // MCS: the successor, set by it
  std::atomic<bool> locked{false};        // MCS: wait while true; CLH: held or waiting
  QueueNode* free_next = nullptr;         // in the OS thread's free list
};

// A node from the calling OS thread's free list (allocated if it is empty).
QueueNode* take_queue_node();
// Back into the calling OS thread's free list; nobody may still refer to it.
void give_queue_node(QueueNode* n) noexcept;

}  // namespace presto::locks
