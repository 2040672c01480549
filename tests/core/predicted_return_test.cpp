// this_thread::yield, Condition::wait and Semaphore::acquire are, on x86-64 System V, assembly
// entries that may return to their callers by a jump rather than a `ret`
// (<presto/predicted_return.hpp>): these tests hold them to a function's contract wherever they
// return to. Threads switch to each other from different call sites (two_sites.hpp), and an
// exception thrown under a yield or an acquire reaches its caller through the entry
// (misuse_test checks the same of Condition::wait's errors). channels_test does the same for
// presto::channels' entries.

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "two_sites.hpp"

using namespace presto;
using test::check_two_sites;
using test::compute;
using test::expected;
using test::from_two_sites;

namespace {

// A thread whose yield throws every third time, after yielding.
class ThrowingYield : public Thread {
 public:
  ThrowingYield(int rounds, int& caught) : Thread("throwing-yield"), rounds_(rounds), caught_(caught) {}

  void yield() override {
    Thread::yield();
    if (++calls_ % 3 == 0) throw std::runtime_error("yield " + std::to_string(calls_));
  }

 protected:
  void run() override {
    for (int r = 0; r < rounds_; ++r) {
      try {
        this_thread::yield();
      } catch (const std::runtime_error& e) {
        if (std::string(e.what()) == "yield " + std::to_string(calls_)) ++caught_;
      }
    }
  }

 private:
  int rounds_;
  int& caught_;
  int calls_ = 0;
};

// A thread whose sleep throws every third time, once woken.
class ThrowingSleep : public Thread {
 public:
  using Thread::Thread;

  void sleep(SynchroObject& so) override {
    Thread::sleep(so);
    if (++calls_ % 3 == 0) throw std::runtime_error("sleep " + std::to_string(calls_));
  }

  int calls() const noexcept { return calls_; }

 private:
  int calls_ = 0;
};

}  // namespace

TEST_CASE("threads yielding from different call sites each return to their own, with their registers",
          "[core][yield]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const int rounds = static_cast<int>(presto::test::scaled(3000));
  test::Record record;
  std::array<std::uint64_t, 3> got{};
  test::run(cfg, [&] {
    auto one = fork([&] { return compute<1>(rounds, record, [] { this_thread::yield(); }); });
    auto two = fork([&] { return compute<2>(rounds, record, [] { this_thread::yield(); }); });
    got[0] = compute<0>(rounds, record, [] { this_thread::yield(); });
    got[1] = one.join();
    got[2] = two.join();
  });
  PRESTO_CHECK_RECORD(record);
  CHECK(got[0] == expected<0>(rounds));
  CHECK(got[1] == expected<1>(rounds));
  CHECK(got[2] == expected<2>(rounds));
}

TEST_CASE("threads handing a monitor's condition to each other from different call sites keep their registers",
          "[core][yield]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const int rounds = static_cast<int>(presto::test::scaled(2000));
  test::Record record;
  std::array<std::uint64_t, 2> got{};
  test::run(cfg, [&] {
    Monitor m{"turns"};
    Condition turn_changed{m, "turn changed"};
    int turn = 0;  // whose turn: thread `turn % 2`
    auto take_turn = [&](int self) {
      Monitor::Entry e{m};
      turn_changed.wait(e, [&] { return turn % 2 == self; });
      ++turn;
      turn_changed.signal();
    };
    got = from_two_sites(rounds, record, [&] { take_turn(0); }, [&] { take_turn(1); });
  });
  check_two_sites(record, got, rounds);
}

TEST_CASE("threads waking each other through semaphores from different call sites keep their registers",
          "[core][yield]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const int rounds = static_cast<int>(presto::test::scaled(2000));
  test::Record record;
  std::array<std::uint64_t, 2> got{};
  test::run(cfg, [&] {
    Semaphore ping{0, "ping"}, pong{0, "pong"};
    ping.set_wait_policy({.mode = WaitMode::block});  // every acquire that finds no unit sleeps
    pong.set_wait_policy({.mode = WaitMode::block});
    got = from_two_sites(
        rounds, record,
        [&] {
          ping.release();
          pong.acquire();
        },
        [&] {
          ping.acquire();
          pong.release();
        });
  });
  check_two_sites(record, got, rounds);
}

TEST_CASE("an exception thrown by a thread's sleep reaches the caller of Semaphore::acquire", "[core][yield]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const int rounds = 30;
  int caught = 0;
  int sleeps = 0;
  test::run(cfg, [&] {
    Semaphore units{0, "units"}, taken{0, "taken"};
    units.set_wait_policy({.mode = WaitMode::block});
    ThrowingSleep t{"throwing-sleep"};
    t.start([&] {
      for (int r = 0; r < rounds; ++r) {
        try {
          units.acquire();
        } catch (const std::runtime_error& e) {
          if (std::string(e.what()) == "sleep " + std::to_string(t.calls())) ++caught;
        }
        taken.release();
      }
    });
    for (int r = 0; r < rounds; ++r) {
      // t blocks only in units.acquire(): once it does, wake it there.
      while (t.state() != ThreadState::blocked) this_thread::yield();
      units.release();
      taken.acquire();
    }
    t.join();
    sleeps = t.calls();
  });
  CHECK(sleeps == rounds);
  CHECK(caught == rounds / 3);
}

TEST_CASE("two threads yielding from two loops on one processor alternate", "[core][yield]") {
  // Every yield switches, and every return goes to the other loop than the one that yielded.
  const int rounds = static_cast<int>(presto::test::scaled(2000));
  std::vector<int> order;
  Runtime rt{{.processors = 1}};
  rt.run([&] {
    auto other = fork([&] {
      for (int r = 0; r < rounds; ++r) {
        order.push_back(1);
        this_thread::yield();
      }
    });
    this_thread::yield();  // the other thread starts first
    for (int r = 0; r < rounds; ++r) {
      order.push_back(0);
      this_thread::yield();
    }
    other.join();
  });
  test::check_no_leaks(rt);
  REQUIRE(order.size() == static_cast<std::size_t>(2 * rounds));
  for (std::size_t i = 0; i < order.size(); ++i) {
    INFO("entry " << i);
    CHECK(order[i] == static_cast<int>(i % 2 == 0 ? 1 : 0));
  }
}

TEST_CASE("an exception thrown by a thread's yield reaches the caller of this_thread::yield", "[core][yield]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const int rounds = 30;
  int caught = 0;
  test::run(cfg, [&] {
    ThrowingYield t{rounds, caught};
    t.start();
    for (int r = 0; r < rounds; ++r) this_thread::yield();
    t.join();
  });
  CHECK(caught == rounds / 3);
}
