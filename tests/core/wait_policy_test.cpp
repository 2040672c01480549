// Wait policies (presto/wait_policy.hpp) of Lock, Monitor, Semaphore and Barrier: every mode
// keeps each object's semantics over processors {1, 2, 4} x every pool; a spinning waiter never
// sleeps on the object and a blocking one does; spinners above a ready holder on their
// processor nap after each yield under every pool; spin_then_block sleeps once its budget is
// spent; the competitive mode measures the block + wake-up cost; the runtime default applies
// to objects that inherit it; bad policies are UsageErrors.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace presto;
using namespace std::chrono_literals;

namespace {

const WaitPolicy kPolicies[] = {
    {.mode = WaitMode::block},
    {.mode = WaitMode::spin},
    {.mode = WaitMode::spin_then_block, .budget = 20us},
    {.mode = WaitMode::competitive},
};

std::string describe(const WaitPolicy& p) {
  return std::string(to_string(p.mode)) + (p.budget.count() ? " " + std::to_string(p.budget.count()) + " ns" : "");
}

// Yields until `pred` holds; bounded, so a bug fails instead of hanging.
template <class Pred>
bool eventually(Pred&& pred) {
  for (long i = 0; i < 5'000'000; ++i) {
    if (pred()) return true;
    this_thread::yield();
  }
  return pred();
}

// Holds `lock` while a new thread tries to take it, and reports whether that thread was seen
// queued on it (asleep), looking after each yield and reading under the lock's spinlock (the
// waiter may queue on another processor). A spinning waiter naps now and then, on a timer, but
// never queues on the lock.
//
// The two answers are looked for differently. "Queued" is looked for until it is seen, up to
// `eventually`'s bound: a waiter on another processor may be descheduled by the host for
// milliseconds before it queues, so a fixed number of looks would be a timed test (with 2,000,
// one run in 100 failed under load). "Never queued" is watched for 2,000 looks.
enum class Expect { queues, spins };
bool waiter_queues(Lock& lock, Expect expect) {
  std::atomic<bool> started{false};
  lock.lock();
  auto waiter = fork([&] {
    started.store(true);
    std::scoped_lock g{lock};
  });
  eventually([&] { return started.load(); });
  bool queued = false;
  if (expect == Expect::queues) {
    queued = eventually([&] { return test::has_waiters(lock); });
  } else {
    for (int i = 0; i < 2000 && !queued; ++i) {
      this_thread::yield();
      queued = test::has_waiters(lock);
    }
  }
  lock.unlock();
  waiter.join();
  return queued;
}

}  // namespace

TEST_CASE("every wait policy keeps the semantics of Lock, Monitor, Semaphore and Barrier", "[waiting]") {
  const test::Config cfg = GENERATE(test::configs());
  const WaitPolicy policy = GENERATE(from_range(std::begin(kPolicies), std::end(kPolicies)));
  INFO(cfg << ", policy " << describe(policy) << ", seed " << test::seed());
  Runtime rt{test::runtime_config(cfg)};
  const std::size_t threads = 6, rounds = test::scaled(100);
  Lock lock{"counter"};
  Monitor monitor{"buffer"};
  Condition nonempty{monitor, "nonempty"};
  Semaphore items{0, "items"};
  Barrier barrier{threads, "phase"};
  lock.set_wait_policy(policy);
  monitor.set_wait_policy(policy);
  items.set_wait_policy(policy);
  barrier.set_wait_policy(policy);
  std::size_t counter = 0, in_monitor = 0, phase_errors = 0, consumed = 0;
  std::atomic<std::size_t> leaders{0};
  std::vector<std::atomic<std::size_t>> at_phase(rounds + 1);
  rt.run([&] {
    std::vector<JoinHandle<void>> hs;
    for (std::size_t t = 0; t < threads; ++t) {
      hs.push_back(fork([&, t] {
        for (std::size_t r = 0; r < rounds; ++r) {
          {
            std::scoped_lock g{lock};
            ++counter;
          }
          {
            Monitor::Entry e{monitor};
            ++in_monitor;
          }
          if (t % 2 == 0) {
            items.release();
          } else {
            items.acquire();
            Monitor::Entry e{monitor};
            ++consumed;
          }
          at_phase[r].fetch_add(1);
          if (barrier.arrive_and_wait()) leaders.fetch_add(1);
          if (at_phase[r].load() != threads) {
            Monitor::Entry e{monitor};
            ++phase_errors;  // someone passed the barrier before everyone arrived
          }
        }
      }));
    }
    for (auto& h : hs) h.join();
  });
  CHECK(counter == threads * rounds);
  CHECK(in_monitor == threads * rounds);
  CHECK(consumed == threads / 2 * rounds);
  CHECK(items.value() == 0);
  CHECK(phase_errors == 0);
  CHECK(leaders.load() == rounds);
  CHECK(barrier.phase() == rounds);
  test::check_no_leaks(rt);
}

TEST_CASE("a spinning waiter never queues on the lock; a blocking one does", "[waiting]") {
  const std::size_t processors = GENERATE(1, 2);
  const WaitMode mode = GENERATE(WaitMode::spin, WaitMode::block);
  INFO(processors << " processors, " << to_string(mode));
  Runtime rt{{.processors = processors}};
  Lock lock{"held"};
  lock.set_wait_policy({.mode = mode});
  struct Seen {
    bool waiter_queued = false, got_it = false;
  };
  const Expect expect = mode == WaitMode::block ? Expect::queues : Expect::spins;
  const Seen seen = rt.run([&] { return Seen{waiter_queues(lock, expect), true}; });
  CHECK(seen.got_it);
  CHECK(seen.waiter_queued == (mode == WaitMode::block));
  test::check_no_leaks(rt);
}

// A thread that takes `lock` once `gate` lets it through, and keeps the longest run of yields
// it made with no timed sleep between them: a spinning waiter's give-ways are yields
// (this_thread::yield calls the override) and naps (this_thread::sleep_for sleeps on the
// runtime's timer with sleep_until).
class CountingSpinner : public Thread {
 public:
  CountingSpinner(Lock& lock, Semaphore& gate) : Thread("spinner"), lock_(lock), gate_(gate) {}
  void yield() override {
    longest_.store(std::max(longest_.load(), ++run_));
    Thread::yield();
  }
  bool sleep_until(SynchroObject& so, Clock::time_point deadline) override {
    run_ = 0;
    return Thread::sleep_until(so, deadline);
  }
  int longest_run() const noexcept { return longest_.load(); }

 protected:
  void run() override {
    gate_.acquire();
    std::scoped_lock g{lock_};
  }

 private:
  Lock& lock_;
  Semaphore& gate_;
  int run_ = 0;  // this thread's own
  std::atomic<int> longest_{0};
};

TEST_CASE("spinning waiters above a ready holder on their processor nap after each yield, under every pool",
          "[waiting]") {
  // One processor. The holder (main) is made ready first, then two spinners above it; each
  // spinner polls the lock and gives way every 1,024 polls. Under a pool that serves the newest
  // thread first, their yields only pass the processor between the two of them: a spinner whose
  // yield ran only the other one while the holder waited must nap then, not on its 16th
  // give-way (15 yields in a row). Counted until the holder runs; a run of 2 allows for the other
  // spinner's nap ending between this one's count of the waiting threads and its yield.
  using test::PoolKind;
  const PoolKind pool = GENERATE(PoolKind::fifo, PoolKind::lifo, PoolKind::priority, PoolKind::local_queue,
                                 PoolKind::local_lifo, PoolKind::shuffle, PoolKind::local_eager);
  const test::Config cfg{1, pool};
  INFO(cfg);
  Runtime rt{test::runtime_config(cfg)};
  Lock lock{"held"};
  lock.set_wait_policy({.mode = WaitMode::spin});
  Semaphore gate{0, "gate"}, go{0, "go"};
  struct Seen {
    bool gated = false;  // both spinners waited at the gate before the holder was made ready
    int longest_run = 0;  // the longest run of yields without a nap of either, when the holder ran
  };
  const Seen seen = rt.run([&] {
    lock.lock();
    CountingSpinner a{lock, gate}, b{lock, gate};
    a.start();
    b.start();
    const bool gated = eventually([&] { return a.state() == ThreadState::blocked && b.state() == ThreadState::blocked; });
    auto releaser = fork([&] {
      go.release();  // the holder, ready first
      gate.release(2);
    });
    go.acquire();
    const Seen s{gated, std::max(a.longest_run(), b.longest_run())};
    lock.unlock();
    a.join();
    b.join();
    releaser.join();
    return s;
  });
  CHECK(seen.gated);
  CHECK(seen.longest_run <= 2);
  test::check_no_leaks(rt);
}

TEST_CASE("spin_then_block sleeps once its budget is spent", "[waiting]") {
  Runtime rt{{.processors = 2}};
  Semaphore none{0, "never released in time"};
  none.set_wait_policy({.mode = WaitMode::spin_then_block, .budget = 2ms});
  const bool slept = rt.run([&] {
    auto waiter = fork([&] { none.acquire(); });
    const bool s = eventually([&] { return waiter.thread().state() == ThreadState::blocked; });
    none.release();
    waiter.join();
    return s;
  });
  CHECK(slept);
  test::check_no_leaks(rt);
}

TEST_CASE("the competitive mode measures the cost of a block and wake-up", "[waiting]") {
  const std::size_t processors = GENERATE(1, 2);
  Runtime rt{{.processors = processors}};
  Semaphore ping{0, "ping"}, pong{0, "pong"};
  ping.set_wait_policy({.mode = WaitMode::competitive});
  pong.set_wait_policy({.mode = WaitMode::competitive});
  REQUIRE(ping.block_cost() == 0ns);
  rt.run([&] {
    auto other = fork([&] {
      for (int i = 0; i < 200; ++i) {
        ping.acquire();
        pong.release();
      }
    });
    for (int i = 0; i < 200; ++i) {
      ping.release();
      pong.acquire();
    }
    other.join();
  });
  // Each side sleeps at least once before its first measurement exists, so both have one now.
  CHECK(ping.block_cost() > 0ns);
  CHECK(pong.block_cost() > 0ns);
  CHECK(ping.block_cost() < 1s);
  test::check_no_leaks(rt);
}

TEST_CASE("objects inherit the runtime's wait policy unless they have their own", "[waiting]") {
  Runtime rt{{.processors = 2, .wait_policy = {.mode = WaitMode::spin}}};
  CHECK(rt.wait_policy().mode == WaitMode::spin);
  Lock inherits{"inherits"}, own{"own"};
  own.set_wait_policy({.mode = WaitMode::block});
  CHECK(inherits.wait_policy().mode == WaitMode::inherit);
  struct Seen {
    bool inherits_slept = false, own_slept = false;
  };
  const Seen seen = rt.run([&] { return Seen{waiter_queues(inherits, Expect::spins), waiter_queues(own, Expect::queues)}; });
  CHECK_FALSE(seen.inherits_slept);
  CHECK(seen.own_slept);
  CHECK(Runtime{{.processors = 1}}.wait_policy().mode == WaitMode::block);
}

TEST_CASE("bad wait policies are usage errors", "[waiting]") {
  Lock l{"l"};
  CHECK_THROWS_AS(l.set_wait_policy({.mode = WaitMode::spin_then_block, .budget = -1ns}), UsageError);
  CHECK_THROWS_WITH(l.set_wait_policy({.mode = WaitMode::spin_then_block, .budget = -1ns}),
                    Catch::Contains("lock 'l'") && Catch::Contains("negative budget"));
  CHECK_THROWS_AS(Runtime({.wait_policy = {.mode = WaitMode::spin_then_block, .budget = -5us}}), UsageError);
  CHECK(l.wait_policy().mode == WaitMode::inherit);
}

TEST_CASE("a spinning Lock still refuses to be locked twice by its holder", "[waiting]") {
  Runtime rt{{.processors = 1}};
  Lock l{"mine"};
  l.set_wait_policy({.mode = WaitMode::spin});
  const bool threw = rt.run([&] {
    std::scoped_lock g{l};
    try {
      l.lock();
    } catch (const UsageError&) {
      return true;
    }
    return false;
  });
  CHECK(threw);
}
