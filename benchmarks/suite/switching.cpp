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
  // The floor: two raw Boost.Context fibers resuming each other.
  s.measure("yield", "boost.context", 1, n, [n] {
    ctx::fiber other{[](ctx::fiber&& back) {
      for (;;) back = std::move(back).resume();
      return std::move(back);
    }};
    for (std::uint64_t i = 0; i < n / 2; ++i) other = std::move(other).resume();
  });
  presto::Runtime rt{{.processors = 1}};
  s.measure("yield", "presto", 1, n, [&] {
    rt.run([n] {
      auto other = presto::fork([n] {
        for (std::uint64_t i = 0; i < n / 2; ++i) presto::this_thread::yield();
      });
      for (std::uint64_t i = 0; i < n / 2; ++i) presto::this_thread::yield();
      other.join();
    });
  });
  s.measure("yield", "boost.fiber", 1, n, [n] {
    with_fibers(1, [n] {
      fibers::fiber other{[n] {
        for (std::uint64_t i = 0; i < n / 2; ++i) boost::this_fiber::yield();
      }};
      for (std::uint64_t i = 0; i < n / 2; ++i) boost::this_fiber::yield();
      other.join();
    });
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

void condition_ping_pong(Suite& s, std::size_t p, std::uint64_t n) {
  presto::Runtime rt{{.processors = p}};
  s.measure("switch_test", "presto", p, n, [&] {
    rt.run([n] {
      presto::Monitor m{"switch"};
      presto::Condition c{m, "turn"};
      int turn = 0;
      auto player = [&](int me) {
        presto::Monitor::Entry entry{m};
        for (std::uint64_t i = 0; i < n / 2; ++i) {
          c.wait(entry, [&] { return turn == me; });
          turn = 1 - me;
          c.signal();
        }
      };
      auto other = presto::fork(player, 1);
      player(0);
      other.join();
    });
  });
  const std::uint64_t os = n / 20;  // a futex hand-off costs microseconds: fewer of them
  s.measure("switch_test", "std", p, os, [os, p] {
    Pinned pin{p};
    std::mutex m;
    std::condition_variable cv;
    int turn = 0;
    std::thread other{[&] { ping_pong(m, cv, turn, 1, os / 2); }};
    ping_pong(m, cv, turn, 0, os / 2);
    other.join();
  });
  s.measure("switch_test", "boost.fiber", p, n, [n, p] {
    with_fibers(p, [n] {
      fibers::mutex m;
      fibers::condition_variable cv;
      int turn = 0;
      fibers::fiber other{[&] { ping_pong(m, cv, turn, 1, n / 2); }};
      ping_pong(m, cv, turn, 0, n / 2);
      other.join();
    });
  });
}

void condition_turns(Suite& s, std::size_t p, std::uint64_t n) {
  presto::Runtime rt{{.processors = p}};
  s.measure("condition_turns", "presto", p, n, [&] {
    rt.run([n] {
      presto::Monitor m{"turns"};
      presto::Condition c{m, "turn"};
      int turn = 0;
      auto player = [&](int me) {
        for (std::uint64_t i = 0; i < n / 2; ++i) {
          presto::Monitor::Entry entry{m};
          c.wait(entry, [&] { return turn == me; });
          turn = 1 - me;
          c.signal();
        }
      };
      auto other = presto::fork(player, 1);
      player(0);
      other.join();
    });
  });
  const std::uint64_t os = n / 20;  // a futex hand-off costs microseconds: fewer of them
  s.measure("condition_turns", "std", p, os, [os, p] {
    Pinned pin{p};
    std::mutex m;
    std::condition_variable cv;
    int turn = 0;
    std::thread other{[&] { turns(m, cv, turn, 1, os / 2); }};
    turns(m, cv, turn, 0, os / 2);
    other.join();
  });
  s.measure("condition_turns", "boost.fiber", p, n, [n, p] {
    with_fibers(p, [n] {
      fibers::mutex m;
      fibers::condition_variable cv;
      int turn = 0;
      fibers::fiber other{[&] { turns(m, cv, turn, 1, n / 2); }};
      turns(m, cv, turn, 0, n / 2);
      other.join();
    });
  });
}

}  // namespace

void run_switching(Suite& s) {
  const Options& o = s.options();
  yields(s, o.scaled(20'000'000, 1'000'000));
  for (std::size_t p = 1; p <= std::min<std::size_t>(2, o.max_processors); ++p) {
    condition_ping_pong(s, p, o.scaled(p == 1 ? 4'000'000 : 400'000, p == 1 ? 200'000 : 20'000));
    condition_turns(s, p, o.scaled(p == 1 ? 4'000'000 : 400'000, p == 1 ? 200'000 : 20'000));
  }
}

}  // namespace presto::bench
