#pragma once
// LifoPool: one global last-in-first-out stack. The most recently readied thread runs first,
// which favours cache warmth over fairness (a yielding thread runs again at once if nothing
// newer is ready). One lock serializes it, like FifoPool.
// A thread with an affinity waits for its processor, which serves such threads first.

#include <cstddef>
#include <string_view>

#include <presto/detail/locked_queue.hpp>
#include <presto/detail/pinned_queues.hpp>
#include <presto/thread_pool.hpp>

namespace presto {

class LifoPool final : public ThreadPool {
 public:
  void put(Thread& t) override;
  Thread* get(Processor& p) override;
  std::size_t size() const noexcept override { return queue_.size() + pinned_.size(); }
  bool has_work_for(const Processor& p) const noexcept override {
    return queue_.size() != 0 || pinned_.has_work_for(p);
  }
  std::string_view name() const noexcept override { return "lifo"; }
  bool withdraw(Thread& t) override;
  void attach(const Runtime& rt) override;

 private:
  detail::LockedQueue queue_;
  detail::PinnedQueues pinned_;
};

}  // namespace presto
