// Lateral replacement under load: the pool is replaced 1,000 times while 10,000 threads
// ping-pong on monitors, and no thread, exchange or stack is lost. Bounded by iteration
// counts, never by time.

#include <atomic>
#include <memory>
#include <vector>

#include "test_support.hpp"

using namespace presto;

TEST_CASE("1,000 pool replacements while 10,000 threads ping-pong on monitors", "[stress]") {
  auto processors = GENERATE(std::size_t{2}, std::size_t{4});
  auto kind = GENERATE(presto::test::PoolKind::fifo, presto::test::PoolKind::local_queue, presto::test::PoolKind::shuffle);
  presto::test::Config cfg{processors, kind};
  INFO(cfg);
  const std::size_t threads = presto::test::scaled(10'000);
  const std::size_t pairs = threads / 2;
  const std::size_t rounds = 20;
  const std::size_t replacements = presto::test::scaled(1'000);
  std::atomic<std::size_t> exchanges{0};
  std::size_t replaced = 0;
  presto::test::run(cfg, [&] {
    struct Pair {
      Monitor monitor{"pair"};
      Condition turn{monitor, "turn"};
      int whose = 0;
    };
    std::vector<Pair> pair_objects(pairs);
    std::vector<JoinHandle<void>> players;
    players.reserve(threads);
    for (std::size_t i = 0; i < pairs; ++i) {
      for (int side = 0; side < 2; ++side) {
        players.push_back(fork([&, side, i] {
          Pair& p = pair_objects[i];
          for (std::size_t r = 0; r < rounds; ++r) {
            Monitor::Entry entry{p.monitor};
            p.turn.wait(entry, [&] { return p.whose == side; });
            p.whose = 1 - side;
            exchanges.fetch_add(1, std::memory_order_relaxed);
            p.turn.signal();
          }
        }));
      }
    }
    // The replacer interleaves with the players: each replacement finds a different ready set.
    auto replacer = fork([&] {
      Scheduler& s = this_thread::runtime()->scheduler();
      for (std::size_t k = 0; k < replacements; ++k) {
        s.replace_pool(presto::test::make_pool(k % 2 == 0 ? presto::test::PoolKind::lifo : kind));
        ++replaced;
        this_thread::yield();
      }
    });
    replacer.join();
    for (auto& p : players) p.join();
  });
  CHECK(replaced == replacements);
  CHECK(exchanges == pairs * 2 * rounds);
}
