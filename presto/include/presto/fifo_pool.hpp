#pragma once
// FifoPool: one global first-come-first-served queue: PRESTO's original discipline and the
// simplest fair pool. One lock serializes every put and get, so it stops scaling after a
// handful of processors (Anderson, Lazowska and Levy); prefer LocalQueuePool for throughput.
// A thread with an affinity waits for its processor, which serves such threads first.

#include <cstddef>
#include <string_view>

#include <presto/detail/locked_queue.hpp>
#include <presto/detail/pinned_queues.hpp>
#include <presto/thread_pool.hpp>

namespace presto {

class FifoPool final : public ThreadPool {
 public:
  void put(Thread& t) override;
  Thread* get(Processor& p) override;
  std::size_t size() const noexcept override { return queue_.size() + pinned_.size(); }
  bool has_work_for(const Processor& p) const noexcept override {
    return queue_.size() != 0 || pinned_.has_work_for(p);
  }
  std::string_view name() const noexcept override { return "fifo"; }
  bool withdraw(Thread& t) override;
  void attach(const Runtime& rt) override;

 private:
  detail::LockedQueue queue_;
  detail::PinnedQueues pinned_;
};

}  // namespace presto
