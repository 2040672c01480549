// wakeup_placement: where should a woken thread go? Joyce's question (Brinch Hansen and
// Rangachari 1988), asked of LocalQueuePool's placements (presto/local_queue_pool.hpp):
// waker, last, shortest (counting the running thread, as Joyce's kernel) and random, on two
// communication-heavy workloads:
//   bm    Joyce's BM: 100 independent sender/receiver pairs, each on its own rendezvous
//         channel (presto::channels), m messages per pair, an empty loop of n iterations on
//         each side per message (BM1: n = 0; BM2: n = 4 in the paper; here --work sets it)
//   ring  a token passed around a ring of 64 threads through semaphores: at most one thread
//         runs at a time, so placement decides only how far the token travels
// For each placement and processor count it prints ns per message, as one JSON line per
// measurement (benchmarks/support/harness.hpp) and as a table of ratios against the waker
// placement, PRESTO's default, in wall time and in the process's CPU time (which a loaded
// machine inflates less, but which counts idle processors' spinning). The load average is
// printed beside the figures.
//
// Usage: wakeup_placement [--processors 1,2] [--messages M] [--work N] [--repetitions R]
//                         [--quick] [--help]

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <presto/channels/channels.hpp>
#include <presto/presto.hpp>

#include "../../apps/support/command_line.hpp"
#include "../support/harness.hpp"

using presto::LocalQueuePool;
using presto::bench::Result;
namespace bench = presto::bench;
using Placement = LocalQueuePool::Placement;

namespace {

constexpr std::size_t kPairs = 100;
constexpr std::size_t kRing = 64;

struct Options {
  std::vector<std::size_t> processors;
  std::uint64_t messages = 2000;  // per pair (bm), per ring thread (ring)
  std::uint64_t work = 4;
  int repetitions = 5;
};

void compute(std::uint64_t n) {
  for (std::uint64_t k = 0; k < n; ++k) asm volatile("" ::"r"(k));
}

// Joyce's BM; every message is checked. Returns false if a receiver saw a wrong value.
bool bm(const Options& o) {
  std::atomic<bool> ok{true};
  std::vector<std::unique_ptr<presto::channels::Channel<std::uint64_t>>> channels;
  for (std::size_t i = 0; i < kPairs; ++i) channels.push_back(std::make_unique<presto::channels::Channel<std::uint64_t>>());
  std::vector<presto::JoinHandle<void>> handles;
  for (std::size_t i = 0; i < kPairs; ++i) {
    auto& c = *channels[i];
    handles.push_back(presto::fork([&c, &o] {
      for (std::uint64_t j = 0; j < o.messages; ++j) {
        compute(o.work);
        c.send(j);
      }
    }));
    handles.push_back(presto::fork([&c, &o, &ok] {
      for (std::uint64_t j = 0; j < o.messages; ++j) {
        if (c.recv() != j) ok.store(false);
        compute(o.work);
      }
    }));
  }
  for (auto& h : handles) h.join();
  return ok.load();
}

bool ring(const Options& o) {
  std::vector<std::unique_ptr<presto::Semaphore>> tokens;
  for (std::size_t i = 0; i < kRing; ++i) tokens.push_back(std::make_unique<presto::Semaphore>(i == 0 ? 1 : 0, "token"));
  std::atomic<std::uint64_t> passes{0};
  std::vector<presto::JoinHandle<void>> handles;
  for (std::size_t i = 0; i < kRing; ++i) {
    handles.push_back(presto::fork([&, i] {
      for (std::uint64_t lap = 0; lap < o.messages; ++lap) {
        tokens[i]->acquire();
        passes.fetch_add(1, std::memory_order_relaxed);
        compute(o.work);
        tokens[(i + 1) % kRing]->release();
      }
    }));
  }
  for (auto& h : handles) h.join();
  return passes.load() == kRing * o.messages;
}

// One workload under one placement on one processor count, with its runtime and samples.
struct Case {
  std::string workload;
  Placement placement;
  std::size_t processors;
  std::unique_ptr<presto::Runtime> rt;
  std::vector<double> per_message;
  std::vector<double> cpu_per_message;
  double cpu_median = 0;

  Case(std::string w, Placement pl, std::size_t p)
      : workload(std::move(w)),
        placement(pl),
        processors(p),
        rt(std::make_unique<presto::Runtime>(
            presto::RuntimeConfig{.processors = p, .pool = std::make_unique<LocalQueuePool>(pl)})) {}

  std::uint64_t messages(const Options& o) const { return (workload == "bm" ? kPairs : kRing) * o.messages; }

  // One repetition; `keep`: record it (false: a warm-up).
  void once(const Options& o, bool keep) {
    const double c0 = bench::process_cpu_ns();
    const auto t0 = std::chrono::steady_clock::now();
    const bool ok = rt->run([&] { return workload == "bm" ? bm(o) : ring(o); });
    const auto t1 = std::chrono::steady_clock::now();
    const double c1 = bench::process_cpu_ns();
    if (!ok) {
      std::fprintf(stderr, "wakeup_placement: %s under %s on %zu processors delivered a wrong message\n",
                   workload.c_str(), std::string(presto::to_string(placement)).c_str(), processors);
      std::exit(1);
    }
    if (keep) {
      per_message.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() /
                            static_cast<double>(messages(o)));
      cpu_per_message.push_back((c1 - c0) / static_cast<double>(messages(o)));
    }
  }

  Result summarize(const Options& o) {
    std::sort(per_message.begin(), per_message.end());
    std::sort(cpu_per_message.begin(), cpu_per_message.end());
    cpu_median = cpu_per_message[cpu_per_message.size() / 2];
    Result r{workload, std::string(presto::to_string(placement)), processors, messages(o), per_message[per_message.size() / 2],
             per_message.front(), per_message.back(), static_cast<int>(per_message.size()), o.work};
    presto::bench::print_json(r);
    return r;
  }
};

constexpr const char* kUsage =
    "wakeup_placement: LocalQueuePool's wake-up placements (waker, last, shortest, random) on Joyce's BM\n"
    "(100 channel pairs) and a semaphore token ring, as ns per message with ratios against waker.\n\n"
    "  --processors LIST   comma-separated processor counts (default 1,2,4,... up to the hardware threads)\n"
    "  --messages M        messages per pair / laps per ring thread (default 2000)\n"
    "  --work N            empty-loop iterations per message on each side (default 4, Joyce's BM2)\n"
    "  --repetitions R     repetitions, the median is reported (default 5)\n"
    "  --quick             small counts (CI smoke run)\n";

}  // namespace

int main(int argc, char** argv) {
  Options o;
  presto::apps::CommandLine cl{kUsage};
  cl.option("--processors", [&](const std::string& v) { o.processors = bench::parse_processor_list(v.c_str()); })
      .option("--messages", o.messages)
      .option("--work", o.work)
      .option("--repetitions", o.repetitions)
      .flag("--quick", [&] {
        o.messages = 200;
        o.repetitions = 3;
      });
  try {
    if (!cl.parse(argc, argv)) return 2;
  } catch (const std::exception& e) {  // a bad processor list
    cl.error(e.what());
    return 2;
  }
  if (o.processors.empty()) o.processors = bench::default_processor_counts();
  if (o.messages == 0 || o.repetitions <= 0) {
    std::fprintf(stderr, "wakeup_placement: counts must be positive\n");
    return 2;
  }
  const Placement all[] = {Placement::waker, Placement::last, Placement::shortest, Placement::random};
  const double load_before = bench::load_average();
  // Repetitions are interleaved (one of each case in turn), so that a change in the machine's
  // load while the benchmark runs falls on every placement alike.
  std::vector<Case> cases;
  for (const char* workload : {"bm", "ring"}) {
    for (std::size_t p : o.processors) {
      for (Placement placement : all) cases.emplace_back(workload, placement, p);
    }
  }
  for (Case& c : cases) c.once(o, false);
  for (int r = 0; r < o.repetitions; ++r) {
    for (Case& c : cases) c.once(o, true);
  }
  std::vector<Result> results;
  for (Case& c : cases) results.push_back(c.summarize(o));
  const double load_after = bench::load_average();
  std::printf("\n%llu messages per pair/ring thread, work %llu, median of %d; %u hardware threads; load average "
              "%.2f -> %.2f%s\n",
              static_cast<unsigned long long>(o.messages), static_cast<unsigned long long>(o.work), o.repetitions,
              std::thread::hardware_concurrency(), load_before, load_after,
              std::max(load_before, load_after) > 2.0 ? " (LOADED machine: timings are indicative only)" : "");
  std::printf("%-6s %4s %10s %12s %10s %14s %10s\n", "bench", "P", "placement", "ns/message", "vs waker",
              "cpu ns/message", "vs waker");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    std::size_t base = i;
    for (std::size_t j = 0; j < results.size(); ++j) {
      if (results[j].name == r.name && results[j].processors == r.processors && results[j].system == "waker") base = j;
    }
    std::printf("%-6s %4zu %10s %12.1f %9.2fx %14.1f %9.2fx\n", r.name.c_str(), r.processors, r.system.c_str(),
                r.median_ns, r.median_ns / results[base].median_ns, cases[i].cpu_median,
                cases[i].cpu_median / cases[base].cpu_median);
  }
  return 0;
}
