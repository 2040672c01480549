#pragma once
// The benchmark suite's shared pieces: options, the results of the run, CPU pinning for the
// OS-thread baselines and a runner that gives Boost.Fiber several processors. Each workload
// file (switching, threads, locks, matmul, memory) measures PRESTO beside its peers and adds
// the results here; main.cpp turns them into ratios.

#include <sched.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../support/harness.hpp"

namespace presto::bench {

struct Options {
  bool quick = false;
  std::size_t max_processors = 2;  // curves run on 1..max_processors
  bool doubling = false;           // ... or on 1, 2, 4, ..., max_processors (many cores, less time)
  int repetitions = 7;
  // The processor counts a curve is measured at, ascending, ending with max_processors.
  std::vector<std::size_t> curve() const {
    std::vector<std::size_t> ps;
    for (std::size_t p = 1; p < max_processors; p = doubling ? 2 * p : p + 1) ps.push_back(p);
    ps.push_back(max_processors);
    return ps;
  }
  // Divides the big counts (1,000,000 threads, ...) in --quick runs.
  std::uint64_t scaled(std::uint64_t full, std::uint64_t quick_value) const { return quick ? quick_value : full; }
};

class Suite {
 public:
  explicit Suite(Options options) : options_(options) {}
  const Options& options() const noexcept { return options_; }

  // Measures through the harness and keeps the result. repetitions 0: the options' count.
  const Result& measure(std::string name, std::string system, std::size_t processors, std::uint64_t operations,
                        const std::function<void()>& body, std::uint64_t param = 0, int repetitions = 0);
  // The same for a body that returns its own time (harness.hpp, Timed).
  const Result& measure_timed(std::string name, std::string system, std::size_t processors, std::uint64_t operations,
                              const Timed& body, std::uint64_t param = 0);
  // The same for measurements taken in turns (harness.hpp, measure_alternating), kept in order.
  void measure_alternating(const std::vector<Alternative>& alts);
  const Result& add(Result r);  // prints its JSON line and keeps it
  void keep(Result r) { results_.push_back(std::move(r)); }  // a peer's, already printed
  // The result with these keys, or nullptr.
  const Result* find(const std::string& name, const std::string& system, std::size_t processors,
                     std::uint64_t param = 0) const;

 private:
  Options options_;
  std::deque<Result> results_;  // stable addresses for Ratio
};

// Pins the calling OS thread (and threads it starts) to the first `cpus` CPUs it may use, for
// the lifetime of the object; the previous mask comes back afterwards.
class Pinned {
 public:
  explicit Pinned(std::size_t cpus);
  // Pins the calling OS thread to one CPU: the `index`-th of those it may use (modulo their
  // number). For a baseline of P OS threads, one per CPU, that the kernel's wake-up placement
  // must not put on one CPU together (it may, for a millisecond or more, when they are new).
  static void only(std::size_t index);
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
  ~Pinned();

 private:
  cpu_set_t saved_;
};

// Runs `body` on a fresh OS thread that uses Boost.Fiber; with processors > 1, `processors`
// OS threads share the fibers through boost::fibers::algo::shared_work. Returns when body has
// returned (its fibers joined) and the helper threads have stopped. Everything runs on the
// first `processors` CPUs.
void with_fibers(std::size_t processors, const std::function<void()>& body);

#if PRESTO_BENCH_ONETBB
// oneTBB's task scheduler on the first `processors` CPUs, for as long as the object lives:
// run(body) runs body inside an arena of that many threads, where it may spawn tasks. The
// workers are started fresh for each object and gone when it is destroyed (tbb::finalize),
// so that a curve's next point starts its own under its own CPU mask, and no worker is left
// spinning beside the next measurement.
class OneTbb {
 public:
  explicit OneTbb(std::size_t processors);
  OneTbb(const OneTbb&) = delete;
  OneTbb& operator=(const OneTbb&) = delete;
  ~OneTbb();
  void run(const std::function<void()>& body);

 private:
  struct State;
  Pinned pin_;
  std::unique_ptr<State> state_;
};
#endif

std::vector<std::size_t> figure3_counts(const Options& o);

void run_switching(Suite& s);
void run_threads(Suite& s);
void run_locks(Suite& s);
void run_matmul(Suite& s);
void run_memory(Suite& s);

}  // namespace presto::bench
