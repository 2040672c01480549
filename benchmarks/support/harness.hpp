#pragma once
// A tiny benchmark harness: runs a measurement several times, reports the median with its
// spread, prints one JSON line per measurement and, at the end, ratios against baselines
// measured in the same run. No timed assertions: numbers are printed, never checked.
//
// JSON line of a measurement (the Go peer, benchmarks/peers/go, prints the same):
//   {"name":"yield","system":"presto","processors":1,"param":0,"per_op":27.1,"min":26.0,
//    "max":29.3,"spread_pct":12.2,"unit":"ns","operations":2000000,"repetitions":7}
// per_op is the median over the repetitions of (time of one repetition / operations); min and
// max are the extremes, spread_pct = (max - min) / median in percent. `param` is a workload
// parameter (thread count of a curve, ...; 0 if none). unit "bytes" marks memory figures.
//
// JSON line of a ratio (print_ratios):
//   {"ratio":"yield / raw Boost.Context switch","value":4.1,"target":3,"at_most":true,"met":false}

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace presto::bench {

struct Result {
  std::string name;     // what was measured, e.g. "yield"
  std::string system;   // who did it: "presto", "boost.context", "boost.fiber", "std", "go"
  std::size_t processors = 1;
  std::uint64_t param = 0;       // workload parameter (thread count of a curve); 0: none
  std::uint64_t operations = 0;  // per repetition
  double median = 0;  // per operation, in `unit`
  double min = 0;
  double max = 0;
  int repetitions = 0;
  std::string unit = "ns";

  double spread_pct() const { return median > 0 ? 100.0 * (max - min) / median : 0; }
};

inline void print_json(const Result& r, std::FILE* out = stdout) {
  std::fprintf(out,
      "{\"name\":\"%s\",\"system\":\"%s\",\"processors\":%zu,\"param\":%llu,\"per_op\":%.2f,\"min\":%.2f,"
      "\"max\":%.2f,\"spread_pct\":%.1f,\"unit\":\"%s\",\"operations\":%llu,\"repetitions\":%d}\n",
      r.name.c_str(), r.system.c_str(), r.processors, static_cast<unsigned long long>(r.param), r.median, r.min,
      r.max, r.spread_pct(), r.unit.c_str(), static_cast<unsigned long long>(r.operations), r.repetitions);
  std::fflush(out);
}

// Runs `body` (which performs `operations` operations and returns nothing) `repetitions`
// times after one warm-up run, prints the JSON line and returns per-operation times.
inline Result measure(std::string name, std::string system, std::size_t processors, std::uint64_t operations,
                      int repetitions, const std::function<void()>& body, std::uint64_t param = 0) {
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
  Result res{std::move(name), std::move(system), processors, param, operations, per_op[per_op.size() / 2],
             per_op.front(), per_op.back(), repetitions};
  print_json(res);
  return res;
}

// Parses a measurement line printed by print_json (here or by a peer program); nullopt for
// any other line. Only this harness's own format is understood: flat, keys quoted, no escapes.
inline std::optional<Result> parse_json(const std::string& line) {
  auto field = [&line](const char* key) -> std::optional<std::string> {
    std::string k = std::string("\"") + key + "\":";
    auto at = line.find(k);
    if (at == std::string::npos) return std::nullopt;
    at += k.size();
    if (line[at] == '"') {
      auto end = line.find('"', at + 1);
      return line.substr(at + 1, end - at - 1);
    }
    auto end = line.find_first_of(",}", at);
    return line.substr(at, end - at);
  };
  auto name = field("name"), system = field("system"), per_op = field("per_op");
  if (!name || !system || !per_op) return std::nullopt;
  Result r;
  r.name = *name;
  r.system = *system;
  r.processors = std::strtoull(field("processors").value_or("1").c_str(), nullptr, 10);
  r.param = std::strtoull(field("param").value_or("0").c_str(), nullptr, 10);
  r.operations = std::strtoull(field("operations").value_or("0").c_str(), nullptr, 10);
  r.median = std::strtod(per_op->c_str(), nullptr);
  r.min = std::strtod(field("min").value_or(*per_op).c_str(), nullptr);
  r.max = std::strtod(field("max").value_or(*per_op).c_str(), nullptr);
  r.repetitions = std::atoi(field("repetitions").value_or("1").c_str());
  r.unit = field("unit").value_or("ns");
  return r;
}

// One line of the summary: PRESTO's figure over the baseline's, with the target it must meet.
// Without a baseline, PRESTO's figure itself (in its unit) is compared with the target.
struct Ratio {
  std::string what;
  const Result* presto;
  const Result* baseline;  // nullptr: an absolute target
  double target;           // e.g. 3.0
  bool at_most;            // true: value <= target; false: value >= target
  // at_most: presto / baseline; otherwise baseline / presto ("n times faster").
  double value() const {
    if (baseline == nullptr) return presto->median;
    return at_most ? presto->median / baseline->median : baseline->median / presto->median;
  }
  bool met() const { return at_most ? value() <= target : value() >= target; }
};

// Prints the table, then one JSON line per ratio. A missed target reads "NO" with how far off
// it is: the factor by which PRESTO's figure must still shrink.
inline void print_ratios(const std::vector<Ratio>& ratios) {
  std::printf("\n%-58s %12s %12s %10s %10s %s\n", "ratio", "presto", "baseline", "value", "target", "met");
  for (const Ratio& r : ratios) {
    double v = r.value();
    const char* x = r.baseline != nullptr ? "x" : " ";
    char base[32] = "-";
    if (r.baseline != nullptr) std::snprintf(base, sizeof base, "%.2f", r.baseline->median);
    std::printf("%-58s %12.2f %12s %9.2f%s %s%8.2f%s %s", r.what.c_str(), r.presto->median, base, v, x,
                r.at_most ? "<=" : ">=", r.target, x, r.met() ? "yes" : "NO");
    if (!r.met()) std::printf(" (off by %.2fx)", r.at_most ? v / r.target : r.target / v);
    std::printf("\n");
  }
  for (const Ratio& r : ratios) {
    std::printf("{\"ratio\":\"%s\",\"presto\":%.2f,\"baseline\":%.2f,\"unit\":\"%s\",\"value\":%.3f,\"target\":%.2f,"
                "\"at_most\":%s,\"met\":%s}\n",
                r.what.c_str(), r.presto->median, r.baseline != nullptr ? r.baseline->median : 0.0,
                r.presto->unit.c_str(), r.value(), r.target, r.at_most ? "true" : "false", r.met() ? "true" : "false");
  }
  std::fflush(stdout);
}

}  // namespace presto::bench
