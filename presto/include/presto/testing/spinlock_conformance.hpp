#pragma once
// The Spinlock conformance harness: checks any Spinlock subclass (presto::locks' family or
// yours) for what PRESTO's objects and users rely on:
//   mutual_exclusion - presto threads on 1, 2 and 4 processors (the seeded shuffle pool) and
//                      plain OS threads, mixing lock() and try_lock(), never overlap inside the
//                      lock, and a plain counter incremented inside it loses no increment
//   try_lock         - try_lock fails while another thread holds the lock, succeeds when free
//   fifo             - (only if the lock promises it) waiters that arrive one after another
//                      acquire in that order
//   preemption       - with a 1 ms quantum on one processor, a thread holding the lock is not
//                      preempted inside it (rule A: no other thread runs meanwhile), and a
//                      quantum that expired meanwhile preempts it once it has released the lock
//                      (skipped where preemption is unavailable: Runtime::quantum() is 0)
//
// Framework-neutral: it throws SpinlockConformanceFailure naming the check, the processors and
// the seed (replay with PRESTO_SEED=seed) on the first failure.
//
//   presto::testing::check_spinlock_conformance([] { return std::make_unique<MyLock>(); },
//                                               {.fifo = true});
//
// The fifo check cannot see when a waiter has queued: it starts waiters one at a time with a
// pause between them and passes once three rounds came out in arrival order (out of ten, the
// pause doubling each round), so a FIFO lock passes on a loaded machine and a lock that orders
// four waiters at random fails with probability above 99%.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <presto/presto.hpp>
#include <presto/testing/pool_conformance.hpp>

namespace presto::testing {

struct SpinlockConformanceOptions {
  std::vector<std::size_t> processors{1, 2, 4};
  std::size_t threads = 8;          // presto threads in mutual_exclusion
  std::size_t os_threads = 3;       // plain OS threads in mutual_exclusion
  std::size_t iterations = 4000;    // acquisitions per thread
  bool fifo = false;                // check FIFO order (only for locks that promise it)
  bool preemption = true;           // check rule A (needs ~0.1-0.5 s of CPU)
  std::uint64_t seed = 0;           // 0: PRESTO_SEED or a random seed
};

class SpinlockConformanceFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using SpinlockFactory = std::function<std::unique_ptr<Spinlock>()>;

namespace spinlock_checks {

[[noreturn]] inline void fail(const std::string& check, std::size_t processors, std::uint64_t seed,
                              const std::string& what) {
  throw SpinlockConformanceFailure("spinlock conformance check '" + check + "' failed on " +
                                   std::to_string(processors) + " processor(s), seed " + std::to_string(seed) +
                                   " (replay with PRESTO_SEED=" + std::to_string(seed) + "): " + what);
}

// The shared state of mutual_exclusion: `inside` catches two holders at once, `count` (plain,
// so ThreadSanitizer also reports a broken lock) catches lost updates.
struct Exclusion {
  std::atomic<int> inside{0};
  std::atomic<std::size_t> overlaps{0};
  std::size_t count = 0;

  // One acquisition: by try_lock every fourth time (retrying, yielding between tries).
  template <class Yield>
  void once(Spinlock& l, std::size_t i, Yield&& yield) {
    if (i % 4 == 3) {
      while (!l.try_lock()) yield();
    } else {
      l.lock();
    }
    if (inside.fetch_add(1, std::memory_order_relaxed) != 0) overlaps.fetch_add(1, std::memory_order_relaxed);
    const std::size_t seen = count;
    for (int k = 0; k < 16; ++k) {  // a critical section long enough for a second holder to show
      if (inside.load(std::memory_order_relaxed) != 1) overlaps.fetch_add(1, std::memory_order_relaxed);
    }
    count = seen + 1;
    inside.fetch_sub(1, std::memory_order_relaxed);
    l.unlock();
  }
};

inline void check_exclusion_result(const Exclusion& e, std::size_t expected, std::size_t processors,
                                   std::uint64_t seed, const std::string& who) {
  if (e.overlaps.load() != 0) {
    fail("mutual_exclusion", processors, seed,
         who + ": " + std::to_string(e.overlaps.load()) + " times two threads were inside the lock at once");
  }
  if (e.count != expected) {
    fail("mutual_exclusion", processors, seed,
         who + ": the counter guarded by the lock reads " + std::to_string(e.count) + " instead of " +
             std::to_string(expected) + " (lost updates)");
  }
}

inline void check_mutual_exclusion(const SpinlockFactory& make, std::size_t processors,
                                   const SpinlockConformanceOptions& o, std::uint64_t seed) {
  std::unique_ptr<Spinlock> lock = make();
  Exclusion e;
  Runtime rt{{.processors = processors, .pool = std::make_unique<ShufflePool>(seed), .seed = seed}};
  std::vector<JoinHandle<void>> handles;
  rt.run([&] {
    for (std::size_t t = 0; t < o.threads; ++t) {
      handles.push_back(fork([&, t] {
        for (std::size_t i = 0; i < o.iterations; ++i) {
          e.once(*lock, i + t, [] { this_thread::yield(); });
          if (i % 64 == 0) this_thread::yield();  // let the threads of a processor interleave
        }
      }));
    }
    for (auto& h : handles) h.join();
  });
  check_exclusion_result(e, o.threads * o.iterations, processors, seed, std::to_string(o.threads) + " presto threads");
  RuntimeStats s = rt.stats();
  if (s.live_threads != 0 || s.stacks_in_use != 0) {
    fail("mutual_exclusion", processors, seed, "threads or stacks left over after the run");
  }
}

inline void check_plain_threads(const SpinlockFactory& make, const SpinlockConformanceOptions& o, std::uint64_t seed) {
  std::unique_ptr<Spinlock> lock = make();
  Exclusion e;
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < o.os_threads; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < o.iterations; ++i) e.once(*lock, i + t, [] { std::this_thread::yield(); });
    });
  }
  for (auto& t : threads) t.join();
  check_exclusion_result(e, o.os_threads * o.iterations, 0, seed, std::to_string(o.os_threads) + " plain OS threads");
}

inline void check_try_lock(const SpinlockFactory& make, std::uint64_t seed) {
  std::unique_ptr<Spinlock> lock = make();
  if (!lock->try_lock()) fail("try_lock", 0, seed, "try_lock failed on a new lock");
  bool other = true;
  std::thread([&] {
    other = lock->try_lock();
    if (other) lock->unlock();
  }).join();
  if (other) fail("try_lock", 0, seed, "try_lock succeeded from another thread while the lock was held");
  lock->unlock();
  std::thread([&] {
    other = lock->try_lock();
    if (other) lock->unlock();
  }).join();
  if (!other) fail("try_lock", 0, seed, "try_lock failed from another thread after the holder released the lock");
  lock->lock();  // and lock() still works after the try_locks
  lock->unlock();
}

// One fifo round: the caller holds the lock while `waiters` OS threads arrive one after
// another, `gap` pauses apart; true if they acquired it in arrival order.
inline bool fifo_round(Spinlock& lock, std::size_t waiters, std::uint64_t gap) {
  std::atomic<std::size_t> started{0};
  std::vector<std::size_t> order;
  order.reserve(waiters);
  std::vector<std::thread> threads;
  lock.lock();
  for (std::size_t k = 0; k < waiters; ++k) {
    threads.emplace_back([&, k] {
      started.fetch_add(1);
      lock.lock();
      order.push_back(k);  // under the lock
      lock.unlock();
    });
    while (started.load() != k + 1) std::this_thread::yield();
    for (std::uint64_t i = 0; i < gap; ++i) {
      if (i % 1024 == 0) std::this_thread::yield();  // let the new waiter run on a busy machine
    }
  }
  lock.unlock();
  for (auto& t : threads) t.join();
  for (std::size_t k = 0; k < waiters; ++k) {
    if (order[k] != k) return false;
  }
  return true;
}

inline void check_fifo(const SpinlockFactory& make, std::uint64_t seed) {
  std::unique_ptr<Spinlock> lock = make();
  constexpr std::size_t kWaiters = 4, kRounds = 10, kNeeded = 3;
  std::size_t in_order = 0;
  std::uint64_t gap = 1 << 14;
  for (std::size_t r = 0; r < kRounds && in_order < kNeeded; ++r, gap *= 2) {
    if (fifo_round(*lock, kWaiters, gap)) ++in_order;
  }
  if (in_order < kNeeded) {
    fail("fifo", 0, seed,
         std::to_string(kWaiters) + " waiters arriving one after another acquired the lock in arrival order in only " +
             std::to_string(in_order) + " of " + std::to_string(kRounds) + " rounds");
  }
}

// Spins until `flag` is set or `budget` iterations passed; plain code, where a quantum finds it.
inline bool spin_until(const std::atomic<bool>& flag, std::uint64_t budget) {
  for (std::uint64_t i = 0; i < budget; ++i) {
    if (flag.load(std::memory_order_relaxed)) return true;
  }
  return flag.load(std::memory_order_relaxed);
}

inline void check_preemption(const SpinlockFactory& make, std::uint64_t seed) {
  using namespace std::chrono_literals;
  Runtime rt{{.processors = 1, .pool = std::make_unique<ShufflePool>(seed), .seed = seed, .quantum = 1ms}};
  if (rt.quantum() == 0us) return;  // preemption unavailable in this build
  constexpr std::uint64_t kRegionSpin = 40'000'000;   // well over ten quanta of 1 ms
  constexpr std::uint64_t kLongSpin = 400'000'000;    // a tenth of a second or more
  std::unique_ptr<Spinlock> lock = make();
  std::atomic<bool> flag{false};
  struct Seen {
    bool inside = true, after = false;
  };
  const Seen seen = rt.run([&] {
    Seen s;
    auto other = fork([&] { flag.store(true, std::memory_order_relaxed); });  // runs only if we are preempted
    {
      std::scoped_lock guard{*lock};
      s.inside = spin_until(flag, kRegionSpin);
    }
    s.after = spin_until(flag, kLongSpin);
    other.join();
    return s;
  });
  if (seen.inside) fail("preemption", 1, seed, "the holder was preempted inside the lock (another thread ran)");
  if (!seen.after) fail("preemption", 1, seed, "the holder was never preempted after releasing the lock");
}

}  // namespace spinlock_checks

// Runs every check on locks made by `make`; throws SpinlockConformanceFailure on the first failure.
inline void check_spinlock_conformance(const SpinlockFactory& make, const SpinlockConformanceOptions& o = {}) {
  const std::uint64_t seed = detail::conformance_seed(o.seed);
  spinlock_checks::check_try_lock(make, seed);
  for (std::size_t p : o.processors) spinlock_checks::check_mutual_exclusion(make, p, o, seed);
  spinlock_checks::check_plain_threads(make, o, seed);
  if (o.fifo) spinlock_checks::check_fifo(make, seed);
  if (o.preemption) spinlock_checks::check_preemption(make, seed);
}

}  // namespace presto::testing
