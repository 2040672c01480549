// this_thread::yield, Condition::wait and Semaphore::acquire are, on x86-64 System V, assembly
// entries that may
// return to their callers by a jump rather than a `ret` (presto/src/predicted_return.hpp): these
// tests hold them to a function's contract wherever they return to. Threads switch to each
// other from different call sites (each return goes to another site than the last switch's),
// keeping values live across the switches in callee-saved registers and in 16-byte-aligned
// locals, and an exception thrown under a yield or an acquire reaches its caller through the
// entry (misuse_test checks the same of Condition::wait's errors).

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace presto;

namespace {

// Mixes a running value so that a register clobbered across a yield shows in the result.
[[gnu::always_inline]] inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  return (h ^ v) * 0x9E3779B97F4A7C15ull;
}

// Three call sites (Site 0, 1, 2) of a switch, each with values live across it: what they
// compute must be what they compute with no switch at all.
template <int Site, class Switch>
[[gnu::noinline]] std::uint64_t compute(int rounds, test::Record& record, Switch&& switch_threads) {
  std::uint64_t a = Site + 1, b = Site * 7 + 3, c = 0xC0FFEE + Site, h = 0;
  alignas(16) std::array<double, 2> aligned{1.0 * Site, 2.0};
  for (int r = 0; r < rounds; ++r) {
    switch_threads();
    record.expect(reinterpret_cast<std::uintptr_t>(aligned.data()) % 16 == 0,
                  "site " + std::to_string(Site) + ": a 16-byte-aligned local is misaligned after a switch");
    a += b;
    b ^= c;
    c = c * 3 + static_cast<std::uint64_t>(r);
    h = mix(h, a + b + c);
    aligned[0] += aligned[1];
  }
  return mix(h, static_cast<std::uint64_t>(aligned[0]));
}

template <int Site>
std::uint64_t expected(int rounds) {
  test::Record unused;
  return compute<Site>(rounds, unused, [] {});
}

// On a presto thread: Site 0 here and Site 1 on a forked thread, each switching by its own
// call; both results.
template <class Switch0, class Switch1>
std::array<std::uint64_t, 2> from_two_sites(int rounds, test::Record& record, Switch0 switch0, Switch1 switch1) {
  auto other = fork([&] { return compute<1>(rounds, record, switch1); });
  std::array<std::uint64_t, 2> got{compute<0>(rounds, record, switch0), 0};
  got[1] = other.join();
  return got;
}

void check_two_sites(const test::Record& record, const std::array<std::uint64_t, 2>& got, int rounds) {
  PRESTO_CHECK_RECORD(record);
  CHECK(got[0] == expected<0>(rounds));
  CHECK(got[1] == expected<1>(rounds));
}

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
