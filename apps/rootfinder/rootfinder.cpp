// presto-rootfinder: Oleinick's synchronous parallel rootfinder on C.mmp (CMU-CS-78-151, 1978),
// the thesis's vehicle for comparing ways to wait.
//
// n-section search for the root of F(x) = Q(x) - h, Q the upper-tail normal integral: n threads
// each evaluate F at one of the n points dividing the bracket into n+1 parts; the last thread to
// post its value does FIND (the sub-interval where F changes sign) and wakes the others one by
// one; that cycle is a STAGE, and a root takes R_n = ceil(log_{n+1}(L/eps)) stages (exactly
// R_n are run, the thesis's model). How the others wait is the experiment (--wait):
//   spin        each polls a flag of its own (keeps its processor; needs a processor per thread)
//   semaphore   each P's a presto::Semaphore of its own, the waker V's it (the thesis's K-SEM)
//   pm          the same semaphores in a runtime whose Scheduler is a user-installed "Policy
//               Module" that charges --pm-cost-us of scheduling work to every wake-up (Hydra's
//               PM0/PM1, which restarted a woken process itself)
// Compute grain (--grain-us, --distribution): each evaluation is F(x) followed by busy work (or,
// with --work sleep, a sleep) drawn from a constant, normal (CV 0.278) or exponential
// distribution, the thesis's synthetic rootfinder.
//
// Every run checks each root against a sequential bisection and against Q(root) = h.
// --table       R_n for n = 1..12 at L/eps = 1e16 against the thesis's sequence
// --sweep       the grain at which --threads threads (default 5) reach 50% of no-overhead
//               performance, per primitive (thesis Table 10), with the measured sync cost
// --variance    speed-up at n = 9 over n = 1 for constant, normal and exponential compute
//               times against the order-statistics prediction (3.375, ~2.39, ~1.19)

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <presto/locks/spin_wait.hpp>
#include <presto/runtime.hpp>
#include <presto/scheduler.hpp>
#include <presto/semaphore.hpp>
#include <presto/this_thread.hpp>

#include "command_line.hpp"

namespace {

using Ns = std::chrono::nanoseconds;
using SteadyClock = std::chrono::steady_clock;

// ---------------------------------------------------------------- the function

// Q(x) = P(Z > x), Z standard normal, for x >= 0: the series below 2.32 and the continued
// fraction above it (the thesis's eqs. 2.2-2.3 with the density factor restored), in long
// double. The number of terms depends on x, as in the thesis.
long double upper_tail(long double x) {
  const long double phi = std::exp(-x * x / 2) / std::sqrt(2 * 3.14159265358979323846264338327950288L);
  if (x < 2.32L) {
    long double term = x, sum = x;
    for (int k = 1; std::fabs(term) > 1e-21L * std::fabs(sum); ++k) {
      term *= x * x / (2 * k + 1);
      sum += term;
    }
    return 0.5L - phi * sum;
  }
  // g = x + 1/(x + 2/(x + 3/(x + ...))) by Lentz's method; Q = phi / g.
  constexpr long double tiny = 1e-300L;
  long double f = x, c = x, d = 0;
  for (int j = 1; j < 10000; ++j) {
    d = x + j * d;
    if (d == 0) d = tiny;
    c = x + j / c;
    if (c == 0) c = tiny;
    d = 1 / d;
    const long double delta = c * d;
    f *= delta;
    if (std::fabs(delta - 1) < 1e-20L) break;
  }
  return phi / f;
}

// ---------------------------------------------------------------- compute grain

// Busy work measured in CPU work, not in wall time (so that threads sharing a core take
// longer, as real computation does): iterations of a dependent multiply-add, calibrated once.
double spin_step(double v) { return v * 1.0000001 + 1e-9; }

// Calibrated against the calling thread's CPU time, not wall time: on a loaded machine the
// calibrating thread may be descheduled, which would make every grain too short.
double iterations_per_ns() {
  static const double rate = [] {
    auto cpu_ns = [] {
      timespec ts{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
      return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
    };
    volatile double sink = 1;
    double v = 1;
    std::uint64_t n = 0;
    const std::int64_t t0 = cpu_ns();
    while (cpu_ns() - t0 < 20'000'000) {
      for (int i = 0; i < 1000; ++i) v = spin_step(v);
      n += 1000;
    }
    sink = v;
    (void)sink;
    return double(n) / double(cpu_ns() - t0);
  }();
  return rate;
}

void compute(Ns grain) {
  const auto n = static_cast<std::uint64_t>(double(grain.count()) * iterations_per_ns());
  volatile double sink = 1;
  double v = sink;
  for (std::uint64_t i = 0; i < n; ++i) v = spin_step(v);
  sink = v;
}

// ---------------------------------------------------------------- stages

constexpr long double kLow = 0, kHigh = 10;        // the bracket of every root: L = 10
constexpr long double kRatio = 1e16L;              // L / eps, as the thesis's R_n sequence implies
constexpr int kThesisR[12] = {54, 34, 27, 23, 21, 19, 18, 17, 16, 16, 15, 15};

// R_n = ceil(log_{n+1}(L/eps)): the smallest R with (n+1)^R >= L/eps, in exact integers (n <= 64).
int stages_for(std::size_t n) {
  const std::uint64_t target = 10'000'000'000'000'000;  // 1e16 (width stays below 1e16 x 65)
  std::uint64_t width = 1;
  int r = 0;
  while (width < target) {
    width *= n + 1;
    ++r;
  }
  return r;
}

// The n-section FIND over points x_0 = a .. x_{n+1} = b with F decreasing (F(a) > 0 > F(b)):
// the new bracket is [x_{k-1}, x_k] for the first k with F(x_k) <= 0.
void find(long double& a, long double& b, const std::vector<long double>& f) {
  const std::size_t n = f.size();
  const long double step = (b - a) / (n + 1);
  std::size_t k = 0;
  while (k < n && f[k] > 0) ++k;
  const long double lo = a + k * step;
  const long double hi = k < n ? a + (k + 1) * step : b;
  if (k < n && f[k] == 0) {  // an exact zero: the bracket closes on it
    a = b = hi;
  } else {
    a = lo;
    b = hi;
  }
}

// The sequential solution: the same search with one point per stage (bisection).
long double sequential_root(long double h) {
  long double a = kLow, b = kHigh;
  std::vector<long double> f(1);
  for (int s = 0; s < stages_for(1); ++s) {
    f[0] = upper_tail((a + b) / 2) - h;
    find(a, b, f);
  }
  return (a + b) / 2;
}

// ---------------------------------------------------------------- options

enum class Wait { spin, semaphore, pm };
enum class Distribution { constant, normal, exponential };
enum class Work { compute, sleep };

const char* name(Wait w) { return w == Wait::spin ? "spin" : w == Wait::semaphore ? "semaphore" : "pm"; }
const char* name(Distribution d) {
  return d == Distribution::constant ? "constant" : d == Distribution::normal ? "normal" : "exponential";
}

struct Options {
  std::size_t threads = 5;
  std::size_t processors = 0;  // 0: one per thread (as on C.mmp)
  Wait wait = Wait::semaphore;
  double grain_us = 0;         // mean compute time added to each evaluation
  Distribution distribution = Distribution::constant;
  Work work = Work::compute;
  double pm_cost_us = 50;
  std::size_t roots = 10;
  std::uint64_t seed = 1;
  bool table = false, sweep = false, variance = false, quick = false;
};

constexpr const char* usage =
    "usage: %s [--threads N] [--processors P] [--wait spin|semaphore|pm] [--grain-us G]\n"
    "          [--distribution constant|normal|exponential] [--work compute|sleep] [--pm-cost-us C]\n"
    "          [--roots K] [--seed S] [--table | --sweep | --variance] [--quick]\n"
    "Finds K roots (default 10) of Q(x) - h by n-section search with N threads per stage (default 5)\n"
    "on P processors (default: one per thread), the last finisher of each stage doing FIND and\n"
    "waking the others through the chosen primitive (default semaphore); each evaluation adds G us\n"
    "of work (default 0) drawn from the distribution (normal: CV 0.278). Checks every root against\n"
    "a sequential bisection. pm: the semaphore with a Policy Module scheduler charging C us per\n"
    "wake-up (default 50).\n"
    "  --table     R_n for n = 1..12 at L/eps = 1e16 against the thesis's sequence\n"
    "  --sweep     per primitive, the grain at which N threads reach 50% of no-overhead performance\n"
    "  --variance  speed-up at n = 9 over n = 1 per distribution against the order statistics\n"
    "              (sleeping work of mean G, default 2000 us)\n"
    "  --quick     fewer roots and grains (CI)\n";

bool parse(int argc, char** argv, Options& o) {
  presto::apps::CommandLine cl{usage};
  std::string wait = "semaphore", distribution = "constant", work = "compute";
  cl.option("--threads", o.threads).option("--processors", o.processors).option("--wait", wait);
  cl.option("--grain-us", o.grain_us).option("--distribution", distribution).option("--work", work);
  cl.option("--pm-cost-us", o.pm_cost_us).option("--roots", o.roots).option("--seed", o.seed);
  cl.flag("--table", o.table).flag("--sweep", o.sweep).flag("--variance", o.variance).flag("--quick", o.quick);
  if (!cl.parse(argc, argv)) return false;
  if (wait == "spin") o.wait = Wait::spin;
  else if (wait == "semaphore") o.wait = Wait::semaphore;
  else if (wait == "pm") o.wait = Wait::pm;
  else return cl.error("--wait must be spin, semaphore or pm (got '" + wait + "')");
  if (distribution == "constant") o.distribution = Distribution::constant;
  else if (distribution == "normal") o.distribution = Distribution::normal;
  else if (distribution == "exponential") o.distribution = Distribution::exponential;
  else return cl.error("--distribution must be constant, normal or exponential (got '" + distribution + "')");
  if (work == "compute") o.work = Work::compute;
  else if (work == "sleep") o.work = Work::sleep;
  else return cl.error("--work must be compute or sleep (got '" + work + "')");
  if (o.threads < 1 || o.threads > 64) return cl.error("--threads must be between 1 and 64");
  if (o.roots < 1) return cl.error("--roots must be at least 1");
  if (!(o.grain_us >= 0) || o.grain_us > 1e7) return cl.error("--grain-us must be between 0 and 1e7");
  if (!(o.pm_cost_us >= 0) || o.pm_cost_us > 1e6) return cl.error("--pm-cost-us must be between 0 and 1e6");
  if (int(o.table) + int(o.sweep) + int(o.variance) > 1) return cl.error("choose one of --table, --sweep, --variance");
  if (o.wait == Wait::spin && o.processors != 0 && o.processors < o.threads) {
    return cl.error("--wait spin needs a processor per thread (a spinning thread keeps its processor): "
                    "--processors " + std::to_string(o.processors) + " < --threads " + std::to_string(o.threads));
  }
  return true;
}

// ---------------------------------------------------------------- the Policy Module

// The thesis's Policy Module: Hydra kept scheduling policy in a user-level subsystem that
// restarted every woken process itself. Here a Scheduler installed by the application: every
// thread made ready passes through ready(), which does `cost` of scheduling work on the
// waker's processor before handing the thread to the pool, so the waker's chain of V's
// serializes on it as on Hydra (PM0 took ~6 ms per V, K-SEM ~3 ms, a spin lock 30 us).
class PolicyModule final : public presto::Scheduler {
 public:
  explicit PolicyModule(Ns cost) : cost_(cost) {}
  void ready(presto::Thread& t) override {
    const auto until = SteadyClock::now() + cost_;
    while (SteadyClock::now() < until) presto::locks::relax_cpu();
    wakeups_.fetch_add(1, std::memory_order_relaxed);
    presto::Scheduler::ready(t);
  }
  std::string_view name() const noexcept override { return "policy-module"; }
  std::uint64_t wakeups() const noexcept { return wakeups_.load(std::memory_order_relaxed); }

 private:
  const Ns cost_;
  std::atomic<std::uint64_t> wakeups_{0};
};

// ---------------------------------------------------------------- one run

struct alignas(64) Flag {
  std::atomic<std::uint64_t> generation{0};
};

struct Result {
  double seconds = 0;
  std::uint64_t stages = 0;
  double sync_ns_per_stage = 0;  // last arrival -> last woken thread resumed, mean
  bool correct = true;
  double worst_error = 0;
  std::size_t processors = 0;
};

// The threads, their shared bracket and their waits.
class Rootfinder {
 public:
  Rootfinder(const Options& o, std::vector<long double> targets)
      : o_(o), n_(o.threads), stages_(stages_for(o.threads)), h_(std::move(targets)), f_(n_), flags_(n_) {
    for (std::size_t i = 0; i < n_; ++i) sems_.push_back(std::make_unique<presto::Semaphore>(0, "wake " + std::to_string(i)));
    roots_.resize(h_.size());
  }

  void worker(std::size_t i) {
    std::mt19937_64 rng(o_.seed * 1000003 + i);
    std::uint64_t generation = 0;
    for (std::size_t r = 0; r < h_.size(); ++r) {
      for (int s = 0; s < stages_; ++s) {
        const long double x = a_ + (i + 1) * ((b_ - a_) / (n_ + 1));
        f_[i] = upper_tail(x) - h_[r];
        const Ns grain = draw(rng);
        if (o_.work == Work::compute) {
          compute(grain);
        } else if (grain.count() > 0) {
          presto::this_thread::sleep_for(grain);
        }
        if (arrived_.fetch_add(1, std::memory_order_acq_rel) == n_ - 1) {
          last_of_stage(r, s);
          for (std::size_t j = 0; j < n_; ++j) {
            if (j != i) wake(j);
          }
        } else {
          sleep(i, ++generation);
          record_max(resumed_, SteadyClock::now().time_since_epoch().count());
        }
      }
    }
  }

  Result result(double seconds, std::size_t processors) const {
    Result res;
    res.seconds = seconds;
    res.stages = total_stages_;
    res.processors = processors;
    res.sync_ns_per_stage = sync_count_ ? double(sync_ns_) / sync_count_ : 0;
    for (std::size_t r = 0; r < h_.size(); ++r) {
      const long double expected = sequential_root(h_[r]);
      const double err = double(std::fabs(roots_[r] - expected));
      const double residual = double(std::fabs(upper_tail(roots_[r]) - h_[r]) / h_[r]);
      res.worst_error = std::max(res.worst_error, err);
      if (err > 1e-14 || residual > 1e-10) res.correct = false;
    }
    return res;
  }

 private:
  Ns draw(std::mt19937_64& rng) const {
    const double mean = o_.grain_us * 1e3;
    double v = mean;
    if (mean > 0 && o_.distribution == Distribution::normal) v = std::normal_distribution<double>(mean, 0.278 * mean)(rng);
    if (mean > 0 && o_.distribution == Distribution::exponential) v = std::exponential_distribution<double>(1 / mean)(rng);
    return Ns(static_cast<std::int64_t>(std::max(0.0, v)));
  }

  static void record_max(std::atomic<std::int64_t>& m, std::int64_t v) {
    std::int64_t cur = m.load(std::memory_order_relaxed);
    while (cur < v && !m.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
    }
  }

  // The last finisher of stage s of root r: account the previous stage's synchronization,
  // FIND, and reset for the next stage (or root). Every other thread is waiting.
  void last_of_stage(std::size_t r, int s) {
    const std::int64_t now = SteadyClock::now().time_since_epoch().count();
    if (last_arrival_ != 0 && n_ > 1) {
      sync_ns_ += resumed_.load(std::memory_order_relaxed) - last_arrival_;
      ++sync_count_;
    }
    last_arrival_ = now;
    find(a_, b_, f_);
    ++total_stages_;
    if (s == stages_ - 1) {  // the root is bracketed to eps: record it, start the next one
      roots_[r] = (a_ + b_) / 2;
      a_ = kLow;
      b_ = kHigh;
    }
    arrived_.store(0, std::memory_order_relaxed);  // published by the wake-ups
  }

  void wake(std::size_t j) {
    if (o_.wait == Wait::spin) {
      flags_[j].generation.fetch_add(1, std::memory_order_release);
    } else {
      sems_[j]->release();
    }
  }

  void sleep(std::size_t i, std::uint64_t generation) {
    if (o_.wait == Wait::spin) {
      presto::locks::SpinWait w;
      while (flags_[i].generation.load(std::memory_order_acquire) != generation) w.poll();
    } else {
      sems_[i]->acquire();
    }
  }

  const Options& o_;
  const std::size_t n_;
  const int stages_;
  std::vector<long double> h_;
  std::vector<long double> roots_;
  long double a_ = kLow, b_ = kHigh;  // written by the last finisher, read after the wake-ups
  std::vector<long double> f_;
  std::vector<Flag> flags_;
  std::vector<std::unique_ptr<presto::Semaphore>> sems_;
  alignas(64) std::atomic<std::size_t> arrived_{0};
  alignas(64) std::atomic<std::int64_t> resumed_{0};
  // The last finishers' own (each stage has one, and they follow one another through the wake-ups).
  std::int64_t last_arrival_ = 0, sync_ns_ = 0, sync_count_ = 0;
  std::uint64_t total_stages_ = 0;
};

// Tail probabilities whose roots spread over the bracket.
std::vector<long double> targets(std::size_t roots) {
  std::vector<long double> h;
  for (std::size_t r = 0; r < roots; ++r) h.push_back(upper_tail(0.3L + 7.4L * (r + 0.5L) / roots));
  return h;
}

Result run_once(const Options& o) {
  presto::RuntimeConfig c;
  c.processors = o.processors != 0 ? o.processors : o.threads;
  c.seed = o.seed;
  if (o.wait == Wait::pm) {
    c.scheduler = std::make_unique<PolicyModule>(std::chrono::duration_cast<Ns>(std::chrono::duration<double, std::micro>(o.pm_cost_us)));
  }
  if (o.work == Work::compute) iterations_per_ns();  // calibrated before the clock starts
  presto::Runtime rt{std::move(c)};
  Rootfinder rf(o, targets(o.roots));
  const auto t0 = SteadyClock::now();
  rt.run([&] {
    std::vector<presto::JoinHandle<void>> hs;
    for (std::size_t i = 0; i < o.threads; ++i) hs.push_back(presto::fork([&rf, i] { rf.worker(i); }));
    for (auto& h : hs) h.join();
  });
  const double seconds = std::chrono::duration<double>(SteadyClock::now() - t0).count();
  return rf.result(seconds, rt.processors());
}

// The same evaluations with no synchronization at all: each thread does its share of every
// stage back to back, on the same processors, in the same run as the measurement it is the
// baseline of (so machine load and core count cancel in the ratio).
double no_overhead_seconds(const Options& o) {
  iterations_per_ns();
  presto::Runtime rt{{.processors = o.processors != 0 ? o.processors : o.threads, .seed = o.seed}};
  const std::vector<long double> h = targets(o.roots);
  const auto grain = std::chrono::duration_cast<Ns>(std::chrono::duration<double, std::micro>(o.grain_us));
  const int stages = stages_for(o.threads);
  std::atomic<double> sink{0};
  const auto t0 = SteadyClock::now();
  rt.run([&] {
    std::vector<presto::JoinHandle<void>> hs;
    for (std::size_t i = 0; i < o.threads; ++i) {
      hs.push_back(presto::fork([&, i] {
        long double acc = 0;
        for (std::size_t r = 0; r < h.size(); ++r) {
          for (int s = 0; s < stages; ++s) {
            acc += upper_tail(kHigh * (i + 1) / (o.threads + 1) / (s + 1)) - h[r];
            compute(grain);
          }
        }
        sink.store(double(acc), std::memory_order_relaxed);
      }));
    }
    for (auto& t : hs) t.join();
  });
  return std::chrono::duration<double>(SteadyClock::now() - t0).count();
}

// ---------------------------------------------------------------- experiments

int table() {
  std::printf("R_n, the stages per root at L/eps = 1e16 (thesis: 54 34 27 23 21 19 18 17 16 16 15 15)\n");
  std::printf("   n:");
  for (int n = 1; n <= 12; ++n) std::printf(" %3d", n);
  std::printf("\n R_n:");
  bool same = true;
  for (int n = 1; n <= 12; ++n) {
    std::printf(" %3d", stages_for(n));
    same = same && stages_for(n) == kThesisR[n - 1];
  }
  std::printf("\ncheck: %s\n", same ? "the thesis's sequence, exactly" : "DIFFERS from the thesis");
  return same ? 0 : 1;
}

bool report_check(const Result& r) {
  if (!r.correct) std::printf("check: a root differs from the sequential solution (worst %.3g) -> WRONG\n", r.worst_error);
  return r.correct;
}

int sweep(Options o) {
  const std::size_t procs = o.processors != 0 ? o.processors : o.threads;
  // Grains below a microsecond separate the primitives when every thread has its own core, where
  // one stage's synchronization costs about a microsecond.
  std::vector<double> grains = {0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000};
  if (o.quick) grains = {0.2, 1, 10, 100, 1000};
  if (o.quick) o.roots = std::min<std::size_t>(o.roots, 2);
  std::printf("Grain sweep: %zu threads on %zu processors (%u hardware threads), at least %zu roots of %d stages;"
              " pm cost %.0f us per wake-up\n", o.threads, procs, std::thread::hardware_concurrency(), o.roots,
              stages_for(o.threads), o.pm_cost_us);
  std::printf("efficiency = time of the same evaluations without synchronization / time (fastest of 3 alternating"
              " runs each)\n"
              "%10s %12s", "grain_us", "no-sync ms");
  const Wait waits[] = {Wait::spin, Wait::semaphore, Wait::pm};
  for (Wait w : waits) std::printf(" %10s", name(w));
  std::printf("\n");
  std::vector<std::vector<double>> eff(3, std::vector<double>(grains.size()));
  std::vector<std::vector<double>> overhead(3);  // us per stage: measured minus no-sync time
  std::vector<std::vector<double>> sync(3);      // us per stage: last arrival to last wake-up
  bool ok = true;
  for (std::size_t g = 0; g < grains.size(); ++g) {
    Options base = o;
    base.grain_us = grains[g];
    // Enough roots for ~20 ms of computation per run, so that starting the runtime does not count.
    const double per_root_us = stages_for(o.threads) * grains[g];
    base.roots = std::clamp<std::size_t>(static_cast<std::size_t>(20'000 / per_root_us), o.roots, o.quick ? 20 : 200);
    base.distribution = Distribution::constant;
    base.work = Work::compute;
    std::printf("%10g", grains[g]);
    for (std::size_t w = 0; w < 3; ++w) {
      Options run = base;
      run.wait = waits[w];
      if (run.wait == Wait::spin && run.processors != 0 && run.processors < run.threads) run.processors = run.threads;
      // The fastest of three alternating runs of each: a loaded machine only ever adds time.
      double free = 1e300;
      Result r;
      r.seconds = 1e300;
      for (int rep = 0; rep < 3; ++rep) {
        free = std::min(free, no_overhead_seconds(run));
        const Result one = run_once(run);
        ok = report_check(one) && ok;
        if (one.seconds < r.seconds) r = one;
      }
      if (w == 0) std::printf(" %12.2f", free * 1e3);
      eff[w][g] = free / r.seconds;
      overhead[w].push_back((r.seconds - free) * 1e6 / double(r.stages));
      sync[w].push_back(r.sync_ns_per_stage / 1e3);
      std::printf(" %10.3f", eff[w][g]);
      std::fflush(stdout);
    }
    std::printf("\n");
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("\n%10s %16s %24s %26s\n", "primitive", "50% grain (us)", "overhead per stage (us)",
              "last arrival->last wake (us)");
  for (std::size_t w = 0; w < 3; ++w) {
    double threshold = -1;
    for (std::size_t g = 0; g < grains.size() && threshold < 0; ++g) {
      if (eff[w][g] < 0.5) continue;
      if (g == 0) {
        threshold = grains[0];
      } else {  // log-linear interpolation between the grains around 50%
        const double t = (0.5 - eff[w][g - 1]) / (eff[w][g] - eff[w][g - 1]);
        threshold = std::exp(std::log(grains[g - 1]) + t * (std::log(grains[g]) - std::log(grains[g - 1])));
      }
    }
    char shown[32];
    if (threshold < 0) {
      std::snprintf(shown, sizeof shown, "> %g", grains.back());
    } else if (threshold == grains[0]) {
      std::snprintf(shown, sizeof shown, "<= %g", grains[0]);
    } else {
      std::snprintf(shown, sizeof shown, threshold < 10 ? "%.1f" : "%.0f", threshold);
    }
    std::printf("%10s %16s %24.1f %26.1f\n", name(waits[w]), shown, median(overhead[w]), median(sync[w]));
  }
  std::printf("(thesis Table 10, 1978, 5 processes: spin 2 ms < K-SEM 18 ms < PM1 33-80 ms < PM0 200 ms. At 50%%\n"
              " efficiency a stage's synchronization costs as much as its computation, so the threshold is about\n"
              " the overhead per stage divided by the compute rounds per stage, here %zu threads on %u cores)\n",
              o.threads, std::thread::hardware_concurrency());
  std::printf("check: every root matched the sequential solution: %s\n", ok ? "yes" : "NO");
  return ok ? 0 : 1;
}

int variance(Options o) {
  if (o.grain_us == 0) o.grain_us = 2000;
  if (o.quick) o.roots = std::min<std::size_t>(o.roots, 3);
  o.work = Work::sleep;
  const double e9 = 1.4850;                                  // E[max of 9 standard normals] (Teichroew)
  double h9 = 0;
  for (int j = 1; j <= 9; ++j) h9 += 1.0 / j;                // E[max of 9 exponentials] / mean
  const double r1 = stages_for(1), r9 = stages_for(9);
  std::printf("Variance experiment: speed-up of 9 threads over 1, %zu roots, sleeping compute of mean %.0f us,"
              " wait %s\n", o.roots, o.grain_us, name(o.wait));
  std::printf("%12s %12s %12s %12s %12s\n", "distribution", "T(1) s", "T(9) s", "speed-up", "predicted");
  bool ok = true;
  for (Distribution d : {Distribution::constant, Distribution::normal, Distribution::exponential}) {
    Options one = o, nine = o;
    one.distribution = nine.distribution = d;
    one.threads = 1;
    nine.threads = 9;
    one.processors = nine.processors = 0;
    const Result a = run_once(one), b = run_once(nine);
    ok = report_check(a) && report_check(b) && ok;
    const double max9 = d == Distribution::constant ? 1 : d == Distribution::normal ? 1 + 0.278 * e9 : h9;
    const double predicted = r1 / (r9 * max9);
    std::printf("%12s %12.3f %12.3f %12.3f %12.3f\n", name(d), a.seconds, b.seconds, a.seconds / b.seconds, predicted);
  }
  std::printf("(prediction: R_1 mu / (R_9 E[max of 9]), the thesis's order statistics: 3.375, ~2.39, ~1.19)\n");
  std::printf("check: every root matched the sequential solution: %s\n", ok ? "yes" : "NO");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  try {
    if (o.table) return table();
    if (o.sweep) return sweep(o);
    if (o.variance) return variance(o);
    if (o.quick) o.roots = std::min<std::size_t>(o.roots, 3);
    const Result r = run_once(o);
    std::printf("PRESTO rootfinder: %zu roots, %zu threads on %zu processors, wait %s, grain %.0f us (%s, %s)\n",
                o.roots, o.threads, r.processors, name(o.wait), o.grain_us, name(o.distribution),
                o.work == Work::compute ? "compute" : "sleep");
    std::printf("%llu stages (R_%zu = %d per root) in %.3f s: %.1f us per stage, synchronization %.1f us per stage\n",
                static_cast<unsigned long long>(r.stages), o.threads, stages_for(o.threads), r.seconds,
                r.seconds * 1e6 / double(r.stages), r.sync_ns_per_stage / 1e3);
    std::printf("check: every root within %.2g of the sequential bisection and Q(root) = h -> %s\n", r.worst_error,
                r.correct ? "correct" : "WRONG");
    return r.correct ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "presto-rootfinder: %s\n", e.what());
    return 1;
  }
}
