#pragma once
// The ThreadPool conformance harness: checks any pool (PRESTO's or yours) for the properties
// the runtime relies on, on real runtimes with several processors:
//   exactly_once   - every ready thread is dispatched exactly once per time it was made ready:
//                    none lost, none duplicated, none run by two processors at once
//   ready_set      - replace_pool() moves every ready thread into the new pool: sizes before
//                    and after agree and each thread then runs once
//   replace_live   - the pool can be replaced repeatedly while threads ping-pong on monitors
//   size           - size() is exact when no operation is in flight (checked within ready_set)
//
// Framework-neutral: call it from any test framework; it throws PoolConformanceFailure naming
// the check, the processors and the seed (replay with PRESTO_SEED=seed) on the first failure.
//
//   presto::testing::check_pool_conformance([] { return std::make_unique<MyPool>(); });

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <presto/presto.hpp>

namespace presto::testing {

struct PoolConformanceOptions {
  std::vector<std::size_t> processors{1, 2, 4};
  std::size_t threads = 2000;       // threads in the exactly_once check
  std::size_t yields = 16;          // times each of them re-enters the pool
  std::size_t pairs = 64;           // ping-pong pairs in replace_live
  std::size_t rounds = 200;         // ping-pong rounds per pair
  std::size_t replacements = 100;   // replace_pool calls during replace_live
  std::uint64_t seed = 0;           // 0: PRESTO_SEED or a random seed
};

class PoolConformanceFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

inline std::uint64_t conformance_seed(std::uint64_t given) {
  if (given != 0) return given;
  if (const char* env = std::getenv("PRESTO_SEED")) return std::stoull(env);
  return (static_cast<std::uint64_t>(std::random_device{}()) << 32) | std::random_device{}();
}

[[noreturn]] inline void fail(const std::string& check, std::size_t processors, std::uint64_t seed,
                              const std::string& what) {
  throw PoolConformanceFailure("pool conformance check '" + check + "' failed on " + std::to_string(processors) +
                               " processor(s), seed " + std::to_string(seed) + " (replay with PRESTO_SEED=" +
                               std::to_string(seed) + "): " + what);
}

inline void check_quiet(Runtime& rt, const std::string& check, std::size_t processors, std::uint64_t seed) {
  RuntimeStats s = rt.stats();
  if (s.live_threads != 0 || s.ready_threads != 0 || s.stacks_in_use != 0) {
    fail(check, processors, seed,
         "after the run: " + std::to_string(s.live_threads) + " live threads, " + std::to_string(s.ready_threads) +
             " in the pool, " + std::to_string(s.stacks_in_use) + " stacks in use (expected none)");
  }
}

// Runs `body` on `rt`, turning a deadlock (the signature of a pool that lost threads: their
// joiners wait forever) into a conformance failure.
template <class Body>
void run_checked(Runtime& rt, const std::string& check, std::size_t processors, std::uint64_t seed, Body&& body) {
  try {
    rt.run(std::forward<Body>(body));
  } catch (const Deadlock& d) {
    fail(check, processors, seed, std::string("threads were lost: the run ended in a deadlock: ") + d.what());
  }
}

}  // namespace detail

using PoolFactory = std::function<std::unique_ptr<ThreadPool>()>;

inline void check_exactly_once(const PoolFactory& make, std::size_t processors, const PoolConformanceOptions& o,
                               std::uint64_t seed) {
  Runtime rt{{.processors = processors, .pool = make(), .seed = seed}};
  struct Slot {
    std::atomic<int> running{0};
    std::atomic<std::size_t> runs{0};
  };
  std::vector<Slot> slots(o.threads);
  std::atomic<std::size_t> overlaps{0};
  // Kept off the presto stacks: if a broken pool makes the run end abandoned, the handles are
  // still released normally here.
  std::vector<JoinHandle<void>> handles;
  handles.reserve(o.threads);
  detail::run_checked(rt, "exactly_once", processors, seed, [&] {
    for (std::size_t i = 0; i < o.threads; ++i) {
      handles.push_back(fork([&, i] {
        Slot& s = slots[i];
        for (std::size_t y = 0; y <= o.yields; ++y) {
          if (s.running.fetch_add(1) != 0) overlaps.fetch_add(1);  // dispatched twice at once
          s.runs.fetch_add(1);
          s.running.fetch_sub(1);
          if (y < o.yields) this_thread::yield();
        }
      }));
    }
    for (auto& h : handles) h.join();
  });
  if (overlaps.load() != 0) {
    detail::fail("exactly_once", processors, seed,
                 std::to_string(overlaps.load()) + " times a thread ran on two processors at once");
  }
  for (std::size_t i = 0; i < o.threads; ++i) {
    if (slots[i].runs.load() != o.yields + 1) {
      detail::fail("exactly_once", processors, seed,
                   "thread " + std::to_string(i) + " ran " + std::to_string(slots[i].runs.load()) +
                       " slices instead of " + std::to_string(o.yields + 1) + " (lost or duplicated)");
    }
  }
  detail::check_quiet(rt, "exactly_once", processors, seed);
}

inline void check_ready_set(const PoolFactory& make, const PoolConformanceOptions& o, std::uint64_t seed) {
  // One processor: the main thread forks threads that cannot run until it blocks, so the
  // pool's contents are known exactly when it is replaced.
  Runtime rt{{.processors = 1, .pool = make(), .seed = seed}};
  std::atomic<std::size_t> ran{0};
  std::string problem;
  std::vector<JoinHandle<void>> handles;
  detail::run_checked(rt, "ready_set", 1, seed, [&] {
    const std::size_t n = o.threads / 4 + 1;
    for (std::size_t i = 0; i < n; ++i) handles.push_back(fork([&] { ran.fetch_add(1); }));
    Scheduler& s = this_thread::runtime()->scheduler();
    const std::size_t before = s.pool().size();
    std::unique_ptr<ThreadPool> old = s.replace_pool(make());
    const std::size_t after = s.pool().size();
    if (before != n) problem = "size() was " + std::to_string(before) + " with " + std::to_string(n) + " threads ready";
    else if (after != n) problem = "the new pool holds " + std::to_string(after) + " of the " + std::to_string(n) + " ready threads";
    else if (old->size() != 0) problem = "the old pool still holds " + std::to_string(old->size()) + " threads";
    for (auto& h : handles) h.join();
    if (problem.empty() && ran.load() != n) problem = std::to_string(ran.load()) + " of " + std::to_string(n) + " threads ran";
  });
  if (!problem.empty()) detail::fail("ready_set", 1, seed, problem);
  detail::check_quiet(rt, "ready_set", 1, seed);
}

inline void check_replace_live(const PoolFactory& make, std::size_t processors, const PoolConformanceOptions& o,
                               std::uint64_t seed) {
  Runtime rt{{.processors = processors, .pool = make(), .seed = seed}};
  std::atomic<std::size_t> exchanges{0};
  struct Pair {
    Monitor monitor{"pair"};
    Condition turn{monitor, "turn"};
    int whose = 0;
  };
  std::vector<std::unique_ptr<Pair>> pairs;
  std::vector<JoinHandle<void>> players;
  detail::run_checked(rt, "replace_live", processors, seed, [&] {
    for (std::size_t i = 0; i < o.pairs; ++i) {
      pairs.push_back(std::make_unique<Pair>());
      for (int side = 0; side < 2; ++side) {
        players.push_back(fork([&, side, pair = pairs.back().get()] {
          for (std::size_t r = 0; r < o.rounds; ++r) {
            Monitor::Entry entry{pair->monitor};
            pair->turn.wait(entry, [&] { return pair->whose == side; });
            pair->whose = 1 - side;
            exchanges.fetch_add(1);
            pair->turn.signal();
          }
        }));
      }
    }
    Scheduler& s = this_thread::runtime()->scheduler();
    for (std::size_t k = 0; k < o.replacements; ++k) {
      s.replace_pool(k % 2 == 0 ? std::unique_ptr<ThreadPool>(std::make_unique<FifoPool>()) : make());
      this_thread::yield();
    }
    for (auto& p : players) p.join();
  });
  const std::size_t expected = o.pairs * 2 * o.rounds;
  if (exchanges.load() != expected) {
    detail::fail("replace_live", processors, seed,
                 std::to_string(exchanges.load()) + " of " + std::to_string(expected) + " exchanges happened");
  }
  detail::check_quiet(rt, "replace_live", processors, seed);
}

// Runs every check; throws PoolConformanceFailure on the first failure.
inline void check_pool_conformance(const PoolFactory& make, PoolConformanceOptions options = {}) {
  const std::uint64_t seed = detail::conformance_seed(options.seed);
  check_ready_set(make, options, seed);
  for (std::size_t processors : options.processors) {
    check_exactly_once(make, processors, options, seed);
    check_replace_live(make, processors, options, seed);
  }
}

}  // namespace presto::testing
