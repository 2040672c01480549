// presto-dynprog: parallel dynamic programming, after Almquist, Anderson and Lazowska, "The
// measured performance of parallel dynamic programming implementations" (1989).
//
// Two problems whose task graph is a grid (a lattice): the longest common subsequence of two
// random strings over {a, b, c}, and exact multi-class MVA over the population lattice. Each
// is solved by a good sequential program and by the paper's four parallelizations
// (strategies.hpp, lcs.hpp), plus a graph of futures, on each requested number of
// processors. Every parallel solution is checked against the sequential one (the whole LCS
// table; every queue length of every population), and the sequential MVA against PSIM's
// exact_mva. The app prints, per strategy and processor count, the time, the "honest"
// speed-up (sequential time / parallel time) and the "relative" one (the same program on
// one processor / on P), and where the workers' time went: waiting on synchronization
// (barriers, locks, predecessors), idle for want of a ready task, duplicate evaluations, and
// the rest (the paper's "memory contention", inferred as what is not measured).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <presto/presto.hpp>
#include <presto/psim/mva.hpp>

#include "command_line.hpp"
#include "json_line.hpp"
#include "lcs.hpp"
#include "mva_lattice.hpp"
#include "strategies.hpp"

namespace dp = presto::apps::dynprog;

namespace {

struct Options {
  std::string problem = "lcs";
  std::vector<std::size_t> lengths{200, 1000};
  std::vector<int> population{12, 12, 12, 12};
  std::size_t stations = 10;
  std::vector<std::string> strategies;  // empty: every one that applies
  std::vector<std::size_t> processors;  // empty: 1 and every hardware thread
  std::size_t block = 0;                // 0: about 8P supertasks along each side
  int repeat = 3;
  std::uint64_t seed = 1;
  std::uint64_t shuffle = 0;  // nonzero: ShufflePool with this seed (tests: random interleavings)
  bool json = false;
};

constexpr const char* usage =
    "usage: %s [--problem lcs|mva] [--length N[,N...]] [--population N,N[,...]] [--stations K]\n"
    "          [--strategy S[,S...]] [--processors P[,P...]] [--block B] [--repeat R] [--seed S]\n"
    "          [--shuffle SEED] [--json]\n"
    "Solves a dynamic program sequentially and with each parallel strategy on P processors\n"
    "(default: 1 and all), checks every solution and prints times, speed-ups and where the\n"
    "time went (median of R runs, default 3).\n"
    "  lcs: longest common subsequence of two random strings over {a,b,c} of each length N\n"
    "       (default 200,1000); strategies diagonal, pipeline (column locks), task-fifo,\n"
    "       task-lifo, futures; all but the pipeline work on B x B supertasks (default B:\n"
    "       N / 8P, at least 1; --block 1 gives the paper's cell-by-cell diagonal).\n"
    "  mva: exact MVA of a closed network with one class per population entry (default\n"
    "       12,12,12,12; the paper's other case is 200,200) and K queueing stations (default\n"
    "       10); strategies diagonal, pipeline (spin until non-negative), task-fifo,\n"
    "       task-lifo, sync-free, futures.\n"
    "  --shuffle SEED: run on a ShufflePool seeded with SEED (random interleavings, for tests).\n"
    "  --json: also one JSON line per measurement (benchmarks/run.py reads them).\n";

const std::vector<std::string> lcs_strategies{"diagonal", "pipeline", "task-fifo", "task-lifo", "futures"};
const std::vector<std::string> mva_strategies{"diagonal", "pipeline", "task-fifo", "task-lifo", "sync-free", "futures"};

bool parse(int argc, char** argv, Options& o) {
  presto::apps::CommandLine cl{usage};
  cl.option("--problem", o.problem).option("--length", o.lengths).option("--population", o.population);
  cl.option("--stations", o.stations).option("--strategy", o.strategies).option("--processors", o.processors);
  cl.option("--block", o.block).option("--repeat", o.repeat).option("--seed", o.seed).option("--shuffle", o.shuffle);
  cl.flag("--json", o.json);
  if (!cl.parse(argc, argv)) return false;
  if (o.problem != "lcs" && o.problem != "mva") return cl.error("--problem must be lcs or mva");
  const auto& known = o.problem == "lcs" ? lcs_strategies : mva_strategies;
  for (const auto& s : o.strategies) {
    if (std::find(known.begin(), known.end(), s) == known.end()) {
      return cl.error("--strategy: '" + s + "' is not a strategy of --problem " + o.problem);
    }
  }
  if (o.strategies.empty()) o.strategies = known;
  if (o.processors.empty()) o.processors = {1, std::max(1u, std::thread::hardware_concurrency())};
  o.processors.erase(std::unique(o.processors.begin(), o.processors.end()), o.processors.end());
  if (o.repeat <= 0) return cl.error("--repeat must be positive");
  if (std::find(o.processors.begin(), o.processors.end(), 0u) != o.processors.end()) {
    return cl.error("--processors must be positive");
  }
  if (std::find(o.lengths.begin(), o.lengths.end(), 0u) != o.lengths.end() || o.lengths.empty()) {
    return cl.error("--length must be positive");
  }
  if (o.population.empty() || std::any_of(o.population.begin(), o.population.end(), [](int n) { return n < 0; })) {
    return cl.error("--population needs one non-negative count per class");
  }
  if (o.stations == 0 || o.stations > dp::MvaLattice::max_stations) return cl.error("--stations must be 1 to 64");
  return true;
}

// A runtime of p processors, on a ShufflePool if --shuffle was given.
presto::RuntimeConfig config_for(const Options& o, std::size_t p) {
  presto::RuntimeConfig config{.processors = p};
  if (o.shuffle != 0) config.pool = std::make_unique<presto::ShufflePool>(o.shuffle);
  return config;
}

// One measured strategy: the median of the repetitions, and the costs of the median run.
struct Measurement {
  std::vector<double> ms;  // sorted
  dp::Costs costs;
  bool correct = true;
  double median() const { return ms[ms.size() / 2]; }
};

// One run: its time, its costs, whether its result is correct.
struct Run {
  double ms = 0;
  dp::Costs costs;
  bool correct = true;
};

// The time of `f()` in ms, and its result.
template <class F>
std::pair<double, std::invoke_result_t<F>> timed(F f) {
  const auto start = std::chrono::steady_clock::now();
  auto result = f();
  return {std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(), std::move(result)};
}

// Runs `once` `repeat` times, `prepare` before each.
Measurement measure(int repeat, const std::function<void()>& prepare, const std::function<Run()>& once) {
  Measurement m;
  std::vector<Run> runs;
  for (int r = 0; r < repeat; ++r) {
    prepare();
    runs.push_back(once());
    m.correct = m.correct && runs.back().correct;
  }
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.ms < b.ms; });
  for (const Run& r : runs) m.ms.push_back(r.ms);
  m.costs = runs[runs.size() / 2].costs;
  return m;
}

// Prints the table's header, then one row per call; and the JSON line if asked for.
class Report {
 public:
  Report(std::string name, std::size_t param, bool json) : name_(std::move(name)), param_(param), json_(json) {
    std::printf("%-10s %5s %10s %8s %9s %7s %7s %9s %8s %6s\n", "strategy", "procs", "time (ms)", "honest",
                "relative", "wait", "idle", "extra", "other", "check");
  }

  // `one`: the same strategy's median on one processor (0: not measured); `tasks`: how many
  // evaluations a run without duplicates makes.
  void row(const std::string& strategy, std::size_t procs, const Measurement& m, double sequential, double one,
           std::uint64_t tasks) {
    const double t = m.median(), worker_ms = t * static_cast<double>(procs);
    const double wait = m.costs.wait_ns / 1e6, idle = m.costs.idle_ns / 1e6;
    const double extra = static_cast<double>(m.costs.evaluations - std::min(m.costs.evaluations, tasks)) /
                         static_cast<double>(tasks) * sequential;
    // What the workers spent beyond the sequential work, less what was measured: caches,
    // memory traffic, the strategy's own bookkeeping. Futures block off their processors, so
    // their waiting is not worker time and the split does not apply.
    const bool split = strategy != "futures" && strategy != "sequential";
    const double other = worker_ms - sequential - wait - idle - extra;
    std::printf("%-10s %5zu %10.2f %7.2fx %8s %6.1f%% %6.1f%% %8.1f%% %7s %6s\n", strategy.c_str(), procs, t,
                sequential / t, one > 0 ? fmt("%.2fx", one / t).c_str() : "", split ? 100 * wait / worker_ms : 0.0,
                split ? 100 * idle / worker_ms : 0.0, 100 * extra / worker_ms,
                split ? fmt("%.1f%%", 100 * other / worker_ms).c_str() : "", m.correct ? "ok" : "WRONG");
    if (json_) {
      presto::apps::print_json_line({.name = name_, .system = strategy, .processors = procs, .param = param_,
                                     .median_ns = t * 1e6, .min_ns = m.ms.front() * 1e6, .max_ns = m.ms.back() * 1e6,
                                     .repetitions = m.ms.size(),
                                     .extra = {{"honest_speedup", sequential / t}, {"relative_speedup", one > 0 ? one / t : 0.0},
                                               {"wait_pct", split ? 100 * wait / worker_ms : 0.0},
                                               {"idle_pct", split ? 100 * idle / worker_ms : 0.0}}});
    }
    std::fflush(stdout);
  }

 private:
  static std::string fmt(const char* f, double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
  }
  std::string name_;
  std::size_t param_;
  bool json_;
};

// Reports the sequential run, then every strategy on every processor count: run(s, P)
// measures strategy s on P processors; tasks_of(s, P) is how many evaluations it makes
// without duplicates.
void compare(const Options& o, Report& report, const Measurement& sequential, std::uint64_t tasks,
             const std::function<std::uint64_t(const std::string&, std::size_t)>& tasks_of,
             const std::function<Measurement(const std::string&, std::size_t)>& run, bool& all_ok) {
  report.row("sequential", 1, sequential, sequential.median(), 0, tasks);
  all_ok = all_ok && sequential.correct;
  for (const auto& s : o.strategies) {
    double one = 0;
    for (std::size_t p : o.processors) {
      const Measurement m = run(s, p);
      if (p == 1) one = m.median();
      report.row(s, p, m, sequential.median(), one, tasks_of(s, p));
      all_ok = all_ok && m.correct;
    }
  }
}

bool lcs(const Options& o) {
  bool all_ok = true;
  for (std::size_t n : o.lengths) {
    const std::string a = dp::random_string(n, o.seed), b = dp::random_string(n, o.seed + 1);
    dp::Lcs reference(a, b, 1);
    const Measurement sequential = measure(o.repeat, [&] { reference = dp::Lcs(a, b, 1); }, [&] {
      return Run{timed([&] { return (reference.solve_sequentially(), 0); }).first, {}, true};
    });
    std::printf("\nLCS of two random strings of length %zu over {a,b,c}: length %d; sequential %.2f ms\n", n,
                reference.length(), sequential.median());
    Report report("dynprog_lcs", n, o.json);
    auto block_for = [&](const std::string& s, std::size_t p) {
      if (s == "pipeline") return std::size_t{1};
      return o.block != 0 ? o.block : std::max<std::size_t>(1, n / (8 * p));
    };
    auto run = [&](const std::string& s, std::size_t p) {
      presto::Runtime rt{config_for(o, p)};
      std::unique_ptr<dp::Lcs> problem;
      return measure(o.repeat, [&] { problem = std::make_unique<dp::Lcs>(a, b, block_for(s, p)); }, [&] {
        // Timed inside the run: starting and stopping the processors is not the strategy's.
        auto [ms, costs] = rt.run([&] {
          return timed([&] {
            if (s == "diagonal") return dp::diagonal(*problem, p);
            if (s == "pipeline") return dp::pipeline_locks(*problem, p);
            if (s == "task-fifo") return dp::task_graph(*problem, p, dp::Order::fifo);
            if (s == "task-lifo") return dp::task_graph(*problem, p, dp::Order::lifo);
            return dp::futures(*problem);
          });
        });
        return Run{ms, costs, problem->table() == reference.table()};
      });
    };
    // Tasks per run: rows for the pipeline, supertasks otherwise.
    auto tasks_of = [&](const std::string& s, std::size_t p) -> std::uint64_t {
      if (s == "pipeline") return n;
      const std::size_t blocks = (n + block_for(s, p) - 1) / block_for(s, p);
      return blocks * blocks;
    };
    compare(o, report, sequential, n * n, tasks_of, run, all_ok);
  }
  return all_ok;
}

// The benchmark network: one queueing station per --stations, class c's demand at station k
// between 0.1 and 1.0 (a fixed pattern), think time 1 for every class.
presto::psim::MvaModel network(const Options& o) {
  presto::psim::MvaModel m;
  m.delay_station.assign(o.stations, false);
  m.population = o.population;
  for (std::size_t c = 0; c < o.population.size(); ++c) {
    m.demand.emplace_back();
    for (std::size_t k = 0; k < o.stations; ++k) m.demand[c].push_back(0.1 * static_cast<double>(1 + (3 * c + 7 * k) % 10));
    m.think.push_back(1.0);
  }
  return m;
}

bool mva(const Options& o) {
  dp::MvaLattice reference(network(o));
  const std::size_t points = reference.tasks().size(), top = points - 1;
  const Measurement sequential = measure(o.repeat, [&] { reference.reset(); }, [&] {
    return Run{timed([&] {
                 for (std::size_t t = 1; t < points; ++t) reference.solve(t);
                 return 0;
               }).first,
               {}, true};
  });
  // Checked against PSIM's exact MVA: the total queue at every station, at the full population.
  const presto::psim::MvaResult exact = presto::psim::exact_mva(reference.model());
  bool agrees = true;
  for (std::size_t k = 0; k < reference.stations(); ++k) {
    double q = 0;
    for (const auto& per_class : exact.queue) q += per_class[k];
    agrees = agrees && std::abs(q - reference.queue(top, k)) <= 1e-9 * std::max(1.0, q);
  }
  std::printf("\nExact MVA, %zu classes (population", o.population.size());
  for (int n : o.population) std::printf(" %d", n);
  std::printf("), %zu stations: %zu lattice points; sequential %.2f ms; agrees with psim::exact_mva: %s\n",
              reference.stations(), points, sequential.median(), agrees ? "yes" : "NO");
  Report report("dynprog_mva", points, o.json);
  auto run = [&](const std::string& s, std::size_t p) {
    presto::Runtime rt{config_for(o, p)};
    dp::MvaLattice problem(reference.model());
    return measure(o.repeat, [&] { problem.reset(); }, [&] {
      auto [ms, costs] = rt.run([&] {
        return timed([&] {
          if (s == "diagonal") return dp::diagonal(problem, p);
          if (s == "pipeline") return dp::pipeline_spin(problem, p);
          if (s == "task-fifo") return dp::task_graph(problem, p, dp::Order::fifo);
          if (s == "task-lifo") return dp::task_graph(problem, p, dp::Order::lifo);
          if (s == "sync-free") return dp::synchronization_free(problem, p);
          return dp::futures(problem);
        });
      });
      bool same = true;
      for (std::size_t t = 0; t < points; ++t) {
        for (std::size_t k = 0; k < problem.stations(); ++k) same = same && problem.queue(t, k) == reference.queue(t, k);
      }
      return Run{ms, costs, same};
    });
  };
  bool all_ok = agrees;
  compare(o, report, sequential, points, [&](const std::string&, std::size_t) { return points; }, run, all_ok);
  return all_ok;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  try {
    std::printf("Parallel dynamic programming (Almquist, Anderson and Lazowska): median of %d runs.\n"
                "honest = sequential / parallel time; relative = this strategy on 1 processor / on P;\n"
                "wait, idle, extra (duplicate evaluations), other: shares of the workers' time (P x time)\n",
                o.repeat);
    if (o.shuffle != 0) std::printf("ShufflePool, seed %llu\n", static_cast<unsigned long long>(o.shuffle));
    const bool ok = o.problem == "lcs" ? lcs(o) : mva(o);
    std::printf("\n%s\n", ok ? "every solution checked: correct" : "SOME SOLUTION IS WRONG");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "presto-dynprog: %s\n", e.what());
    return 1;
  }
}
