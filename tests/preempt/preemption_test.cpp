// Preemption (RuntimeConfig::quantum): a thread that never gives up its processor is preempted
// so the others run; without a quantum it is not; NonPreemptable regions and Spinlock holders
// are left alone until they end; and threads that allocate all the time (libc's malloc holds a
// lock) are preempted without deadlock. The spinning loops are bounded by iteration counts that
// take far more than a quantum (tens of quanta of CPU time; on a loaded machine the wall time
// only grows, and with it the number of quanta that expire).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace presto;
using namespace std::chrono_literals;

namespace {

// Far more than a quantum of 1 ms: a tenth of a second or more on any machine.
constexpr std::uint64_t kLongSpin = 400'000'000;
// Well over ten quanta of 1 ms.
constexpr std::uint64_t kRegionSpin = 40'000'000;

// Spins until `flag` is set or `budget` iterations have passed; true if the flag was seen.
// Plain application code: this is where the quantum signal finds the thread.
bool spin_until(const std::atomic<bool>& flag, std::uint64_t budget) {
  for (std::uint64_t i = 0; i < budget; ++i) {
    if (flag.load(std::memory_order_relaxed)) return true;
  }
  return flag.load(std::memory_order_relaxed);
}

RuntimeConfig config(std::size_t processors, test::PoolKind pool, std::chrono::microseconds quantum) {
  RuntimeConfig c = test::runtime_config({processors, pool});
  c.quantum = quantum;
  return c;
}

// Preemption is off in sanitizer builds (QuantumTimer::unavailable): those tests only check
// that the runtime says so.
bool preemption_available() {
  Runtime probe{{.processors = 1, .quantum = 1ms}};
  if (probe.quantum() == 0us) {
    WARN("preemption is unavailable in this build; preemption tests check nothing else");
    return false;
  }
  return true;
}

const std::vector<test::PoolKind> kPools = {test::PoolKind::fifo, test::PoolKind::lifo, test::PoolKind::priority,
                                            test::PoolKind::local_queue, test::PoolKind::shuffle};

}  // namespace

TEST_CASE("a thread spinning on a flag another thread sets finishes on one processor", "[preempt]") {
  if (!preemption_available()) return;
  auto pool = GENERATE(from_range(kPools));
  INFO((test::Config{1, pool}));
  Runtime rt{config(1, pool, 1ms)};
  REQUIRE(rt.quantum() == 1ms);
  std::atomic<bool> flag{false};
  const bool seen = rt.run([&] {
    return fork([&] {
             auto setter = fork([&] { flag.store(true, std::memory_order_relaxed); });
             const bool s = spin_until(flag, kLongSpin);
             setter.join();
             return s;
           })
        .join();
  });
  CHECK(seen);
  CHECK(rt.stats().preemptions >= 1);
  test::check_no_leaks(rt);
}

TEST_CASE("an inline child that never calls the runtime is preempted as itself", "[preempt]") {
  // The spinner runs inline on main's stack and never calls into the runtime until the flag is
  // set: the quantum must preempt it as itself, with main left blocked on it, so that the
  // setter runs, sees main waiting as a joiner does, and keeps its own identity. (A runtime
  // that ran such a child as a plain call under main's identity, to save the change, would
  // have to make that change before preempting; docs/design/lazy-forks.md, step 2.)
  if (!preemption_available()) return;
  Runtime rt{config(1, test::PoolKind::local_queue, 1ms)};
  std::atomic<bool> flag{false};
  bool seen = false;
  std::string name_after;
  std::string setter_name;
  ThreadState joiner_state = ThreadState::created;
  rt.run([&] {
    Thread& main_thread = Thread::current();
    auto setter = fork(ThreadAttributes{.name = "setter"}, [&] {
      joiner_state = main_thread.state();
      setter_name = Thread::current().name();
      flag.store(true, std::memory_order_relaxed);
    });
    auto spinner = fork(ThreadAttributes{.name = "spinner"}, [&] {
      seen = spin_until(flag, kLongSpin);  // no call into the runtime before the flag
      name_after = Thread::current().name();
    });
    spinner.join();  // withdrawn from the queue, ahead of the setter: run inline
    setter.join();
  });
  CHECK(seen);
  CHECK(name_after == "spinner");
  CHECK(setter_name == "setter");
  CHECK(joiner_state == ThreadState::blocked);  // main waits for the spinner, as a joiner does
  CHECK(rt.stats().inline_joins == 1);
  CHECK(rt.stats().preemptions >= 1);
  test::check_no_leaks(rt);
}

TEST_CASE("without a quantum the spinning thread keeps its processor", "[preempt]") {
  // The same program with quantum 0: the setter cannot run while the spinner spins, so the
  // spinner exhausts its budget without seeing the flag (the test above would fail).
  auto pool = GENERATE(from_range(kPools));
  INFO((test::Config{1, pool}));
  Runtime rt{config(1, pool, 0us)};
  REQUIRE(rt.quantum() == 0us);
  std::atomic<bool> flag{false};
  const bool seen = rt.run([&] {
    return fork([&] {
             auto setter = fork([&] { flag.store(true, std::memory_order_relaxed); });
             const bool s = spin_until(flag, kRegionSpin);
             setter.join();
             return s;
           })
        .join();
  });
  CHECK_FALSE(seen);
  CHECK(rt.stats().preemptions == 0);
  test::check_no_leaks(rt);
}

TEST_CASE("a NonPreemptable region is not preempted; the thread is when it ends", "[preempt]") {
  if (!preemption_available()) return;
  const bool guard_object = GENERATE(true, false);
  INFO((guard_object ? "presto::NonPreemptable" : "this_thread::nonpreemptable()/preemptable()"));
  Runtime rt{config(1, test::PoolKind::fifo, 1ms)};
  std::atomic<bool> flag{false};
  struct Seen {
    bool inside = true, after = false;
  };
  const Seen seen = rt.run([&] {
    auto spinner = fork([&] {
      Seen s;
      auto setter = fork([&] { flag.store(true, std::memory_order_relaxed); });
      if (guard_object) {
        NonPreemptable region;
        s.inside = spin_until(flag, kRegionSpin);
      } else {
        this_thread::nonpreemptable();
        this_thread::nonpreemptable();  // regions nest
        s.inside = spin_until(flag, kRegionSpin / 2);
        this_thread::preemptable();
        s.inside = s.inside || spin_until(flag, kRegionSpin / 2);
        this_thread::preemptable();
      }
      s.after = spin_until(flag, kLongSpin);
      setter.join();
      return s;
    });
    return spinner.join();
  });
  CHECK_FALSE(seen.inside);
  CHECK(seen.after);
  CHECK(rt.stats().preemptions >= 1);
  test::check_no_leaks(rt);
}

TEST_CASE("this_thread::preemptable() outside a region is a UsageError naming the thread", "[preempt]") {
  if (!detail::kCountPreemption) return;  // not counted, so not checked, under ThreadSanitizer
  Runtime rt{{.processors = 1}};
  std::string what;
  rt.run([&] {
    try {
      this_thread::preemptable();
    } catch (const UsageError& e) {
      what = e.what();
    }
  });
  CHECK(what.find("'main'") != std::string::npos);
  CHECK(what.find("preemptable()") != std::string::npos);
}

TEST_CASE("a thread holding a Spinlock is never preempted", "[preempt]") {
  if (!preemption_available()) return;
  auto pool = GENERATE(test::PoolKind::fifo, test::PoolKind::shuffle);
  INFO((test::Config{1, pool}));
  Runtime rt{config(1, pool, 1ms)};
  std::atomic<bool> flag{false};
  Spinlock lock;
  struct Seen {
    bool held = true, after = false;
  };
  const Seen seen = rt.run([&] {
    auto holder = fork([&] {
      Seen s;
      auto other = fork([&] {
        std::scoped_lock guard{lock};  // on one processor: a deadlock if the holder were preempted
        flag.store(true, std::memory_order_relaxed);
      });
      {
        std::scoped_lock guard{lock};
        s.held = spin_until(flag, kRegionSpin);
      }
      s.after = spin_until(flag, kLongSpin);
      other.join();
      return s;
    });
    return holder.join();
  });
  CHECK_FALSE(seen.held);
  CHECK(seen.after);
  test::check_no_leaks(rt);
}

TEST_CASE("threads that allocate all the time are preempted without deadlock", "[preempt]") {
  // std::vector growth and std::string spend much of their time in libc's malloc, whose lock
  // a preempted thread would keep from the next thread on its processor; they also take a
  // presto Lock now and then. The checksum proves every thread did all its work.
  if (!preemption_available()) return;
  auto cfg = GENERATE(test::Config{1, test::PoolKind::local_queue}, test::Config{2, test::PoolKind::fifo},
                      test::Config{2, test::PoolKind::local_queue}, test::Config{2, test::PoolKind::shuffle},
                      test::Config{4, test::PoolKind::lifo});
  INFO(cfg);
  const int threads = 8, rounds = static_cast<int>(test::scaled(20000));
  Runtime rt{config(cfg.processors, cfg.pool, 1ms)};
  const std::uint64_t total = rt.run([&] {
    Lock lock{"total"};
    std::uint64_t sum = 0;
    std::vector<JoinHandle<void>> hs;
    for (int t = 0; t < threads; ++t) {
      hs.push_back(fork([&, t] {
        std::uint64_t mine = 0;
        for (int r = 0; r < rounds; ++r) {
          std::vector<std::string> words;
          for (int w = 0; w < 64; ++w) words.push_back(std::to_string(t * 1'000'003 + r * 64 + w) + " bottles");
          for (const auto& w : words) mine += w.size();
          if (r % 256 == 0) {
            std::scoped_lock guard{lock};
            sum += mine;
            mine = 0;
          }
        }
        std::scoped_lock guard{lock};
        sum += mine;
      }));
    }
    for (auto& h : hs) h.join();
    return sum;
  });
  std::uint64_t expected = 0;
  for (int t = 0; t < threads; ++t) {
    for (int r = 0; r < rounds; ++r) {
      for (int w = 0; w < 64; ++w) expected += std::to_string(t * 1'000'003 + r * 64 + w).size() + 8;
    }
  }
  CHECK(total == expected);
  INFO("preemptions: " << rt.stats().preemptions);
  CHECK(rt.stats().preemptions >= 1);
  test::check_no_leaks(rt);
}

// On one processor a waiter signalled before its monitor's release may stay deferred until its
// signaller leaves the processor (Thread::release_deferred), and so may a semaphore's waiter
// handed off by its release (SynchroObject::wakeup_handoff): a signaller or releaser that then
// spins without calling the runtime is preempted, and the waiter runs.
TEST_CASE("a waiter left deferred by a signaller that then spins runs at the next quantum", "[preempt]") {
  if (!preemption_available()) return;
  auto pool = GENERATE(from_range(kPools));
  const bool semaphore = GENERATE(false, true);
  INFO((test::Config{1, pool}) << (semaphore ? ", a semaphore's release" : ", a condition's signal"));
  Runtime rt{config(1, pool, 1ms)};
  std::atomic<bool> flag{false};
  const bool seen = rt.run([&] {
    if (semaphore) {
      Semaphore go{0, "go"};
      auto waiter = fork([&] {
        go.acquire();
        flag.store(true, std::memory_order_relaxed);
      });
      while (!test::has_waiters(go)) this_thread::yield();
      go.release();
      const bool s = spin_until(flag, kLongSpin);
      waiter.join();
      return s;
    }
    test::SignalledWaiter waiter{[&] { flag.store(true, std::memory_order_relaxed); }};
    waiter.signal();
    const bool s = spin_until(flag, kLongSpin);
    waiter.join();
    return s;
  });
  CHECK(seen);
  test::check_no_leaks(rt);
}
