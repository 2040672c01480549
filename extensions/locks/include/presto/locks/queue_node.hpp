#pragma once
// QueueNode: the per-acquisition record of the MCS and CLH queue locks, one cache line each.
// PRESTO's Lockable interface (lock()/unlock(), no node argument) leaves the node to the lock:
// acquire takes one from the calling OS thread's spares and the lock gives it back at
// release (MCS: the holder's own; CLH: its predecessor's, as in Craig's algorithm). A holder
// never switches threads (it may not block, yield or be preempted), so acquire and release
// run on the same OS thread. An OS thread that needs more nodes than it has takes one from the
// spares of OS threads that have ended, or allocates one.
//
// Nodes are never freed: an ending OS thread and a destroyed ClhLock put theirs among the
// spares, so the process holds at most as many as it ever had in use at once. ClhLock::try_lock
// reads the flag of a tail node it does not own: by then the node may have passed to another
// lock or into a list of spares, which is harmless (the compare-exchange on the tail decides),
// but it must still be memory.
//
// For the queue locks of this extension; not for applications.

#include <atomic>

#include <presto/locks/spin_wait.hpp>

namespace presto::locks {

struct alignas(kCacheLine) QueueNode {
  std::atomic<QueueNode*> next{nullptr};  // MCS: the successor, set by it
  std::atomic<bool> locked{false};        // MCS: wait while true; CLH: held or waiting
  QueueNode* free_next = nullptr;         // in a list of spares
};

// A node from the calling OS thread's spares (else from those of ended OS threads, else new).
QueueNode* take_queue_node();
// Back into the calling OS thread's spares; no holder or waiter may still refer to it.
void give_queue_node(QueueNode* n) noexcept;

}  // namespace presto::locks
