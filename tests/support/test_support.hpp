#pragma once
// Shared test support: the configuration space every core test runs over (processors
// {1, 2, 4} x every pool), runtimes built for it, and the leak check every test ends with.
//
// Catch2 assertions are not thread-safe, so tests never assert inside presto threads running
// on several processors: they record what happened (Record) and assert after run() returns.

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <presto/presto.hpp>
#include <presto/testing/pool_conformance.hpp>

namespace presto::test {

// local_eager: the default LocalQueuePool with RuntimeConfig::lazy_forks off (every fork a thread).
enum class PoolKind { fifo, lifo, priority, local_queue, local_lifo, shuffle, local_eager };

inline const char* name(PoolKind k) {
  switch (k) {
    case PoolKind::fifo: return "fifo";
    case PoolKind::lifo: return "lifo";
    case PoolKind::priority: return "priority";
    case PoolKind::local_queue: return "local-queue";
    case PoolKind::local_lifo: return "local-queue/lifo";
    case PoolKind::shuffle: return "shuffle";
    case PoolKind::local_eager: return "local-queue/eager-forks";
  }
  return "?";
}

inline std::unique_ptr<ThreadPool> make_pool(PoolKind k) {
  switch (k) {
    case PoolKind::fifo: return std::make_unique<FifoPool>();
    case PoolKind::lifo: return std::make_unique<LifoPool>();
    case PoolKind::priority: return std::make_unique<PriorityPool>();
    case PoolKind::local_queue:
    case PoolKind::local_eager: return std::make_unique<LocalQueuePool>();
    case PoolKind::local_lifo:
      return std::make_unique<LocalQueuePool>(LocalQueuePool::Placement::waker, LocalQueuePool::Order::lifo);
    case PoolKind::shuffle: return std::make_unique<ShufflePool>();
  }
  return nullptr;
}

// Whether the pool is the built-in LocalQueuePool (in either order), under which a thread's
// wake-up may be handed off on one processor (SynchroObject::wakeup_handoff).
inline bool is_local_queue(PoolKind k) {
  return k == PoolKind::local_queue || k == PoolKind::local_lifo || k == PoolKind::local_eager;
}

// The seed of this test process: PRESTO_SEED if set, else random. Printed with every failure.
inline std::uint64_t seed() {
  static const std::uint64_t s = [] {
    if (const char* env = std::getenv("PRESTO_SEED")) return static_cast<std::uint64_t>(std::stoull(env));
    return (static_cast<std::uint64_t>(std::random_device{}()) << 32) | std::random_device{}();
  }();
  return s;
}

// Large counts of stress-like tests are divided by this (sanitizer builds set PRESTO_TEST_SCALE).
inline std::size_t scaled(std::size_t n) {
  static const std::size_t divisor = [] {
    const char* env = std::getenv("PRESTO_TEST_SCALE");
    return env != nullptr ? std::max<std::size_t>(1, std::stoul(env)) : std::size_t{1};
  }();
  return std::max<std::size_t>(1, n / divisor);
}

// The pool conformance harness's workload for the test suites, scaled, with the test
// process's seed; `divisor` shrinks it further (for pools slower to drive).
inline presto::testing::PoolConformanceOptions conformance_options(std::size_t divisor = 1) {
  presto::testing::PoolConformanceOptions o;
  o.threads = scaled(2000 / divisor);
  o.pairs = scaled(64 / divisor);
  o.rounds = scaled(200 / divisor);
  o.replacements = scaled(100 / divisor);
  o.seed = seed();
  return o;
}

struct Config {
  std::size_t processors = 1;
  PoolKind pool = PoolKind::local_queue;
};

inline std::ostream& operator<<(std::ostream& os, const Config& c) {
  return os << c.processors << " processor(s), " << name(c.pool) << " pool, seed " << seed()
            << " (replay: PRESTO_SEED=" << seed() << ")";
}

// Every configuration of the space, for GENERATE.
inline auto configs() {
  std::vector<Config> all;
  for (std::size_t p : {1, 2, 4}) {
    for (PoolKind k : {PoolKind::fifo, PoolKind::lifo, PoolKind::priority, PoolKind::local_queue, PoolKind::local_lifo,
                       PoolKind::shuffle, PoolKind::local_eager}) {
      all.push_back({p, k});
    }
  }
  return Catch::Generators::from_range(all);
}

inline RuntimeConfig runtime_config(const Config& c) {
  return RuntimeConfig{
      .processors = c.processors, .lazy_forks = c.pool != PoolKind::local_eager, .pool = make_pool(c.pool), .seed = seed()};
}

// Nothing of a finished run may linger: no thread, no stack in use, nothing in the pool.
inline void check_no_leaks(const Runtime& rt) {
  RuntimeStats s = rt.stats();
  CHECK(s.live_threads == 0);
  CHECK(s.ready_threads == 0);
  CHECK(s.stacks_in_use == 0);
  CHECK(s.pending_timers == 0);
}

// Runs `f` as the first thread of a runtime for `c`, then checks for leaks. Returns f's result.
template <class F>
auto run(const Config& c, F&& f) {
  Runtime rt{runtime_config(c)};
  auto result = rt.run(std::forward<F>(f));
  check_no_leaks(rt);
  return result;
}

// How many threads wait on `so`, and whether any do, read under its spinlock (the members
// waiter_count() and has_waiters() expect the caller to hold it).
inline std::size_t waiter_count(SynchroObject& so) {
  so.spin_lock();
  const std::size_t n = so.waiter_count();
  so.spin_unlock();
  return n;
}
inline bool has_waiters(SynchroObject& so) { return waiter_count(so) != 0; }

// A thread-safe record of facts established inside presto threads, asserted afterwards.
class Record {
 public:
  void fail(std::string what) {
    std::lock_guard lock(mutex_);
    failures_.push_back(std::move(what));
  }
  void expect(bool ok, const std::string& what) {
    if (!ok) fail(what);
  }
  std::vector<std::string> failures() const {
    std::lock_guard lock(mutex_);
    return failures_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> failures_;
};

// Yields until `done()`, read inside an entry of `m`, holds: a wait for other threads that
// involves no condition of `m` (whose signals the tests that use it look at).
template <class F>
void yield_until_inside(Monitor& m, F done) {
  while (true) {
    {
      Monitor::Entry e{m};
      if (done()) return;
    }
    this_thread::yield();
  }
}

// A thread that waits on a condition of a monitor of its own until it is signalled, then runs
// `then`. Made, signalled and joined by one presto thread. signal() waits (yielding) until the
// thread waits, then signals it from an entry of the monitor and leaves it: on one processor
// with the default pool the waiter then stays deferred past that release until the signaller
// leaves its processor (Thread::release_deferred), which is what the tests using it try.
class SignalledWaiter {
 public:
  template <class F>
  explicit SignalledWaiter(F then)
      : thread_(fork([this, then] {
          {
            Monitor::Entry e{monitor_};
            waiting_ = true;
            go_on_.wait(e, [&] { return go_; });
          }
          then();
        })) {}
  void signal() {
    yield_until_inside(monitor_, [this] { return waiting_; });
    Monitor::Entry e{monitor_};
    go_ = true;
    go_on_.signal();
  }
  void join() { thread_.join(); }

 private:
  Monitor monitor_{"waiter's monitor"};
  Condition go_on_{monitor_, "go on"};
  bool go_ = false;
  bool waiting_ = false;
  JoinHandle<void> thread_;  // last: made once the rest is
};

#define PRESTO_CHECK_RECORD(record)                    \
  do {                                                 \
    for (const auto& failure : (record).failures()) {  \
      FAIL_CHECK(failure);                             \
    }                                                  \
  } while (false)

}  // namespace presto::test
