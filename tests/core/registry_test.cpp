// The registry of live threads (presto/src/registry.hpp) seen through the public API: walks
// (Runtime::for_each_thread) racing threads that start and end on every processor, and slots
// emptied on one processor reused by another, with live_threads exact after each phase.

#include <atomic>
#include <cstdint>
#include <set>
#include <vector>

#include "test_support.hpp"

using namespace presto;

TEST_CASE("walks of the registry race threads that start and end on every processor", "[core][registry]") {
  auto cfg = GENERATE(presto::test::configs());
  // Without a cache of control blocks, a thread's block is freed as soon as it is joined: a
  // walk that still read it afterwards would read freed memory (AddressSanitizer).
  const std::size_t cache = GENERATE(std::size_t{0}, std::size_t{65536});
  INFO(cfg << ", thread cache " << cache);
  const std::size_t rounds = presto::test::scaled(200);
  RuntimeConfig config = presto::test::runtime_config(cfg);
  config.thread_cache = cache;
  Runtime runtime{std::move(config)};
  runtime.run([&] {
    Runtime& rt = *this_thread::runtime();
    std::atomic<bool> stop{false};
    std::atomic<std::size_t> walks{0};  // read by the main thread while the walker walks
    bool ids_unique = true, saw_walker = true;
    // The churn waits for the walker's first walk: on a loaded machine, or under a pool that
    // runs the newest thread first, the walker might otherwise not run before the churn ends
    // (2026-12-04: walks == 0 once, 4 processors on the 2-core VM, two suites at once).
    Semaphore walking{0, "walker's first walk"};
    auto walker = fork([&] {
      const Thread& me = Thread::current();
      while (!stop.load(std::memory_order_acquire)) {
        std::set<std::uint64_t> ids;
        bool seen = false;
        rt.for_each_thread([&](const Thread& t) {
          // Read what a report reads: a thread that ends meanwhile must stay valid until the
          // walk is over (AddressSanitizer checks it), and be seen whole (ThreadSanitizer).
          ids_unique = ids.insert(t.id()).second && ids_unique;
          seen = seen || &t == &me;
          (void)t.state();
          (void)t.describe();
        });
        saw_walker = saw_walker && seen;
        if (walks.fetch_add(1, std::memory_order_relaxed) == 0) walking.release();
        this_thread::yield();
      }
    });
    walking.acquire();
    const std::size_t walks_before_churn = walks.load(std::memory_order_relaxed);
    for (std::size_t r = 0; r < rounds; ++r) {
      std::vector<JoinHandle<void>> batch;
      for (int i = 0; i < 16; ++i) batch.push_back(fork([] { this_thread::yield(); }));
      for (auto& h : batch) h.join();
    }
    stop.store(true, std::memory_order_release);
    walker.join();
    INFO("walks: " << walks_before_churn << " before the churn, " << walks.load() << " in all");
    CHECK(ids_unique);
    CHECK(saw_walker);
  });
  presto::test::check_no_leaks(runtime);
}

TEST_CASE("slots emptied on other processors are reused; live_threads stays exact", "[core][registry]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const std::size_t n = presto::test::scaled(3'000);
  presto::test::run(cfg, [&] {
    Runtime& rt = *this_thread::runtime();
    for (int round = 0; round < 4; ++round) {
      INFO("round " << round);
      Barrier gate{n + 1, "gate"};
      std::vector<JoinHandle<void>> handles;
      handles.reserve(n);
      // Forked here, ended wherever the pool runs them after the gate opens.
      for (std::size_t i = 0; i < n; ++i) handles.push_back(fork([&] { gate.arrive_and_wait(); }));
      // The walk first: it makes every queued lazy fork a thread, after which none is being
      // made one while live_threads is read (a snapshot, off by any being made one just then).
      // A lazy fork that another processor's runner runs as a call, and that has not yet asked
      // for its thread (the gate makes it ask at once), is not listed: one a processor at most.
      std::size_t visited = 0;
      rt.for_each_thread([&](const Thread&) { ++visited; });
      CHECK(visited <= n + 1);
      CHECK(visited + (cfg.processors - 1) >= n + 1);
      CHECK(rt.stats().live_threads == n + 1);
      gate.arrive_and_wait();
      for (auto& h : handles) h.join();
      CHECK(rt.stats().live_threads == 1);
    }
    return 0;
  });
}

TEST_CASE("a walk lists threads that have started and not ended, not finished ones held by a handle", "[core][registry]") {
  Runtime rt{{.processors = 1, .seed = presto::test::seed()}};
  rt.run([&] {
    auto listed = [&](std::uint64_t id) {
      bool found = false;
      rt.for_each_thread([&](const Thread& t) { found = found || t.id() == id; });
      return found;
    };
    std::atomic<bool> ran{false};
    auto child = fork([&] { ran.store(true); });
    CHECK(listed(child.id()));  // started (ready), not yet run
    this_thread::yield();       // one processor: the child runs to its end here
    REQUIRE(ran.load());
    CHECK_FALSE(listed(child.id()));  // ended; its handle still holds it
    CHECK(listed(Thread::current().id()));
    child.join();
  });
  presto::test::check_no_leaks(rt);
}
