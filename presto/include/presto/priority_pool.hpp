#pragma once
// PriorityPool: PRESTO's ThreadPriorityHeap. The ready thread with the largest priority()
// runs first; threads of equal priority run in the order they became ready. The priority is
// read when a thread enters the pool. A binary heap under one lock: O(log n) per operation.
// A thread with an affinity waits for its processor, which serves such threads first
// (in the order they became ready, whatever their priority).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <presto/detail/pinned_queues.hpp>
#include <presto/detail/raw_spinlock.hpp>
#include <presto/thread_pool.hpp>

namespace presto {

class PriorityPool final : public ThreadPool {
 public:
  PriorityPool() { heap_.reserve(1024); }
  void put(Thread& t) override;
  Thread* get(Processor& p) override;
  std::size_t size() const noexcept override { return size_.load(std::memory_order_relaxed) + pinned_.size(); }
  bool has_work_for(const Processor& p) const noexcept override {
    return size_.load(std::memory_order_relaxed) != 0 || pinned_.has_work_for(p);
  }
  std::string_view name() const noexcept override { return "priority"; }
  void attach(const Runtime& rt) override;

 private:
  struct Entry {
    int priority;
    std::uint64_t sequence;
    Thread* thread;
  };
  static bool before(const Entry& a, const Entry& b) noexcept;  // a runs after b

  detail::RawSpinlock lock_;
  std::vector<Entry> heap_;
  std::uint64_t sequence_ = 0;
  std::atomic<std::size_t> size_{0};
  detail::PinnedQueues pinned_;
};

}  // namespace presto
