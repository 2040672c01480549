#pragma once
// LifoPool: one global last-in-first-out stack. The most recently readied thread runs first,
// which favours cache warmth over fairness (a yielding thread runs again at once if nothing
// newer is ready). One lock serializes it, like FifoPool.

#include <atomic>
#include <cstddef>
#include <string_view>

#include <presto/detail/raw_spinlock.hpp>
#include <presto/thread_pool.hpp>
#include <presto/thread_queue.hpp>

namespace presto {

class LifoPool final : public ThreadPool {
 public:
  void put(Thread& t) override;
  Thread* get(Processor& p) override;
  std::size_t size() const noexcept override { return size_.load(std::memory_order_relaxed); }
  std::string_view name() const noexcept override { return "lifo"; }

 private:
  detail::RawSpinlock lock_;
  ThreadQueue stack_;
  std::atomic<std::size_t> size_{0};
};

}  // namespace presto
