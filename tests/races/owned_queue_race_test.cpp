// A served steal's race (detail::OwnedQueue::request and serve, docs/design/runtime.md §3),
// replayed every time at the library's race point (race_window.hpp): a thief that has waited
// long enough for the owner of a biased queue to serve its request takes it back with a
// compare-exchange; if the owner took the request first, the thief must wait for the answer and
// keep the threads it was given, not fall back to the lock as if nothing had been taken. The
// thief is held just before its compare-exchange until the owner has served the request: the
// threads handed over in that window must each run once, and nothing may be lost. (A thief that
// dropped them, tried by returning "not served" there, left the test's joins waiting for threads
// no queue held: the run hung, and the suite's timeout fails it.)

#include <atomic>
#include <cstdint>
#include <memory>

#include <catch2/catch.hpp>
#include <presto/local_queue_pool.hpp>
#include <presto/presto.hpp>

#include "biased_queue.hpp"
#include "on_its_own_cpu.hpp"
#include "race_window.hpp"
#include "test_support.hpp"

using namespace presto;
using presto::test::race_window;

TEST_CASE("a thief taking back its request just as the owner serves it keeps what it was given", "[races][owned_queue]") {
  if (test::OnItsOwnCpu::cpus().size() < 2) {
    WARN("not run: it needs two CPUs, for a thief and its owner on theirs at once");
    return;
  }
  test::RaceWindow::Installed hook;
  constexpr std::size_t rounds = 10;  // not scaled down: each round meets the window at once
  for (std::size_t r = 0; r < rounds; ++r) {
    INFO("round " << r << ", seed " << test::seed());
    race_window.reset();
    auto owned = std::make_unique<LocalQueuePool>();
    LocalQueuePool& pool = *owned;
    std::atomic<int> unpinned{0};
    std::atomic<std::uint64_t> runs{0};
    std::uint64_t computed = 0;
    constexpr std::uint64_t kComputeBound = 4'000'000'000;  // iterations, for a held thief
    Runtime runtime{RuntimeConfig{.processors = 2,
                                  .pool = std::move(owned),
                                  .processor_prototype = std::make_unique<test::OnItsOwnCpu>(unpinned),
                                  .seed = test::seed()}};
    runtime.run([&] {
      test::BiasedQueue biased{pool};
      const std::uint64_t served_before = pool.served_steals();
      // Held until this processor has served the request: it computes, without a hold of its
      // queue, until the thief gives up waiting and is held, then makes one hold (a fork).
      race_window.arm("OwnedQueue::request", [&pool, served_before] { return pool.served_steals() > served_before; });
      biased.release();
      auto first = fork([&] { runs.fetch_add(1, std::memory_order_relaxed); });
      auto second = fork([&] { runs.fetch_add(1, std::memory_order_relaxed); });  // two: no lone thread's grace
      while (!race_window.held() && computed < kComputeBound) ++computed;
      fork([&] { runs.fetch_add(1, std::memory_order_relaxed); }).join();  // a hold: it serves
      first.join();
      second.join();
      biased.join();
    });
    CHECK(computed < kComputeBound);
    REQUIRE_FALSE(race_window.timed_out());
    CHECK(race_window.held());
    CHECK(race_window.met());
    CHECK(runs.load() == 3);
    CHECK(unpinned.load() == 0);
    test::check_no_leaks(runtime);
  }
}
