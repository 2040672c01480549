#pragma once
// FifoPool: one global first-come-first-served queue: PRESTO's original discipline and the
// simplest fair pool. One lock serializes every put and get, so it stops scaling after a
// handful of processors (Anderson, Lazowska and Levy); prefer LocalQueuePool for throughput.

#include <atomic>
#include <cstddef>
#include <string_view>

#include <presto/detail/raw_spinlock.hpp>
#include <presto/thread_pool.hpp>
#include <presto/thread_queue.hpp>

namespace presto {

class FifoPool final : public ThreadPool {
 public:
  void put(Thread& t) override;
  Thread* get(Processor& p) override;
  std::size_t size() const noexcept override { return size_.load(std::memory_order_relaxed); }
  std::string_view name() const noexcept override { return "fifo"; }

 private:
  detail::RawSpinlock lock_;
  ThreadQueue queue_;
  std::atomic<std::size_t> size_{0};
};

}  // namespace presto
