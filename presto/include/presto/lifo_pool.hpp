#pragma once
// LifoPool: one global last-in-first-out stack. The most recently readied thread runs first,
// which favours cache warmth over fairness (a yielding thread runs again at once if nothing
// newer is ready). One lock serializes it, like FifoPool.

#include <cstddef>
#include <string_view>

#include <presto/detail/locked_queue.hpp>
#include <presto/thread_pool.hpp>

namespace presto {

class LifoPool final : public ThreadPool {
 public:
  void put(Thread& t) override;
  Thread* get(Processor& p) override;
  std::size_t size() const noexcept override { return queue_.size(); }
  std::string_view name() const noexcept override { return "lifo"; }

 private:
  detail::LockedQueue queue_;
};

}  // namespace presto
