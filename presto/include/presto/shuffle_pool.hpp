#pragma once
// ShufflePool: hands out a uniformly random ready thread, from a seeded generator. For tests:
// it explores interleavings a FIFO never produces, and on one processor a seed replays the
// same schedule exactly. The seed is the constructor's, or else the runtime's
// (RuntimeConfig::seed / PRESTO_SEED), logged at info level so a failure can be replayed.
// A thread with an affinity waits for its processor, which serves such threads first.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <presto/detail/pinned_queues.hpp>
#include <presto/detail/raw_spinlock.hpp>
#include <presto/thread_pool.hpp>

namespace presto {

class ShufflePool final : public ThreadPool {
 public:
  explicit ShufflePool(std::optional<std::uint64_t> seed = std::nullopt) : seed_(seed) {
    ready_.reserve(1024);
  }
  void put(Thread& t) override;
  Thread* get(Processor& p) override;
  std::size_t size() const noexcept override { return size_.load(std::memory_order_relaxed) + pinned_.size(); }
  bool has_work_for(const Processor& p) const noexcept override {
    return size_.load(std::memory_order_relaxed) != 0 || pinned_.has_work_for(p);
  }
  std::string_view name() const noexcept override { return "shuffle"; }
  void attach(const Runtime& rt) override;
  std::uint64_t seed() const noexcept { return seed_.value_or(0); }

 private:
  std::uint64_t next_random() noexcept;

  std::optional<std::uint64_t> seed_;
  std::uint64_t state_ = 0;
  detail::RawSpinlock lock_;
  std::vector<Thread*> ready_;
  std::atomic<std::size_t> size_{0};
  detail::PinnedQueues pinned_;
};

}  // namespace presto
