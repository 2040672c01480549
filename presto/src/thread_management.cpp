#include <presto/thread_management.hpp>

#include <presto/fifo_pool.hpp>
#include <presto/idle_queue_pool.hpp>
#include <presto/local_queue_pool.hpp>
#include <presto/single_lock_pool.hpp>

namespace presto {

std::string_view to_string(ThreadManagement alternative) noexcept {
  switch (alternative) {
    case ThreadManagement::single_lock: return "single-lock";
    case ThreadManagement::multiple_locks: return "multiple-locks";
    case ThreadManagement::local_free_lists: return "local-free-lists";
    case ThreadManagement::idle_queue: return "idle-queue";
    case ThreadManagement::local_ready_queues: return "local-ready-queues";
  }
  return "?";
}

void configure(RuntimeConfig& config, ThreadManagement alternative) {
  switch (alternative) {
    case ThreadManagement::single_lock:
      config.pool = std::make_unique<SingleLockPool>();
      config.free_lists = FreeLists::central;
      return;
    case ThreadManagement::multiple_locks:
      config.pool = std::make_unique<FifoPool>();
      config.free_lists = FreeLists::central;
      return;
    case ThreadManagement::local_free_lists:
      config.pool = std::make_unique<FifoPool>();
      config.free_lists = FreeLists::per_processor;
      return;
    case ThreadManagement::idle_queue:
      config.pool = std::make_unique<IdleQueuePool>();
      config.free_lists = FreeLists::per_processor;
      return;
    case ThreadManagement::local_ready_queues:
      config.pool = std::make_unique<LocalQueuePool>(LocalQueuePool::Placement::random);
      config.free_lists = FreeLists::per_processor;
      return;
  }
}

}  // namespace presto
