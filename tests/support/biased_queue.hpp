#pragma once
// BiasedQueue: for a presto thread of a two-processor runtime under a LocalQueuePool, biases the
// calling processor's queue (4 x bias_after holds of its own; a fork and its join make two) while
// a spinner pinned to the other processor keeps that one from stealing, and keeps it busy until
// release(). Until the spinner holds the other processor, that processor may steal what the
// biasing forks, and revoke the bias late enough that the queue is not biased again at the end:
// then a steal needs no revocation (seen under ThreadSanitizer on a loaded machine, in a version
// whose processors spun when idle instead of parking). join() waits for the spinner; the
// destructor releases it, so that a failed test's run can still end.

#include <atomic>
#include <memory>

#include <presto/local_queue_pool.hpp>
#include <presto/presto.hpp>

namespace presto::test {

class BiasedQueue {
 public:
  explicit BiasedQueue(LocalQueuePool& pool) {
    // On the processor this thread does not run on (it may have started on either).
    const std::size_t other = 1 - Processor::current()->index();
    spinner_ = fork(ThreadAttributes{.name = "spinner", .affinity = other}, [state = state_] {
      state->spinning.store(true, std::memory_order_release);
      while (state->hold.load(std::memory_order_acquire)) {
      }
    });
    while (!state_->spinning.load(std::memory_order_acquire)) {
    }
    for (unsigned i = 0; i < 4 * pool.bias_after(); ++i) fork([] {}).join();
  }
  BiasedQueue(const BiasedQueue&) = delete;
  BiasedQueue& operator=(const BiasedQueue&) = delete;
  ~BiasedQueue() { release(); }

  // The other processor may steal from now on.
  void release() noexcept { state_->hold.store(false, std::memory_order_release); }
  void join() { spinner_.join(); }

 private:
  struct State {
    std::atomic<bool> hold{true};
    std::atomic<bool> spinning{false};
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
  JoinHandle<void> spinner_;
};

}  // namespace presto::test
