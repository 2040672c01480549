// thread_management: Anderson, Lazowska and Levy's experiment (Figs 3.1/3.2 and the low end
// of Fig 3.4) on the five thread-management alternatives of presto/thread_management.hpp.
// For each alternative and each processor count P:
//   rate     null threads created, started and finished per second (and CPU ns per thread,
//            all processors together, spinning included): P threads are forked, the heads
//            of P chains of N/P threads: each forks the next of its chain and finishes (the
//            paper's benchmark, free lists warm from a previous repetition)
//   latency  a thread's start: ns from just before fork() to the child's first instruction,
//            the parent then joining it (median of K; processors otherwise idle)
// Printed as a table with ratios against the per-processor-ready-queues alternative, as one
// JSON line per measurement (benchmarks/support/harness.hpp), and optionally as CSV. The
// machine's load average is printed beside the figures: timings taken under load are marked.
// Baseline of the same run: std::thread creation + join (the paper's "500x less than a
// process" headline, TM-4).
//
// Usage: thread_management [--processors 1,2,4] [--alternatives L] [--threads N] [--work N]
//                          [--latency K] [--repetitions R] [--quick] [--csv FILE] [--help]

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <presto/runtime.hpp>
#include <presto/thread_management.hpp>

#include "../../apps/support/command_line.hpp"
#include "../support/harness.hpp"

using presto::bench::Result;
namespace bench = presto::bench;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::vector<std::size_t> processors;
  std::vector<presto::ThreadManagement> alternatives{presto::all_thread_management.begin(),
                                                     presto::all_thread_management.end()};
  std::uint64_t threads = 1000000;
  std::uint64_t latency = 20000;
  std::uint64_t work = 0;  // empty-loop iterations each null thread runs first (TM-2, Fig. 3.3)
  int repetitions = 5;
  std::string csv;
};

double ns(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::nano>(b - a).count(); }

Result summarize(std::string name, std::string system, std::size_t processors, std::uint64_t operations,
                 std::vector<double> per_op, std::uint64_t param = 0) {
  std::sort(per_op.begin(), per_op.end());
  Result r{std::move(name), std::move(system), processors, operations, per_op[per_op.size() / 2], per_op.front(),
           per_op.back(), static_cast<int>(per_op.size()), param};
  presto::bench::print_json(r);
  return r;
}

// The chain benchmark: ns per null thread (the rate is its inverse). P chains, one started per
// processor, each of N/P threads; each chain counts its own threads on its own cache line, so
// that the count is not something the processors contend for (until 2026-11-27 all chains
// shared two counters: two locked operations a thread on one line).
struct alignas(64) Chain {
  std::uint64_t limit = 0;  // threads this chain forks after its first
  std::uint64_t work = 0;
  std::uint64_t forked = 0;  // a chain's threads run one after another: no atomics needed
  Clock::time_point end{};

  void step() {
    for (std::uint64_t k = 0; k < work; ++k) asm volatile("" ::"r"(k));
    if (forked < limit) {
      ++forked;
      presto::fork(&Chain::step, this).detach();
    } else {
      end = Clock::now();
    }
  }
};

// One alternative on one processor count: a runtime kept for all repetitions (its free lists
// stay warm between them) and the samples taken so far.
struct Case {
  presto::ThreadManagement alternative;
  std::size_t processors;
  std::unique_ptr<presto::Runtime> rt;
  std::vector<double> per_thread;  // rate repetitions: ns per null thread
  std::vector<double> cpu_per_thread;  // the same in CPU time of all processors
  double cpu_median = 0;
  std::vector<double> starts;      // latency samples, ns
  Result rate, latency;

  Case(presto::ThreadManagement a, std::size_t p) : alternative(a), processors(p) {
    presto::RuntimeConfig config{.processors = p};
    presto::configure(config, a);
    rt = std::make_unique<presto::Runtime>(std::move(config));
  }

  // One repetition of the chain benchmark; `keep`: record it (false warms the free lists).
  void rate_once(std::uint64_t threads, std::uint64_t work, bool keep) {
    std::vector<Chain> chains(processors);
    for (std::size_t i = 0; i < processors; ++i) {
      chains[i].limit = threads / processors + (i < threads % processors ? 1 : 0);
      chains[i].work = work;
    }
    Clock::time_point begin;
    const double c0 = bench::process_cpu_ns();
    rt->run([&] {
      begin = Clock::now();
      for (Chain& c : chains) presto::fork(&Chain::step, &c).detach();
    });
    const double c1 = bench::process_cpu_ns();
    if (keep) {
      Clock::time_point end = begin;
      for (const Chain& c : chains) end = std::max(end, c.end);
      per_thread.push_back(ns(begin, end) / static_cast<double>(threads + processors));
      cpu_per_thread.push_back((c1 - c0) / static_cast<double>(threads + processors));
    }
  }

  // `samples` start latencies, after a tenth as many unrecorded.
  void latency_once(std::uint64_t samples) {
    rt->run([&] {
      Clock::time_point started{};
      for (std::uint64_t i = 0; i < samples / 10 + samples; ++i) {
        const Clock::time_point before = Clock::now();
        presto::fork([&started] { started = Clock::now(); }).join();
        if (i >= samples / 10) starts.push_back(ns(before, started));
      }
    });
  }

  void summarize_all(std::uint64_t threads) {
    const std::string who(presto::to_string(alternative));
    rate = summarize("null_thread", who, processors, threads, per_thread);
    std::sort(cpu_per_thread.begin(), cpu_per_thread.end());
    cpu_median = cpu_per_thread[cpu_per_thread.size() / 2];
    latency = summarize("start_latency", who, processors, 1, starts);
  }
};

Result std_thread_latency(const Options& o) {
  std::vector<double> samples;
  const std::uint64_t n = std::max<std::uint64_t>(100, o.latency / 20);
  for (std::uint64_t i = 0; i < n; ++i) {
    Clock::time_point started{};
    const Clock::time_point before = Clock::now();
    std::thread([&started] { started = Clock::now(); }).join();
    samples.push_back(ns(before, started));
  }
  return summarize("start_latency", "std::thread", 1, 1, std::move(samples));
}

std::vector<presto::ThreadManagement> parse_alternatives(const std::string& text) {
  std::vector<presto::ThreadManagement> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    const std::string name = text.substr(at, end - at);
    auto it = std::find_if(presto::all_thread_management.begin(), presto::all_thread_management.end(),
                           [&](presto::ThreadManagement a) { return presto::to_string(a) == name; });
    if (it == presto::all_thread_management.end()) throw std::runtime_error("unknown alternative '" + name + "'");
    out.push_back(*it);
    at = end + 1;
  }
  return out;
}

constexpr const char* kUsage =
    "thread_management: null-thread rate and start latency of the five thread-management alternatives\n"
    "(Anderson, Lazowska and Levy 1989) as processors grow.\n\n"
    "  --processors LIST   comma-separated processor counts (default 1,2,4,... up to the hardware threads)\n"
    "  --alternatives L    comma-separated subset of single-lock, multiple-locks, local-free-lists,\n"
    "                      idle-queue, local-ready-queues (default: all; ratios need local-ready-queues)\n"
    "  --threads N         null threads per rate repetition (default 1000000, as the paper)\n"
    "  --latency K         start-latency samples (default 20000)\n"
    "  --repetitions R     rate repetitions, the median is reported (default 5)\n"
    "  --work N            empty-loop iterations each thread runs before forking (default 0; the\n"
    "                      paper's Fig. 3.3 gave each thread ~6x a null thread's cost)\n"
    "  --quick             small counts (CI smoke run)\n"
    "  --csv FILE          also write the table as CSV\n";

}  // namespace

int main(int argc, char** argv) {
  Options o;
  presto::apps::CommandLine cl{kUsage};
  cl.option("--processors", [&](const std::string& v) { o.processors = bench::parse_processor_list(v.c_str()); })
      .option("--alternatives", [&](const std::string& v) { o.alternatives = parse_alternatives(v); })
      .option("--work", o.work)
      .option("--threads", o.threads)
      .option("--latency", o.latency)
      .option("--repetitions", o.repetitions)
      .flag("--quick",
            [&] {
              o.threads = 20000;
              o.latency = 2000;
              o.repetitions = 3;
            })
      .option("--csv", o.csv);
  try {
    if (!cl.parse(argc, argv)) return 2;
  } catch (const std::exception& e) {  // a bad processor list or alternative
    cl.error(e.what());
    return 2;
  }
  if (o.processors.empty()) o.processors = bench::default_processor_counts();
  if (o.threads == 0 || o.latency == 0 || o.repetitions <= 0) {
    std::fprintf(stderr, "thread_management: counts must be positive\n");
    return 2;
  }

  const double load_before = bench::load_average();
  // Every case's repetitions are interleaved (one of each in turn), so that a change in the
  // machine's load while the benchmark runs falls on all of them alike.
  std::vector<Case> rows;
  for (std::size_t p : o.processors) {
    for (presto::ThreadManagement a : o.alternatives) rows.emplace_back(a, p);
  }
  for (Case& c : rows) c.rate_once(o.threads, o.work, false);
  for (int r = 0; r < o.repetitions; ++r) {
    for (Case& c : rows) c.rate_once(o.threads, o.work, true);
    for (Case& c : rows) c.latency_once(o.latency / static_cast<std::uint64_t>(o.repetitions) + 1);
  }
  for (Case& c : rows) c.summarize_all(o.threads);
  const Result os_thread = std_thread_latency(o);
  const double load_after = bench::load_average();
  const bool loaded = std::max(load_before, load_after) > 2.0;

  std::printf("\nnull threads (work %llu): %llu per repetition, median of %d; start latency: median of %llu; "
              "%u hardware threads; load average %.2f -> %.2f%s\n",
              static_cast<unsigned long long>(o.work), static_cast<unsigned long long>(o.threads), o.repetitions,
              static_cast<unsigned long long>(o.latency),
              std::thread::hardware_concurrency(), load_before, load_after,
              loaded ? " (LOADED machine: timings are indicative only)" : "");
  std::printf("%-20s %4s %14s %10s %14s %10s %14s %10s\n", "alternative", "P", "threads/s", "vs local-rq",
              "cpu ns/thread", "vs local-rq", "start ns", "vs local-rq");
  for (const Case& r : rows) {
    const Case* base = nullptr;
    for (const Case& b : rows) {
      if (b.processors == r.processors && b.alternative == presto::ThreadManagement::local_ready_queues) base = &b;
    }
    if (base == nullptr) base = &r;  // local-ready-queues not measured: no ratios (1.00x)
    std::printf("%-20s %4zu %14.0f %9.2fx %14.1f %9.2fx %14.0f %9.2fx\n",
                std::string(presto::to_string(r.alternative)).c_str(), r.processors, 1e9 / r.rate.median_ns,
                base->rate.median_ns / r.rate.median_ns, r.cpu_median, r.cpu_median / base->cpu_median,
                r.latency.median_ns, r.latency.median_ns / base->latency.median_ns);
  }
  const Case* reference = &rows.front();  // local-ready-queues on the first processor count, if measured
  for (const Case& c : rows) {
    if (c.processors == rows.front().processors && c.alternative == presto::ThreadManagement::local_ready_queues) {
      reference = &c;
    }
  }
  std::printf("%-20s %4d %14s %10s %14s %10s %14.0f %9.2fx  (vs %s on %zu)\n", "std::thread", 1, "-", "-", "-", "-",
              os_thread.median_ns,
              os_thread.median_ns / reference->latency.median_ns,
              std::string(presto::to_string(reference->alternative)).c_str(), reference->processors);

  if (!o.csv.empty()) {
    std::ofstream csv(o.csv);
    csv << "alternative,processors,threads_per_s,threads_per_s_min,threads_per_s_max,cpu_ns_per_thread,start_latency_ns,"
           "start_latency_ns_min,start_latency_ns_max,load_average,hardware_threads\n";
    for (const Case& r : rows) {
      csv << presto::to_string(r.alternative) << ',' << r.processors << ',' << 1e9 / r.rate.median_ns << ','
          << 1e9 / r.rate.max_ns << ',' << 1e9 / r.rate.min_ns << ',' << r.cpu_median << ',' << r.latency.median_ns << ','
          << r.latency.min_ns << ',' << r.latency.max_ns << ',' << std::max(load_before, load_after) << ','
          << std::thread::hardware_concurrency() << '\n';
    }
    csv << "std::thread,1,,,,," << os_thread.median_ns << ',' << os_thread.min_ns << ',' << os_thread.max_ns << ','
        << std::max(load_before, load_after) << ',' << std::thread::hardware_concurrency() << '\n';
    std::printf("CSV written to %s\n", o.csv.c_str());
  }
  return 0;
}
