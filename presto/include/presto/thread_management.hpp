#pragma once
// The five thread-management alternatives of Anderson, Lazowska and Levy ("The Performance
// Implications of Thread Management Alternatives for Shared-Memory Multiprocessors", 1989),
// each a ready pool plus a free-list policy that a RuntimeConfig installs:
//
//   single_lock         SingleLockPool + FreeLists::central: one lock guards the ready queue
//                       and both free lists
//   multiple_locks      FifoPool + FreeLists::central: a lock for the ready queue, one for
//                       the free lists (more lock operations per fork, less contention)
//   local_free_lists    FifoPool + FreeLists::per_processor: unlocked per-processor free
//                       lists, one central locked ready queue
//   idle_queue          IdleQueuePool + FreeLists::per_processor: ready threads are handed
//                       to processors waiting on a queue of idle processors
//   local_ready_queues  LocalQueuePool (random placement) + FreeLists::per_processor: a
//                       locked ready queue per processor, new threads on a random one
//
//   presto::RuntimeConfig config{.processors = 4};
//   presto::configure(config, presto::ThreadManagement::idle_queue);
//   presto::Runtime rt{std::move(config)};
//
// The paper's finding, which benchmarks/thread_management.cpp re-measures: only per-processor
// ready queues keep up with fine-grained thread creation as processors are added. PRESTO's
// default (LocalQueuePool with waker placement, per-processor free lists) is the last one
// with the waker's queue instead of a random one.

#include <array>
#include <string_view>

#include <presto/runtime.hpp>

namespace presto {

enum class ThreadManagement : unsigned char {
  single_lock,
  multiple_locks,
  local_free_lists,
  idle_queue,
  local_ready_queues,
};

inline constexpr std::array<ThreadManagement, 5> all_thread_management{
    ThreadManagement::single_lock, ThreadManagement::multiple_locks, ThreadManagement::local_free_lists,
    ThreadManagement::idle_queue, ThreadManagement::local_ready_queues};

// "single-lock", "multiple-locks", "local-free-lists", "idle-queue", "local-ready-queues".
std::string_view to_string(ThreadManagement alternative) noexcept;

// Sets config.pool (a new pool) and config.free_lists to the alternative; nothing else.
void configure(RuntimeConfig& config, ThreadManagement alternative);

}  // namespace presto
