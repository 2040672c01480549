// Switching: yield ping-pong between two threads, and the condition-variable ping-pong of
// the paper's switch_test (Table III: each thread enters the monitor, signals the condition
// and waits on it) on one and two processors; and the same turns as a producer and a consumer
// take them, each entering the monitor for its turn and leaving it after its signal.
// One operation = one switch / one hand-off.

#include <algorithm>
#include <boost/context/fiber.hpp>
#include <boost/fiber/all.hpp>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <presto/presto.hpp>

#include "suite.hpp"

namespace presto::bench {
namespace {

namespace ctx = boost::context;
namespace fibers = boost::fibers;

void yields(Suite& s, std::uint64_t n) {
  // The floor, two raw Boost.Context fibers resuming each other, and PRESTO's and Boost.Fiber's
  // yields between two threads, in turns (harness.hpp, measure_alternating): their ratios are
  // targets, and a few nanoseconds each move with the host's stretch as much as with the code.
  presto::Runtime rt{{.processors = 1}};
  s.measure_alternating({
      {"yield", "boost.context", 1, n, timed([n] {
         ctx::fiber other{[](ctx::fiber&& back) {
           for (;;) back = std::move(back).resume();
           return std::move(back);
         }};
         for (std::uint64_t i = 0; i < n / 2; ++i) other = std::move(other).resume();
       })},
      {"yield", "presto", 1, n, timed([&rt, n] {
         rt.run([n] {
           auto other = presto::fork([n] {
             for (std::uint64_t i = 0; i < n / 2; ++i) presto::this_thread::yield();
           });
           for (std::uint64_t i = 0; i < n / 2; ++i) presto::this_thread::yield();
           other.join();
         });
       })},
      {"yield", "boost.fiber", 1, n, timed([n] {
         with_fibers(1, [n] {
           fibers::fiber other{[n] {
             for (std::uint64_t i = 0; i < n / 2; ++i) boost::this_fiber::yield();
           }};
           for (std::uint64_t i = 0; i < n / 2; ++i) boost::this_fiber::yield();
           other.join();
         });
       })},
  });
  const std::uint64_t os = n / 20;  // sched_yield is a system call: fewer of them
  s.measure("yield", "std", 1, os, [os] {
    Pinned pin{1};
    std::thread other{[os] {
      for (std::uint64_t i = 0; i < os / 2; ++i) std::this_thread::yield();
    }};
    for (std::uint64_t i = 0; i < os / 2; ++i) std::this_thread::yield();
    other.join();
  });
}

// Two threads take turns: each waits until it is its turn, passes the turn and signals.
template <class Mutex, class CondVar>
void ping_pong(Mutex& m, CondVar& cv, int& turn, int me, std::uint64_t rounds) {
  std::unique_lock lock{m};
  for (std::uint64_t i = 0; i < rounds; ++i) {
    cv.wait(lock, [&] { return turn == me; });
    turn = 1 - me;
    cv.notify_one();
  }
}

// The same, the lock taken for each turn and released after the signal, as a producer and a
// consumer hold it (the README's example): the signaller's wait does not follow its signal.
template <class Mutex, class CondVar>
void turns(Mutex& m, CondVar& cv, int& turn, int me, std::uint64_t rounds) {
  for (std::uint64_t i = 0; i < rounds; ++i) {
    std::unique_lock lock{m};
    cv.wait(lock, [&] { return turn == me; });
    turn = 1 - me;
    cv.notify_one();
  }
}

// PRESTO's players of the same turns: the monitor held across them (switch_test) or entered
// for each.
void presto_ping_pong(presto::Monitor& m, presto::Condition& c, int& turn, int me, std::uint64_t rounds) {
  presto::Monitor::Entry entry{m};
  for (std::uint64_t i = 0; i < rounds; ++i) {
    c.wait(entry, [&] { return turn == me; });
    turn = 1 - me;
    c.signal();
  }
}

void presto_turns(presto::Monitor& m, presto::Condition& c, int& turn, int me, std::uint64_t rounds) {
  for (std::uint64_t i = 0; i < rounds; ++i) {
    presto::Monitor::Entry entry{m};
    c.wait(entry, [&] { return turn == me; });
    turn = 1 - me;
    c.signal();
  }
}

// Two threads of each system take n turns through a monitor and a condition, each player
// taking half: PRESTO's with `presto_player`, std's and Boost.Fiber's with `player` (a generic
// callable over their mutex and condition variable).
template <class PrestoPlayer, class Player>
void take_turns(Suite& s, const char* name, std::size_t p, std::uint64_t n, PrestoPlayer presto_player, Player player) {
  presto::Runtime rt{{.processors = p}};
  s.measure(name, "presto", p, n, [&] {
    rt.run([n, presto_player] {
      presto::Monitor m{"switch"};
      presto::Condition c{m, "turn"};
      int turn = 0;
      auto other = presto::fork([&] { presto_player(m, c, turn, 1, n / 2); });
      presto_player(m, c, turn, 0, n / 2);
      other.join();
    });
  });
  const std::uint64_t os = n / 20;  // a futex hand-off costs microseconds: fewer of them
  s.measure(name, "std", p, os, [os, p, player] {
    Pinned pin{p};
    std::mutex m;
    std::condition_variable cv;
    int turn = 0;
    std::thread other{[&] { player(m, cv, turn, 1, os / 2); }};
    player(m, cv, turn, 0, os / 2);
    other.join();
  });
  s.measure(name, "boost.fiber", p, n, [n, p, player] {
    with_fibers(p, [n, player] {
      fibers::mutex m;
      fibers::condition_variable cv;
      int turn = 0;
      fibers::fiber other{[&] { player(m, cv, turn, 1, n / 2); }};
      player(m, cv, turn, 0, n / 2);
      other.join();
    });
  });
}

}  // namespace

void run_switching(Suite& s) {
  const Options& o = s.options();
  yields(s, o.scaled(20'000'000, 1'000'000));
  for (std::size_t p = 1; p <= std::min<std::size_t>(2, o.max_processors); ++p) {
    const std::uint64_t n = o.scaled(p == 1 ? 4'000'000 : 400'000, p == 1 ? 200'000 : 20'000);
    take_turns(s, "switch_test", p, n, presto_ping_pong,
               [](auto& m, auto& cv, int& turn, int me, std::uint64_t rounds) { ping_pong(m, cv, turn, me, rounds); });
    take_turns(s, "condition_turns", p, n, presto_turns,
               [](auto& m, auto& cv, int& turn, int me, std::uint64_t rounds) { turns(m, cv, turn, me, rounds); });
  }
}

}  // namespace presto::bench
