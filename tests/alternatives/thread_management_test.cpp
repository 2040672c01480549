// The thread-management alternatives (presto/thread_management.hpp): each pool conforms, each
// alternative runs fork/join workloads on 1, 2 and 4 processors without leaks, the free-list
// policies recycle control blocks and stacks, and the idle queue hands threads to waiting
// processors.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include <presto/testing/pool_conformance.hpp>

#include "test_support.hpp"

using namespace presto;

namespace {

// A binary tree of forks `depth` deep; returns the number of threads it made.
long tree(int depth) {
  if (depth == 0) return 1;
  auto left = fork(tree, depth - 1);
  long right = tree(depth - 1);
  return 1 + left.join() + right;
}

}  // namespace

TEST_CASE("the alternatives' pools conform", "[alternatives][conformance]") {
  auto which = GENERATE(as<std::string>{}, "single-lock", "idle-queue");
  INFO(which << " pool, seed " << presto::test::seed());
  presto::testing::PoolFactory make = [which]() -> std::unique_ptr<ThreadPool> {
    if (which == "single-lock") return std::make_unique<SingleLockPool>();
    return std::make_unique<IdleQueuePool>();
  };
  CHECK_NOTHROW(presto::testing::check_pool_conformance(make, presto::test::conformance_options()));
}

TEST_CASE("every alternative runs fork/join workloads on 1, 2 and 4 processors", "[alternatives]") {
  auto alternative = GENERATE(from_range(all_thread_management.begin(), all_thread_management.end()));
  auto processors = GENERATE(as<std::size_t>{}, 1, 2, 4);
  INFO(to_string(alternative) << ", " << processors << " processor(s), seed " << presto::test::seed()
                              << " (replay: PRESTO_SEED=" << presto::test::seed() << ")");
  RuntimeConfig config{.processors = processors, .seed = presto::test::seed()};
  configure(config, alternative);
  Runtime rt{std::move(config)};
  const int depth = 9;
  const std::size_t burst = presto::test::scaled(2000);
  std::atomic<std::size_t> ran{0};
  long made = rt.run([&] {
    long total = 0;
    for (int round = 0; round < 3; ++round) {
      total += tree(depth);
      std::vector<JoinHandle<void>> handles;
      handles.reserve(burst);
      for (std::size_t i = 0; i < burst; ++i) handles.push_back(fork([&] { ran.fetch_add(1); }));
      for (auto& h : handles) h.join();
    }
    return total;
  });
  CHECK(made == 3 * ((1L << (depth + 1)) - 1));
  CHECK(ran.load() == 3 * burst);
  presto::test::check_no_leaks(rt);
  RuntimeStats s = rt.stats();
  CHECK(s.threads_recycled > 0);  // later rounds reuse the blocks of earlier ones
  CHECK(s.stacks_cached > 0);     // and the stacks wait in a free list
}

TEST_CASE("central free lists serve every processor and free everything, under every pool", "[alternatives]") {
  auto cfg = GENERATE(presto::test::configs());
  auto cache = GENERATE(as<std::size_t>{}, 0, 4, 65536);
  INFO(cfg << ", thread_cache " << cache);
  const std::size_t processors = cfg.processors;
  Runtime rt{{.processors = processors, .lazy_forks = false, .thread_cache = cache, .free_lists = FreeLists::central,
              .pool = presto::test::make_pool(cfg.pool), .seed = presto::test::seed()}};
  const std::size_t n = 500;
  rt.run([&] {
    for (int round = 0; round < 4; ++round) {
      std::vector<JoinHandle<int>> handles;
      for (std::size_t i = 0; i < n; ++i) handles.push_back(fork([i] { return static_cast<int>(i); }));
      for (auto& h : handles) h.join();
    }
  });
  presto::test::check_no_leaks(rt);
  RuntimeStats s = rt.stats();
  // 4 rounds of n forks (and the main thread): the central list holds up to cache x processors.
  const std::uint64_t kept = std::min<std::uint64_t>(cache * processors, n);
  CHECK(s.threads_recycled >= (cache == 0 ? 0 : 3 * kept));
  CHECK(s.threads_created + s.threads_recycled == 4 * n + 1);
  if (cache == 0) CHECK(s.threads_recycled == 0);
}

TEST_CASE("SingleLockPool guards its queue with the runtime's free-list lock", "[alternatives]") {
  Runtime rt{{.processors = 1}};
  SingleLockPool pool;
  Thread t{"subject"};
  CHECK_THROWS_AS(pool.put(t), UsageError);  // not attached yet
  pool.attach(rt);
  Runtime other{{.processors = 1}};
  CHECK_THROWS_WITH(pool.attach(other), Catch::Matchers::Contains("another runtime"));
  pool.put(t);
  CHECK(pool.size() == 1);
  // While someone holds the runtime's free-list lock, the pool cannot be entered.
  CHECK(rt.free_list_lock().try_lock());
  CHECK_FALSE(rt.free_list_lock().try_lock());
  rt.free_list_lock().unlock();
  CHECK(pool.get(rt.processor(0)) == &t);
  CHECK(pool.size() == 0);
}

TEST_CASE("IdleQueuePool hands a thread to the processor waiting longest", "[alternatives]") {
  auto processors = GENERATE(as<std::size_t>{}, 1, 2, 4);
  INFO(processors << " processor(s)");
  Runtime rt{{.processors = processors}};
  IdleQueuePool pool;
  pool.attach(rt);
  Thread a{"a"}, b{"b"}, c{"c"};
  // Processors queue as idle in the order they find nothing: the last one first.
  for (std::size_t i = processors; i-- > 0;) CHECK(pool.get(rt.processor(i)) == nullptr);
  pool.put(a);  // to the oldest idle processor, the last one
  CHECK(pool.size() == 1);
  pool.put(b);  // to the next one (or, with one processor, to the central queue)
  CHECK(pool.size() == 2);
  if (processors > 1) {
    CHECK(pool.get(rt.processor(processors - 2)) == &b);  // its own slot first
    CHECK(pool.get(rt.processor(processors - 1)) == &a);
  } else {
    CHECK(pool.get(rt.processor(0)) == &a);
    CHECK(pool.get(rt.processor(0)) == &b);  // from the central queue
  }
  if (processors > 1) {
    // Processor 0 is waiting (still, or again after this look); c is handed to the oldest
    // waiter, which is processor 0 with two processors and processor 1 with four. Either way
    // processor 1 gets it: from its own slot, or from processor 0's, so that a handed thread
    // is never stranded on a processor that sleeps.
    CHECK(pool.get(rt.processor(0)) == nullptr);
    pool.put(c);
    CHECK(pool.size() == 1);
    CHECK(pool.get(rt.processor(1)) == &c);
  } else {
    pool.put(c);
    CHECK(pool.get(rt.processor(0)) == &c);
  }
  CHECK(pool.size() == 0);
}
