// Races of a lazy fork's record, replayed every time at the library's race points
// (race_window.hpp): one processor is held between two reads of a record while the other takes
// the record to a runner, whose body then makes its thread. Before the fix of 2026-12-06
// (CHANGELOG, "Lazy forks") a join or a drop held there read the state as queued and the thread
// as made in the queue, and gave the record back while the runner still ran it: a cancelled
// join returned garbage. Found once in CI and in 1 of 166 replays of a stress test; these tests
// meet the window in every round, and fail at the first against the old order of the reads.

#include <atomic>
#include <stop_token>
#include <thread>

#include <catch2/catch.hpp>
#include <presto/presto.hpp>

#include "race_window.hpp"
#include "test_support.hpp"

using namespace presto;
using presto::test::race_window;

namespace {

std::atomic<bool> made{false};  // the record's body, on a runner, has made its thread

// The forked body: runs on the other processor's runner (the joiner is held in the hook and
// cannot run it), makes its thread there with a yield, and stays until the hook has let the
// joiner read the record's state.
int body() {
  this_thread::yield();  // a record on a runner that leaves its processor becomes a thread
  made.store(true, std::memory_order_release);
  while (!race_window.released()) this_thread::yield();
  return 7;
}

// Keeps processor 1 busy until the joiner (or dropper) is held at the race point, so that the
// record is still queued when it gets there, every time; then processor 1 takes it.
void occupy_processor_1() {
  std::atomic<bool> running{false};
  fork(ThreadAttributes{.name = "occupier", .affinity = 1}, [&running] {
    running.store(true, std::memory_order_release);
    while (!race_window.held()) std::this_thread::yield();  // the OS thread's
  }).detach();
  while (!running.load(std::memory_order_acquire)) this_thread::yield();
}

// 20 rounds (not scaled down for the sanitizers: each meets its window at once, without
// stress), each a fresh runtime of two processors whose first thread occupies
// processor 1, then runs `round` (which forks, arms `point`, and joins or drops); after each,
// checks that the round met the window, then `check` (the round's own outcome), then for leaks.
template <class Round, class Check>
void replay(const char* point, Round round, Check check) {
  test::RaceWindow::Installed hook;
  constexpr std::size_t rounds = 20;
  for (std::size_t r = 0; r < rounds; ++r) {
    INFO("round " << r);
    race_window.reset();
    made.store(false);
    Runtime rt{test::runtime_config({2, test::PoolKind::local_queue})};
    rt.run([&] {
      occupy_processor_1();
      round([point] { race_window.arm(point, [] { return made.load(std::memory_order_acquire); }); });
    });
    REQUIRE_FALSE(race_window.timed_out());
    CHECK(race_window.held());
    CHECK(race_window.met());
    CHECK(made.load());
    check();
    test::check_no_leaks(rt);
  }
}

}  // namespace

TEST_CASE("a cancelled join held between a record's thread and its state while a runner makes its thread",
          "[races][lazy]") {
  int value = 0;
  replay(
      "join_elsewhere",
      [&](auto arm) {
        JoinHandle<int> h = fork(body);
        arm();
        std::stop_source stop;
        stop.request_stop();  // a cancellable join does not run the record here: join_elsewhere
        try {
          value = h.join(stop.get_token());  // it had ended: the join succeeds
        } catch (const Cancelled&) {
          value = h.join();  // given up while it ran: the handle stays
        }
      },
      [&] { CHECK(value == 7); });
}

TEST_CASE("a handle dropped between a record's thread and its state while a runner makes its thread",
          "[races][lazy]") {
  std::atomic<int> ran{0};
  int later = 0;
  replay(
      "release_record",
      [&](auto arm) {
        ran.store(0);
        {
          JoinHandle<int> h = fork([&ran] {
            const int v = body();
            ran.fetch_add(1, std::memory_order_relaxed);
            return v;
          });
          arm();
        }  // dropped: release_record, held at its race point
        // A record given back while its runner ran it would be handed to this fork too.
        later = fork([] { return 11; }).join();
      },
      [&] {
        CHECK(ran.load() == 1);
        CHECK(later == 11);
      });
}
