// presto::apps::print_json_line: one measurement as the JSON line benchmarks/run.py reads
// (the shape of presto_bench's records: name, system, processors, param, ns_per_op = median,
// min_ns, max_ns, spread_pct, unit, operations, repetitions), followed by the app's own
// figures as extra numeric fields. Printed on stdout; for the apps' --json option.

#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace presto::apps {

struct JsonMeasurement {
  std::string name;    // the workload, e.g. "dynprog_lcs"
  std::string system;  // the variant measured, e.g. "pipeline"
  std::size_t processors = 1;
  std::size_t param = 0;  // the workload's size
  double median_ns = 0, min_ns = 0, max_ns = 0;
  std::size_t repetitions = 1;
  std::vector<std::pair<std::string, double>> extra{};  // e.g. {"honest_speedup", 1.9}
};

// Prints nothing unless `enabled` (the app's --json).
inline void print_json_line(const JsonMeasurement& m, bool enabled = true) {
  if (!enabled) return;
  std::printf("{\"name\": \"%s\", \"system\": \"%s\", \"processors\": %zu, \"param\": %zu, \"ns_per_op\": %.0f, "
              "\"min_ns\": %.0f, \"max_ns\": %.0f, \"spread_pct\": %.1f, \"unit\": \"ns\", \"operations\": 1, "
              "\"repetitions\": %zu",
              m.name.c_str(), m.system.c_str(), m.processors, m.param, m.median_ns, m.min_ns, m.max_ns,
              m.median_ns > 0 ? 100 * (m.max_ns - m.min_ns) / m.median_ns : 0.0, m.repetitions);
  for (const auto& [key, value] : m.extra) std::printf(", \"%s\": %.4g", key.c_str(), value);
  std::printf("}\n");
}

}  // namespace presto::apps
