// Races of a lazy fork's record, replayed every time at the library's race points
// (presto/detail/race_point.hpp; built with -Drace_points=true): one processor is held between
// two reads of a record while the other takes the record to a runner, whose body then makes its
// thread. Before the fix of 2026-12-06 (CHANGELOG, "Lazy forks") a join or a drop held there read
// the state as queued and the thread as made in the queue, and gave the record back while the
// runner still ran it: a cancelled join returned garbage. Found once in CI and in 1 of 166
// replays of a stress test; these tests meet the window in every run.

#include <atomic>
#include <chrono>
#include <cstring>
#include <stop_token>
#include <thread>

#include <catch2/catch.hpp>
#include <presto/detail/race_point.hpp>
#include <presto/presto.hpp>

#include "test_support.hpp"

using namespace presto;

namespace {

// The interleaving's steps, for the hook (which may not call into PRESTO) and the record's body.
struct Window {
  std::atomic<const char*> point{""};   // the race point to hold, its name's prefix
  std::atomic<bool> armed{false};       // the next arrival at `point` is held
  std::atomic<bool> held{false};        // the joiner (or dropper) is between the two reads
  std::atomic<bool> met{false};         // and got there before the body made its thread: the window
  std::atomic<bool> made{false};        // the body, on a runner, has made its thread
  std::atomic<bool> released{false};    // the hook has let the joiner go on
  std::atomic<bool> timed_out{false};   // nobody took the record in time: the test failed
};

Window window;

constexpr auto kPatience = std::chrono::seconds(20);

// Holds the first arrival at the armed point until the body has made its thread on a runner of
// the other processor (or kPatience has passed).
void hold_at_point(const char* point) noexcept {
  const char* held_point = window.point.load(std::memory_order_acquire);
  if (std::strncmp(point, held_point, std::strlen(held_point)) != 0) return;
  bool armed = true;
  if (!window.armed.compare_exchange_strong(armed, false, std::memory_order_acq_rel)) return;
  window.met.store(!window.made.load(std::memory_order_acquire), std::memory_order_relaxed);
  window.held.store(true, std::memory_order_release);
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (!window.made.load(std::memory_order_acquire)) {
    if (std::chrono::steady_clock::now() > deadline) {
      window.timed_out.store(true, std::memory_order_relaxed);
      break;
    }
    std::this_thread::yield();
  }
  window.released.store(true, std::memory_order_release);
}

// Before anything of a round is forked: the round's steps not taken yet.
void reset_window() {
  window.armed.store(false);
  window.held.store(false);
  window.met.store(false);
  window.made.store(false);
  window.released.store(false);
  window.timed_out.store(false);
}

void arm(const char* point) {
  window.point.store(point, std::memory_order_release);
  window.armed.store(true, std::memory_order_release);
}

// The forked body: runs on the other processor's runner (the joiner is held in the hook and
// cannot run it), makes its thread there with a yield, and stays until the hook has let the
// joiner read the record's state.
int body() {
  this_thread::yield();  // a record on a runner that leaves its processor becomes a thread
  window.made.store(true, std::memory_order_release);
  while (!window.released.load(std::memory_order_acquire)) this_thread::yield();
  return 7;
}

// Keeps processor 1 busy until the joiner (or dropper) is held at the race point, so that the
// record is still queued when it gets there, every time; then processor 1 takes it.
void occupy_processor_1() {
  std::atomic<bool> running{false};
  fork(ThreadAttributes{.name = "occupier", .affinity = 1}, [&running] {
    running.store(true, std::memory_order_release);
    while (!window.held.load(std::memory_order_acquire)) std::this_thread::yield();  // the OS thread's
  }).detach();
  while (!running.load(std::memory_order_acquire)) this_thread::yield();
}

RuntimeConfig two_processors() {
  RuntimeConfig c = test::runtime_config({2, test::PoolKind::local_queue});
  c.lazy_forks = true;
  return c;
}

struct HookInstalled {
  HookInstalled() { REQUIRE(detail::set_race_point_hook(hold_at_point)); }
  ~HookInstalled() { detail::set_race_point_hook(nullptr); }
};

// test::scaled(20) rounds, each a fresh runtime of two processors whose first thread occupies
// processor 1 and then runs `round` (which forks, arms a point, and joins or drops); after each,
// checks that the round met the window, then `check` (the round's own outcome), then for leaks.
template <class Round, class Check>
void replay(Round round, Check check) {
  HookInstalled hook;
  const std::size_t rounds = test::scaled(20);
  for (std::size_t r = 0; r < rounds; ++r) {
    INFO("round " << r);
    reset_window();
    Runtime rt{two_processors()};
    rt.run([&] {
      occupy_processor_1();
      round();
    });
    REQUIRE_FALSE(window.timed_out.load());
    CHECK(window.held.load());
    CHECK(window.met.load());
    CHECK(window.made.load());
    check();
    test::check_no_leaks(rt);
  }
}

}  // namespace

TEST_CASE("a cancelled join held between a record's thread and its state while a runner makes its thread",
          "[races][lazy]") {
  int value = 0;
  replay(
      [&] {
        JoinHandle<int> h = fork(body);
        arm("join_elsewhere");
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
      [&] {
        ran.store(0);
        {
          JoinHandle<int> h = fork([&ran] {
            const int v = body();
            ran.fetch_add(1, std::memory_order_relaxed);
            return v;
          });
          arm("release_record");
        }  // dropped: release_record, held at its race point
        // A record given back while its runner ran it would be handed to this fork too.
        later = fork([] { return 11; }).join();
      },
      [&] {
        CHECK(ran.load() == 1);
        CHECK(later == 11);
      });
}
