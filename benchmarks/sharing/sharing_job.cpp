// sharing_job: one job of the machine-sharing experiment (benchmarks/sharing/sharing.py;
// docs/guide/sharing.md). A PRESTO program that alternates serial code with parallel regions,
// the shape ASAT assumes (thesis Figure 1): `--regions` parallel_for loops, each over
// `--indices` indices of `--grain` work units, under the allocation policy `--policy` (or
// PRESTO_ALLOCATION). `--serial` runs the same work on one OS thread without a runtime: the
// serial CPU-bound load, and the measure of the work itself.
//
// A work unit is a fixed computation (a dependent chain of integer operations, about a
// microsecond on a 2020s core), not a time: a job slowed by sharing takes longer, it does not
// do less. Every index is checked to have run exactly once. Prints one JSON line: wall and CPU
// seconds (getrusage), and the processors the regions ran on (mean, least, last).

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <presto/presto.hpp>

#include "command_line.hpp"

namespace {

constexpr int kIterationsPerUnit = 1000;

// `units` work units; the result depends on every step, so nothing is optimized away.
std::uint64_t work(std::uint64_t seed, std::size_t units) {
  std::uint64_t x = seed | 1;
  for (std::size_t i = 0; i < units * kIterationsPerUnit; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  return x;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

std::unique_ptr<presto::AllocationPolicy> make_policy(const std::string& name) {
  if (name == "fixed") return std::make_unique<presto::FixedAllocation>();
  if (name == "asat") return std::make_unique<presto::AsatAllocation>();
  if (name == "load") return std::make_unique<presto::LoadAllocation>();
  return std::make_unique<presto::HybridAllocation>();  // main has checked the name
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t processors = 0;
  std::size_t regions = 200;
  std::size_t indices = 64;
  std::size_t grain = 100;
  std::string policy = "fixed";
  std::string schedule = "static";
  std::string label;
  bool serial = false;
  std::size_t idle_spin = presto::RuntimeConfig{}.idle_spin;
  presto::apps::CommandLine cl(
      "usage: %s [--processors P] [--regions R] [--indices N] [--grain G] [--policy fixed|asat|load|hybrid]\n"
      "          [--schedule static|guided] [--serial] [--label TEXT]\n"
      "One job of the machine-sharing experiment: R parallel regions of N indices of G work units\n"
      "(a unit is ~1 us of integer work) under an allocation policy; --serial does the same work\n"
      "on one OS thread, no runtime. --idle-spin: polls of an idle processor before it parks\n"
      "(RuntimeConfig::idle_spin; 1000000000 spins like the thesis's hard-spin run-times).\n"
      "Prints a JSON line: wall and CPU seconds, processors used.\n"
      "PRESTO_ALLOCATION, when set, overrides --policy.");
  cl.processors(processors)
      .option("--regions", regions)
      .option("--indices", indices)
      .option("--grain", grain)
      .option("--policy", policy)
      .option("--schedule", schedule)
      .option("--label", label)
      .option("--idle-spin", idle_spin)
      .flag("--serial", serial);
  if (!cl.parse(argc, argv)) return 2;
  if (regions == 0 || indices == 0 || grain == 0) {
    cl.error("--regions, --indices and --grain must be positive");
    return 2;
  }
  if (schedule != "static" && schedule != "guided") {
    cl.error("--schedule: '" + schedule + "' is not static or guided");
    return 2;
  }
  if (policy != "fixed" && policy != "asat" && policy != "load" && policy != "hybrid") {
    cl.error("--policy: '" + policy + "' is not one of fixed, asat, load, hybrid");
    return 2;
  }
  try {
    const auto start = std::chrono::steady_clock::now();
    std::uint64_t checksum = 0;
    double processor_sum = 0;
    std::size_t least = 0;
    std::size_t last = 1;
    std::string described = "serial";
    bool ok = true;
    if (serial) {
      for (std::size_t r = 0; r < regions; ++r) {
        for (std::size_t i = 0; i < indices; ++i) checksum += work(r * indices + i, grain);
      }
      processor_sum = static_cast<double>(regions);
      least = 1;
    } else {
      presto::Runtime rt{{.processors = processors, .idle_spin = idle_spin, .allocation = make_policy(policy)}};
      described = rt.allocation_policy().describe();
      least = rt.processors();
      ok = rt.run([&] {
        std::vector<std::atomic<int>> ran(indices);
        std::vector<std::uint64_t> results(indices);
        const presto::Schedule s = schedule == "static" ? presto::Schedule::static_blocks() : presto::Schedule::guided();
        for (std::size_t r = 0; r < regions; ++r) {
          presto::parallel_for(std::size_t{0}, indices, [&](std::size_t i) {
            results[i] = work(r * indices + i, grain);
            ran[i].fetch_add(1, std::memory_order_relaxed);
          }, s);
          last = rt.processors();  // what the region ran on (set at its entry)
          processor_sum += static_cast<double>(last);
          least = std::min(least, last);
          for (std::uint64_t v : results) checksum += v;  // the serial part between regions
        }
        for (auto& n : ran) {
          if (n.load() != static_cast<int>(regions)) return false;
        }
        return true;
      });
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!ok) {
      std::fprintf(stderr, "sharing_job: an index did not run exactly once per region\n");
      return 1;
    }
    std::printf("{\"name\": \"sharing-job\", \"label\": \"%s\", \"policy\": \"%s\", \"wall_s\": %.4f, \"cpu_s\": %.4f, "
                "\"work_units\": %zu, \"mean_processors\": %.3f, \"least_processors\": %zu, \"last_processors\": %zu, "
                "\"checksum\": %llu}\n",
                label.c_str(), described.c_str(), wall, cpu_seconds(), regions * indices * grain,
                processor_sum / static_cast<double>(regions), least, last, static_cast<unsigned long long>(checksum));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sharing_job: %s\n", e.what());
    return 1;
  }
}
