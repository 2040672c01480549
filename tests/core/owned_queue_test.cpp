// A processor's own ready queue (LocalQueuePool over detail::OwnedQueue): its processor works on
// it without the lock once it has been alone on it for bias_after operations, and the first
// other processor to steal from it revokes the bias. Nothing may be lost or run twice across a
// revocation, whatever the moment the thief comes.

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "test_support.hpp"

using namespace presto;

namespace {

// On 2 processors: a pair of threads yields to each other on processor 0 while processor 1 is
// held by a spinner pinned there, so that processor 0's queue sees only its owner; then the
// spinner ends, processor 1 steals from that queue, and the pair goes on. `rounds` times, each
// with four times the default pool's bias_after yields. Returns the pool's revocations; every
// count is checked.
std::uint64_t pair_and_thief(int rounds) {
  auto owned = std::make_unique<LocalQueuePool>();
  LocalQueuePool& pool = *owned;
  const std::uint64_t yields_per_round = 4 * std::uint64_t{pool.bias_after()};
  Runtime runtime{RuntimeConfig{.processors = 2, .pool = std::move(owned), .seed = presto::test::seed()}};
  runtime.run([&] {
    std::atomic<std::uint64_t> yields{0};
    std::atomic<bool> stop{false};
    auto yielder = [&] {
      while (!stop.load(std::memory_order_acquire)) {
        this_thread::yield();
        yields.fetch_add(1, std::memory_order_relaxed);
      }
    };
    std::atomic<int> extra_runs{0};
    std::vector<JoinHandle<void>> pair;
    for (int r = 0; r < rounds; ++r) {
      INFO("round " << r);
      // Held until the pair has yielded enough on processor 0 for its queue to be biased.
      const std::uint64_t target = yields.load() + yields_per_round;
      auto spinner = fork(ThreadAttributes{.name = "spinner", .affinity = 1}, [&] {
        while (yields.load(std::memory_order_relaxed) < target && !stop.load(std::memory_order_relaxed)) {
        }
      });
      if (r == 0) {  // after the spinner, which processor 1 serves first (it is pinned there)
        pair.push_back(fork(ThreadAttributes{.name = "ping"}, yielder));
        pair.push_back(fork(ThreadAttributes{.name = "pong"}, yielder));
      }
      // Threads forked here while the pair runs: the thief takes some, the owner the others.
      std::vector<JoinHandle<void>> extra;
      for (int i = 0; i < 64; ++i) extra.push_back(fork([&] { extra_runs.fetch_add(1, std::memory_order_relaxed); }));
      spinner.join();
      for (auto& h : extra) h.join();
    }
    stop.store(true, std::memory_order_release);
    for (auto& h : pair) h.join();
    CHECK(extra_runs.load() == 64 * rounds);
  });
  presto::test::check_no_leaks(runtime);
  return pool.revocations();
}

}  // namespace

TEST_CASE("a processor's queue is biased towards it, revoked by a thief, and loses nothing", "[core][owned_queue]") {
  INFO("seed " << presto::test::seed());
  // With the default threshold: biased after 16,384 quiet operations, so each round's pair
  // yields well past it before the spinner lets processor 1 steal.
  const std::uint64_t revocations = pair_and_thief(3);
  CHECK(revocations >= 1);
}

TEST_CASE("queues re-biased after every operation conform under constant stealing", "[core][owned_queue]") {
  // bias_after 1: a processor biases its queue again after each locked operation of its own,
  // so nearly every steal, wake-up from elsewhere or withdrawal revokes a bias, racing the
  // owner's unlocked holds as often as the workload allows. The harness checks that every
  // thread runs exactly once, never on two processors at once, and that sizes stay exact.
  const auto order = GENERATE(LocalQueuePool::Order::fifo, LocalQueuePool::Order::lifo);
  INFO(to_string(order) << ", seed " << presto::test::seed());
  CHECK_NOTHROW(presto::testing::check_pool_conformance(
      [order] { return std::make_unique<LocalQueuePool>(LocalQueuePool::Placement::waker, order, 1); },
      presto::test::conformance_options()));
}
