#pragma once
// A tiny benchmark harness: runs a measurement several times, reports the median with its
// spread, prints one JSON line per measurement and, at the end, ratios against baselines
// measured in the same run. No timed assertions: numbers are printed, never checked.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace presto::bench {

struct Result {
  std::string name;     // what was measured, e.g. "yield"
  std::string system;   // who did it: "presto", "boost.context", "boost.fiber", "std"
  std::size_t processors = 1;
  std::uint64_t operations = 0;  // per repetition
  double median_ns = 0;  // per operation
  double min_ns = 0;
  double max_ns = 0;
  int repetitions = 0;
};

// Runs `body` (which performs `operations` operations and returns nothing) `repetitions`
// times after one warm-up run, and returns per-operation times.
inline Result measure(std::string name, std::string system, std::size_t processors, std::uint64_t operations,
                      int repetitions, const std::function<void()>& body) {
  using clock = std::chrono::steady_clock;
  body();  // warm up caches, pools and stacks
  std::vector<double> per_op;
  for (int r = 0; r < repetitions; ++r) {
    auto t0 = clock::now();
    body();
    auto t1 = clock::now();
    per_op.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(operations));
  }
  std::sort(per_op.begin(), per_op.end());
  Result res{std::move(name), std::move(system), processors, operations, per_op[per_op.size() / 2],
             per_op.front(), per_op.back(), repetitions};
  std::printf(
      "{\"name\":\"%s\",\"system\":\"%s\",\"processors\":%zu,\"ns_per_op\":%.2f,\"min_ns\":%.2f,\"max_ns\":%.2f,"
      "\"operations\":%llu,\"repetitions\":%d}\n",
      res.name.c_str(), res.system.c_str(), res.processors, res.median_ns, res.min_ns, res.max_ns,
      static_cast<unsigned long long>(res.operations), res.repetitions);
  std::fflush(stdout);
  return res;
}

// One line of the summary: PRESTO's time over the baseline's, with the target it must meet.
struct Ratio {
  std::string what;
  const Result& presto;
  const Result& baseline;
  double target;        // e.g. 3.0
  bool at_most;         // true: ratio <= target; false: baseline/presto >= target
};

inline void print_ratios(const std::vector<Ratio>& ratios) {
  std::printf("\n%-44s %12s %12s %10s %10s %s\n", "ratio", "presto ns", "baseline ns", "value", "target", "met");
  for (const Ratio& r : ratios) {
    double value = r.at_most ? r.presto.median_ns / r.baseline.median_ns : r.baseline.median_ns / r.presto.median_ns;
    bool met = r.at_most ? value <= r.target : value >= r.target;
    std::printf("%-44s %12.2f %12.2f %9.2fx %s%8.2fx %s\n", r.what.c_str(), r.presto.median_ns, r.baseline.median_ns,
                value, r.at_most ? "<=" : ">=", r.target, met ? "yes" : "NO");
  }
}

}  // namespace presto::bench
