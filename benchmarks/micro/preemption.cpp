// preemption: the cost of preemption (RuntimeConfig::quantum) to CPU-bound threads. T threads
// per processor each run a compute loop (a linear congruential generator: no memory traffic,
// no calls) that never gives up its processor; the same work is timed with quantum off, 10 ms
// and 1 ms, in the same run. Figures are nanoseconds of process CPU time per loop iteration
// (the CPU clock, not the wall clock, so a loaded machine changes them little), with the
// preemptions counted and, from the difference to quantum off, the CPU cost of one preemption.
// Prints one JSON line per measurement, then the ratios (quantum on over quantum off).
// Usage: preemption [--quick] [--processors N] [--threads T]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include <presto/presto.hpp>

#include "../support/harness.hpp"

using presto::bench::Result;
using namespace std::chrono_literals;

namespace {

double cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// The compute loop: `iterations` steps of an LCG; the result keeps the compiler from dropping it.
__attribute__((noinline)) std::uint64_t compute(std::uint64_t seed, std::uint64_t iterations) {
  std::uint64_t x = seed;
  for (std::uint64_t i = 0; i < iterations; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

struct Run {
  Result result;
  std::uint64_t preemptions = 0;
};

Run measure_quantum(std::chrono::microseconds quantum, std::size_t processors, std::size_t threads,
                    std::uint64_t iterations, int repetitions) {
  presto::Runtime rt{{.processors = processors, .quantum = quantum}};
  if (quantum != 0us && rt.quantum() == 0us) {
    std::fprintf(stderr, "preemption is unavailable in this build: quantum %lld us not measured\n",
                 static_cast<long long>(quantum.count()));
  }
  const std::uint64_t total = iterations * threads;
  std::uint64_t sink = 0;
  auto body = [&] {
    sink += rt.run([&] {
      std::vector<presto::JoinHandle<std::uint64_t>> hs;
      for (std::size_t t = 0; t < threads; ++t) hs.push_back(presto::fork([t, iterations] { return compute(t, iterations); }));
      std::uint64_t s = 0;
      for (auto& h : hs) s += h.join();
      return s;
    });
  };
  body();  // warm up
  const std::uint64_t before = rt.stats().preemptions;
  std::vector<double> per_op;
  for (int r = 0; r < repetitions; ++r) {
    const double t0 = cpu_ns();
    body();
    per_op.push_back((cpu_ns() - t0) / static_cast<double>(total));
  }
  std::sort(per_op.begin(), per_op.end());
  const std::string name = "compute_quantum_" + std::to_string(rt.quantum().count()) + "us";
  Result res{name, "presto", processors, total, per_op[per_op.size() / 2], per_op.front(), per_op.back(), repetitions,
             static_cast<std::uint64_t>(quantum.count())};
  presto::bench::print_json(res);
  if (sink == 42) std::printf("(unlikely)\n");
  return {res, (rt.stats().preemptions - before) / static_cast<std::uint64_t>(repetitions)};
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t processors = 1, threads = 4;
  std::uint64_t iterations = 400'000'000;  // per thread: ~0.3 s of CPU
  int repetitions = 5;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      iterations = 20'000'000;
      repetitions = 3;
    } else if (std::strcmp(argv[i], "--processors") == 0 && i + 1 < argc) {
      processors = std::stoul(argv[++i]);
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::stoul(argv[++i]);
    } else {
      std::printf("usage: %s [--quick] [--processors N (1)] [--threads T per processor (4)]\n", argv[0]);
      return std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  threads *= processors;
  const Run off = measure_quantum(0us, processors, threads, iterations, repetitions);
  const Run q10 = measure_quantum(10ms, processors, threads, iterations, repetitions);
  const Run q1 = measure_quantum(1ms, processors, threads, iterations, repetitions);
  std::printf("\n%zu processor(s), %zu threads, %llu iterations each; CPU ns per iteration (median of %d)\n",
              processors, threads, static_cast<unsigned long long>(iterations), repetitions);
  for (const Run* r : {&off, &q10, &q1}) {
    std::printf("  %-26s %8.4f ns   %6llu preemptions per run\n", r->result.name.c_str(), r->result.median_ns,
                static_cast<unsigned long long>(r->preemptions));
  }
  for (const Run* r : {&q10, &q1}) {
    if (r->preemptions == 0) continue;
    const double extra = (r->result.median_ns - off.result.median_ns) * static_cast<double>(r->result.operations);
    std::printf("  %s: %.1f us of CPU per preemption (difference to quantum off / preemptions)\n",
                r->result.name.c_str(), extra / static_cast<double>(r->preemptions) / 1000.0);
  }
  presto::bench::print_ratios({
      presto::bench::Ratio("compute loop, quantum 10 ms / quantum off", q10.result, off.result, 1.02, true),
      presto::bench::Ratio("compute loop, quantum 1 ms / quantum off", q1.result, off.result, 1.05, true),
  });
  return 0;
}
