// spinlocks: how a waiting thread should wait, measured (docs/guide/waiting.md).
//
//   anderson   Anderson's curves (1990, Figure 3): P presto threads on P processors loop
//              { lock; a critical section touching two shared lines; unlock; 10 pauses } and
//              the time per critical section is reported against P, for each lock of
//              presto::locks and Concurrency Kit's equivalents (same loop, the same
//              Spinlock wrapper, benchmarks/peers/ck_locks.c), P beyond the hardware threads included (multiprogrammed: the OS may
//              deschedule the holder or the next waiter in a queue)
//   lock_wait  a presto::Lock under contention with each wait policy, T threads on 2
//              processors, hold times exponential or high-variance (CV ~3.3), mean 2 us, 4 us
//              of work between; per critical section. Prediction (Karlin et al.): the
//              competitive policy costs at most 2x the better of always-spin and always-block
//   barrier    a presto::Barrier with each wait policy, n threads computing an exponential or
//              high-variance time (mean 20 us) per phase; per phase, beside the no-overhead
//              prediction E[max of n] (order statistics) when n <= processors
//
// JSON lines as benchmarks/support/harness.hpp (system = lock or policy name, param = P or
// threads); benchmarks/run.py plots them. --quick: CI's smoke size. --only anderson,lock_wait,barrier.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <new>
#include <utility>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ck_locks.h"

#include <presto/locks/locks.hpp>
#include <presto/presto.hpp>

#include "command_line.hpp"
#include "harness.hpp"

namespace {

using namespace presto;
using SteadyClock = std::chrono::steady_clock;

// ---------------------------------------------------------------- Concurrency Kit, as Spinlocks

// A CK lock (benchmarks/peers/ck_locks.c) as a presto::Spinlock: the same loop drives both.
// Costs one out-of-line call per lock and per unlock more than CK inlined.
class CkLock final : public Spinlock {
 public:
  explicit CkLock(int kind) : l_(ck_bench_new(kind)) {
    if (l_ == nullptr) throw std::bad_alloc();
  }
  ~CkLock() override { ck_bench_free(l_); }

 protected:
  void acquire() noexcept override { ck_bench_lock(l_); }
  bool try_acquire() noexcept override { return false; }  // not used by the benchmark
  void release() noexcept override { ck_bench_unlock(l_); }

 private:
  struct ck_bench_lock* l_;  // "struct": the function ck_bench_lock hides the name
};

// Every lock of the curves: presto::locks' kinds, then Concurrency Kit's.
std::vector<std::pair<std::string, std::function<std::unique_ptr<Spinlock>()>>> all_locks() {
  std::vector<std::pair<std::string, std::function<std::unique_ptr<Spinlock>()>>> out;
  for (const locks::SpinlockKind& k : locks::spinlock_kinds()) {
    out.emplace_back(std::string(k.name), [n = k.name] { return locks::make_spinlock(n); });
  }
  for (int i = 0; ck_bench_name(i) != nullptr; ++i) {
    out.emplace_back(ck_bench_name(i), [i]() -> std::unique_ptr<Spinlock> { return std::make_unique<CkLock>(i); });
  }
  return out;
}

struct Options {
  bool quick = false;
  std::vector<std::string> only{"anderson", "lock_wait", "barrier"};
  std::uint64_t seed = 1;
};

bool wanted(const Options& o, const char* group) { return std::find(o.only.begin(), o.only.end(), group) != o.only.end(); }

// ---------------------------------------------------------------- Anderson's curves

struct alignas(64) Shared {
  std::uint64_t a = 0;
  alignas(64) std::uint64_t b = 0;
};

void anderson(const Options& o) {
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::size_t> ps = {1, 2, 3, 4, 6};
  if (o.quick) ps = {1, 2, 4};
  std::printf("# anderson: ns per critical section against spinning threads (one per processor; %zu hardware"
              " threads: beyond that the machine is multiprogrammed)\n", cores);
  for (const auto& [name, make] : all_locks()) {
    for (std::size_t p : ps) {
      std::unique_ptr<Spinlock> lock = make();
      Shared shared;
      Runtime rt{{.processors = p, .seed = o.seed}};
      // Runs up to `ops` sections over the p threads, each thread stopping early once `deadline`
      // has passed (looked at every 64 sections); returns the sections done.
      auto sections = [&](std::uint64_t ops, SteadyClock::time_point deadline) {
        std::atomic<std::uint64_t> done{0};
        rt.run([&] {
          std::vector<JoinHandle<void>> hs;
          for (std::size_t t = 0; t < p; ++t) {
            hs.push_back(fork([&] {
              std::uint64_t i = 0;
              for (; i < ops / p && ((i & 63) != 0 || SteadyClock::now() < deadline); ++i) {
                lock->lock();
                ++shared.a;
                ++shared.b;
                lock->unlock();
                for (int d = 0; d < 10; ++d) locks::relax_cpu();
              }
              done.fetch_add(i);
            }));
          }
          for (auto& h : hs) h.join();
        });
        return done.load();
      };
      // Each run does up to 200,000 sections (a twentieth with --quick) but stops after about
      // 2 s: where a hand-off waits for the OS (more spinners than free cores, or a loaded
      // machine, where a FIFO lock hands over once per time slice) a point costs seconds, not
      // the minutes a fixed count took (a full run once passed 25 minutes on a loaded 2-core
      // machine). The time per section is over the sections each run did.
      const std::uint64_t ops = 200'000 / (o.quick ? 20 : 1);
      const int reps = o.quick || p > cores ? 1 : 3;
      std::vector<double> per_op;
      std::uint64_t fewest = ops;  // sections in the shortest run, printed as the operations
      for (int r = -1; r < reps; ++r) {  // r = -1: the warm-up
        const auto t0 = SteadyClock::now();
        const std::uint64_t done = sections(ops, t0 + std::chrono::seconds(2));
        const double ns = std::chrono::duration<double, std::nano>(SteadyClock::now() - t0).count();
        if (r < 0) continue;
        per_op.push_back(ns / static_cast<double>(std::max<std::uint64_t>(done, 1)));
        fewest = std::min(fewest, done);
      }
      std::sort(per_op.begin(), per_op.end());
      bench::print_json({"anderson", name, p, fewest, per_op[per_op.size() / 2], per_op.front(), per_op.back(), reps, p});
    }
  }
}

// ---------------------------------------------------------------- wait policies

// Busy for `ns` of wall time.
void busy(double ns) {
  const auto until = SteadyClock::now() + std::chrono::nanoseconds(static_cast<std::int64_t>(ns));
  while (SteadyClock::now() < until) locks::relax_cpu();
}

// A hold time of mean `mean` ns: exponential, or high-variance (95%: mean/4, 5%: 15.25 x mean;
// mean `mean`, CV about 3.3).
double draw(std::mt19937_64& rng, bool high_variance, double mean) {
  if (!high_variance) return std::exponential_distribution<double>(1 / mean)(rng);
  return std::uniform_real_distribution<double>(0, 1)(rng) < 0.95 ? mean / 4 : mean * 15.25;
}

const WaitPolicy kPolicies[] = {
    {.mode = WaitMode::block},
    {.mode = WaitMode::spin},
    {.mode = WaitMode::spin_then_block, .budget = std::chrono::microseconds(10)},
    {.mode = WaitMode::competitive},
};

std::string label(const WaitPolicy& p) {
  return p.mode == WaitMode::spin_then_block ? "spin-then-block-10us" : to_string(p.mode);
}

void lock_wait(const Options& o) {
  std::printf("# lock_wait: ns per critical section of a presto::Lock, 2 processors, hold mean 2 us, work 4 us\n");
  std::vector<std::size_t> threads = {2, 4, 8};
  if (o.quick) threads = {2, 4};
  for (bool hv : {false, true}) {
    for (std::size_t t : threads) {
      double best_fixed = 1e300, competitive = 0;
      for (const WaitPolicy& pol : kPolicies) {
        const std::uint64_t ops = o.quick ? 2'000 : 20'000;
        Runtime rt{{.processors = 2, .seed = o.seed}};
        Lock lock{"contended"};
        lock.set_wait_policy(pol);
        const bench::Result r = bench::measure(hv ? "lock_wait_hv" : "lock_wait_exp", label(pol), 2, ops, o.quick ? 1 : 3, [&] {
          rt.run([&] {
            std::vector<JoinHandle<void>> hs;
            for (std::size_t i = 0; i < t; ++i) {
              hs.push_back(fork([&, i] {
                std::mt19937_64 rng(o.seed * 7919 + i);
                for (std::uint64_t n = 0; n < ops / t; ++n) {
                  const double hold = draw(rng, hv, 2000);
                  {
                    std::scoped_lock g{lock};
                    busy(hold);
                  }
                  busy(std::exponential_distribution<double>(1 / 4000.0)(rng));
                }
              }));
            }
            for (auto& h : hs) h.join();
          });
        }, t);
        if (pol.mode == WaitMode::block || pol.mode == WaitMode::spin) best_fixed = std::min(best_fixed, r.median_ns);
        if (pol.mode == WaitMode::competitive) competitive = r.median_ns;
      }
      std::printf("# lock_wait %s, %zu threads: competitive / better of spin and block = %.2f (prediction: <= 2)\n",
                  hv ? "high-variance" : "exponential", t, competitive / best_fixed);
    }
  }
}

void barrier(const Options& o) {
  std::printf("# barrier: ns per phase of a presto::Barrier, 2 processors, compute mean 20 us per thread and phase\n");
  const double mean = 20'000;
  std::vector<std::size_t> ns = {2, 4};
  for (bool hv : {false, true}) {
    for (std::size_t n : ns) {
      const std::uint64_t phases = o.quick ? 200 : 2'000;
      for (const WaitPolicy& pol : kPolicies) {
        Runtime rt{{.processors = 2, .seed = o.seed}};
        Barrier b{n, "phase"};
        b.set_wait_policy(pol);
        bench::measure(hv ? "barrier_hv" : "barrier_exp", label(pol), 2, phases, o.quick ? 1 : 3, [&] {
          rt.run([&] {
            std::vector<JoinHandle<void>> hs;
            for (std::size_t i = 0; i < n; ++i) {
              hs.push_back(fork([&, i] {
                std::mt19937_64 rng(o.seed * 104729 + i);
                for (std::uint64_t ph = 0; ph < phases; ++ph) {
                  busy(draw(rng, hv, mean));
                  b.arrive_and_wait();
                }
              }));
            }
            for (auto& h : hs) h.join();
          });
        }, n);
      }
      if (n <= 2) {
        // E[max of n] of the compute times: exponential mean * H_n; high-variance by enumeration.
        double emax = 0;
        if (!hv) {
          for (std::size_t j = 1; j <= n; ++j) emax += mean / double(j);
        } else {
          const double lo = mean / 4, hi = mean * 15.25, p_lo = 0.95;
          const double all_lo = std::pow(p_lo, double(n));
          emax = all_lo * lo + (1 - all_lo) * hi;
        }
        std::printf("# barrier %s, %zu threads: no-overhead prediction E[max of %zu] = %.0f ns per phase\n",
                    hv ? "high-variance" : "exponential", n, n, emax);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string only = "anderson,lock_wait,barrier";
  presto::apps::CommandLine cl{
      "usage: %s [--quick] [--only anderson,lock_wait,barrier] [--seed S]\n"
      "Anderson's spin-lock curves (presto::locks beside Concurrency Kit) and the wait policies of\n"
      "presto::Lock and presto::Barrier; JSON lines on stdout (benchmarks/run.py plots them).\n"};
  cl.flag("--quick", o.quick).option("--only", only).option("--seed", o.seed);
  if (!cl.parse(argc, argv)) return 2;
  o.only = presto::apps::parse_list<std::string>("--only", only);
  for (const std::string& g : o.only) {
    if (g != "anderson" && g != "lock_wait" && g != "barrier") {
      cl.error("--only: unknown group '" + g + "' (anderson, lock_wait, barrier)");
      return 2;
    }
  }
  std::printf("# load average %.2f\n", presto::bench::load_average());
  if (wanted(o, "anderson")) anderson(o);
  if (wanted(o, "lock_wait")) lock_wait(o);
  if (wanted(o, "barrier")) barrier(o);
  return 0;
}
