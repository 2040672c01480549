#pragma once
// LocalQueuePool: one FIFO queue per processor with stealing, the only thread-management
// structure that scales (Anderson, Lazowska and Levy, 1989). A thread made ready by a presto
// thread goes on that thread's processor's queue (OS threads spread theirs round-robin); a
// processor serves its own queue first and, when it is empty, steals the oldest thread of the
// next non-empty queue, scanning from its neighbour. Each queue has its own lock, on its own
// cache line, so processors contend only when they steal. A thread with an affinity waits
// for its processor, which serves such threads first; they are never stolen.
//
// The default pool of a Runtime.

#include <atomic>
#include <cstddef>
#include <memory>
#include <string_view>

#include <presto/detail/locked_queue.hpp>
#include <presto/detail/pinned_queues.hpp>
#include <presto/thread_pool.hpp>

namespace presto {

class LocalQueuePool final : public ThreadPool {
 public:
  LocalQueuePool() = default;
  ~LocalQueuePool() override;

  void put(Thread& t) override;
  Thread* get(Processor& p) override;
  std::size_t size() const noexcept override;
  bool has_work_for(const Processor& p) const noexcept override;
  std::string_view name() const noexcept override { return "local-queue"; }
  void attach(const Runtime& rt) override;

 private:
  std::size_t unpinned() const noexcept;

  struct alignas(64) Queue : detail::LockedQueue {};

  const Runtime* runtime_ = nullptr;
  std::unique_ptr<Queue[]> queues_;
  std::size_t count_ = 0;
  detail::PinnedQueues pinned_;
  std::atomic<std::size_t> round_robin_{0};
};

}  // namespace presto
