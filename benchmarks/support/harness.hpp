#pragma once
// A tiny benchmark harness: runs a measurement several times, reports the median with its
// spread, prints one JSON line per measurement and, at the end, ratios against baselines
// measured in the same run. No timed assertions: numbers are printed, never checked.
//
// JSON line of a measurement (the Go peer, benchmarks/peers/go, prints the same):
//   {"name":"yield","system":"presto","processors":1,"ns_per_op":27.1,"min_ns":26.0,"max_ns":29.3,
//    "operations":2000000,"repetitions":7,"param":0,"spread_pct":12.2,"unit":"ns"}
// ns_per_op is the median over the repetitions of (time of one repetition / operations);
// min_ns and max_ns are the extremes, spread_pct = (max - min) / median in percent. `param` is
// a workload parameter (thread count of a curve, ...; 0 if none). unit "bytes" marks a memory
// figure: the three values are then bytes (the names stay, for the programs that read them).
//
// JSON line of a ratio (print_ratios):
//   {"ratio":"yield / raw Boost.Context switch","value":4.1,"target":3,"at_most":true,"met":false}

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

namespace presto::bench {

struct Result {
  std::string name;     // what was measured, e.g. "yield"
  std::string system;   // who did it: "presto", "boost.context", "boost.fiber", "std", "go"
  std::size_t processors = 1;
  std::uint64_t operations = 0;  // per repetition
  double median_ns = 0;  // per operation; in bytes when unit is "bytes"
  double min_ns = 0;
  double max_ns = 0;
  int repetitions = 0;
  std::uint64_t param = 0;  // workload parameter (thread count of a curve); 0: none
  std::string unit = "ns";

  double spread_pct() const { return median_ns > 0 ? 100.0 * (max_ns - min_ns) / median_ns : 0; }
};

// The first `n` CPUs this process may use, in order: fewer where fewer are allowed, none if
// its CPU mask cannot be read.
inline std::vector<int> allowed_cpus(std::size_t n) {
  std::vector<int> cpus;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < n; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  }
  return cpus;
}

// Pins the calling OS thread to `cpu`; false if it could not.
inline bool pin_to_cpu(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
}

// The machine's 1-minute load average (0 if unreadable): benchmarks print it, since a loaded
// machine distorts multi-processor figures.
inline double load_average() {
  double l = 0;
  if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &l) != 1) l = 0;
    std::fclose(f);
  }
  return l;
}

// CPU time of the whole process (every processor, spinning included), in ns: unlike wall
// time it does not grow when a loaded machine makes the processors wait for a core.
inline double process_cpu_ns() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return 1e9 * static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e3 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// "1,2,4" -> {1, 2, 4}; std::runtime_error on an empty, zero or malformed entry.
inline std::vector<std::size_t> parse_processor_list(const char* text) {
  std::vector<std::size_t> out;
  for (const char* p = text; *p != 0;) {
    char* end = nullptr;
    unsigned long v = std::strtoul(p, &end, 10);
    if (end == p || v == 0) throw std::runtime_error(std::string("bad processor list '") + text + "'");
    out.push_back(v);
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

// 1, 2, 4, ... below the hardware threads, then the hardware threads themselves.
inline std::vector<std::size_t> default_processor_counts() {
  std::vector<std::size_t> out;
  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  for (std::size_t p = 1; p < hw; p *= 2) out.push_back(p);
  out.push_back(hw);
  return out;
}

inline void print_json(const Result& r, std::FILE* out = stdout) {
  std::fprintf(out,
               "{\"name\":\"%s\",\"system\":\"%s\",\"processors\":%zu,\"ns_per_op\":%.2f,\"min_ns\":%.2f,"
               "\"max_ns\":%.2f,\"operations\":%llu,\"repetitions\":%d,\"param\":%llu,\"spread_pct\":%.1f,"
               "\"unit\":\"%s\"}\n",
               r.name.c_str(), r.system.c_str(), r.processors, r.median_ns, r.min_ns, r.max_ns,
               static_cast<unsigned long long>(r.operations), r.repetitions, static_cast<unsigned long long>(r.param),
               r.spread_pct(), r.unit.c_str());
  std::fflush(out);
}

// The host's cross-core latency: the round trip of one cache line between two OS threads
// pinned to the first two CPUs this process may use, each writing it in turn, 20,000 round
// trips a repetition (a hand-off each way). A multi-processor figure may move with it: on the
// 2-vCPU development VM it reads from about 50 ns to about 350 ns by period, with the same
// binaries (presumably where the host places the two vCPUs), and PSIM's two-processor ratios
// follow it (docs/benchmarks.md). Benchmarks print it before and after
// their multi-processor runs (names "core_round_trip_before" and "core_round_trip_after", system
// "host"); they print its JSON line and a line "# host: ..." that names the CPUs. nullopt, and
// a line saying so, where fewer than two CPUs are allowed or the threads cannot be pinned. With
// `print` false it prints nothing (figure3_floor puts the round trip in each row instead).
inline std::optional<Result> core_round_trip(const char* name, int repetitions, bool print = true) {
  const std::vector<int> cpus = allowed_cpus(2);
  if (cpus.empty()) return std::nullopt;
  if (cpus.size() < 2) {
    if (print) std::printf("# host: one CPU allowed, no cross-core round trip to measure\n");
    return std::nullopt;
  }
  constexpr std::uint64_t trips = 20'000;
  alignas(64) std::atomic<std::uint64_t> line{0};
  std::atomic<bool> pinned{true};
  std::vector<double> per_trip;
  for (int r = 0; r <= repetitions; ++r) {  // the first is a warm-up
    line.store(0, std::memory_order_relaxed);
    std::thread echo{[&] {
      if (!pin_to_cpu(cpus[1])) pinned.store(false);  // it still answers: the loop below must end
      for (std::uint64_t i = 0; i < trips; ++i) {
        while (line.load(std::memory_order_acquire) != 2 * i + 1) {
        }
        line.store(2 * i + 2, std::memory_order_release);
      }
    }};
    cpu_set_t before;
    CPU_ZERO(&before);
    pthread_getaffinity_np(pthread_self(), sizeof before, &before);
    if (!pin_to_cpu(cpus[0])) pinned.store(false);
    const auto t0 = std::chrono::steady_clock::now();
    for (std::uint64_t i = 0; i < trips; ++i) {
      line.store(2 * i + 1, std::memory_order_release);
      while (line.load(std::memory_order_acquire) != 2 * i + 2) {
      }
    }
    const auto t1 = std::chrono::steady_clock::now();
    echo.join();
    pthread_setaffinity_np(pthread_self(), sizeof before, &before);
    if (r > 0) per_trip.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / trips);
  }
  if (!pinned.load()) {
    if (print) {
      std::printf("# host: the round trip's threads could not be pinned to CPUs %d and %d: not measured\n", cpus[0],
                  cpus[1]);
    }
    return std::nullopt;
  }
  std::sort(per_trip.begin(), per_trip.end());
  Result res{name, "host", 2, trips, per_trip[per_trip.size() / 2], per_trip.front(), per_trip.back(), repetitions};
  if (!print) return res;
  print_json(res);
  std::printf("# host: cache-line round trip between CPUs %d and %d: %.1f ns (%s; median of %d, %.1f-%.1f)\n", cpus[0],
              cpus[1], res.median_ns, name, repetitions, res.min_ns, res.max_ns);
  std::fflush(stdout);
  return res;
}

// A body that performs a measurement's operations and returns the nanoseconds they took,
// leaving out what it does around them (a product's clearing and checking, say).
using Timed = std::function<double()>;

// A body timed whole.
inline Timed timed(std::function<void()> body) {
  return [body = std::move(body)] {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  };
}

// The result of per-operation times: their median and extremes.
inline Result result_of(std::string name, std::string system, std::size_t processors, std::uint64_t operations,
                        int repetitions, std::vector<double> per_op, std::uint64_t param) {
  std::sort(per_op.begin(), per_op.end());
  return {std::move(name), std::move(system), processors, operations, per_op[per_op.size() / 2], per_op.front(),
          per_op.back(), repetitions, param};
}

// Runs `body` (which performs `operations` operations) `repetitions` times after one warm-up
// run, prints the JSON line and returns per-operation times.
inline Result measure_timed(std::string name, std::string system, std::size_t processors, std::uint64_t operations,
                            int repetitions, const Timed& body, std::uint64_t param = 0) {
  body();  // warm up caches, pools and stacks
  std::vector<double> per_op;
  for (int r = 0; r < repetitions; ++r) per_op.push_back(body() / static_cast<double>(operations));
  Result res = result_of(std::move(name), std::move(system), processors, operations, repetitions, std::move(per_op), param);
  print_json(res);
  return res;
}

// The same for a body timed whole.
inline Result measure(std::string name, std::string system, std::size_t processors, std::uint64_t operations,
                      int repetitions, const std::function<void()>& body, std::uint64_t param = 0) {
  return measure_timed(std::move(name), std::move(system), processors, operations, repetitions, timed(body), param);
}

// One of a set of measurements taken in turns (measure_alternating).
struct Alternative {
  std::string name;
  std::string system;
  std::size_t processors = 1;
  std::uint64_t operations = 0;
  Timed body;
  std::uint64_t param = 0;
};

// Runs `repetitions` rounds in each of which every body takes its turn: it runs twice, and the
// second run is timed; prints their JSON lines and returns their results in the same order.
// For two figures whose ratio is a target: measured one after the other, each would see its
// own stretch of the host's time, and on the 2-vCPU development VM a whole product can take
// twice as long in one stretch as in the next (core_round_trip is one measure of a stretch).
// In turns, both medians come from the same stretch.
// The untimed run warms the caches for the timed one, which would otherwise pay for what the
// body before it left there (a 40,000-thread product streams 5 MB of records through them).
inline std::vector<Result> measure_alternating(const std::vector<Alternative>& alts, int repetitions) {
  std::vector<std::vector<double>> per_op(alts.size());
  for (int r = 0; r < repetitions; ++r) {
    for (std::size_t i = 0; i < alts.size(); ++i) {
      alts[i].body();
      per_op[i].push_back(alts[i].body() / static_cast<double>(alts[i].operations));
    }
  }
  std::vector<Result> out;
  for (std::size_t i = 0; i < alts.size(); ++i) {
    out.push_back(result_of(alts[i].name, alts[i].system, alts[i].processors, alts[i].operations, repetitions,
                            std::move(per_op[i]), alts[i].param));
    print_json(out.back());
  }
  return out;
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
  auto name = field("name"), system = field("system"), per_op = field("ns_per_op");
  if (!name || !system || !per_op) return std::nullopt;
  Result r;
  r.name = *name;
  r.system = *system;
  r.processors = std::strtoull(field("processors").value_or("1").c_str(), nullptr, 10);
  r.param = std::strtoull(field("param").value_or("0").c_str(), nullptr, 10);
  r.operations = std::strtoull(field("operations").value_or("0").c_str(), nullptr, 10);
  r.median_ns = std::strtod(per_op->c_str(), nullptr);
  r.min_ns = std::strtod(field("min_ns").value_or(*per_op).c_str(), nullptr);
  r.max_ns = std::strtod(field("max_ns").value_or(*per_op).c_str(), nullptr);
  r.repetitions = std::atoi(field("repetitions").value_or("1").c_str());
  r.unit = field("unit").value_or("ns");
  return r;
}

// One line of the summary: PRESTO's figure over the baseline's, with the target it must meet.
// Without a baseline, PRESTO's figure itself (in its unit) is compared with the target.
// Both Results must outlive the Ratio.
struct Ratio {
  Ratio(std::string what, const Result& presto, const Result& baseline, double target, bool at_most)
      : what(std::move(what)), presto(&presto), baseline(&baseline), target(target), at_most(at_most) {}
  Ratio(std::string what, const Result& presto, double target, bool at_most)  // an absolute target
      : what(std::move(what)), presto(&presto), target(target), at_most(at_most) {}

  std::string what;
  const Result* presto;
  const Result* baseline = nullptr;
  double target;  // e.g. 3.0
  bool at_most;   // true: value <= target; false: value >= target
  // at_most: presto / baseline; otherwise baseline / presto ("n times faster").
  double value() const {
    if (baseline == nullptr) return presto->median_ns;
    return at_most ? presto->median_ns / baseline->median_ns : baseline->median_ns / presto->median_ns;
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
    if (r.baseline != nullptr) std::snprintf(base, sizeof base, "%.2f", r.baseline->median_ns);
    std::printf("%-58s %12.2f %12s %9.2f%s %s%8.2f%s %s", r.what.c_str(), r.presto->median_ns, base, v, x,
                r.at_most ? "<=" : ">=", r.target, x, r.met() ? "yes" : "NO");
    if (!r.met()) std::printf(" (off by %.2fx)", r.at_most ? v / r.target : r.target / v);
    std::printf("\n");
  }
  for (const Ratio& r : ratios) {
    std::printf("{\"ratio\":\"%s\",\"presto\":%.2f,\"baseline\":%.2f,\"unit\":\"%s\",\"value\":%.3f,\"target\":%.2f,"
                "\"at_most\":%s,\"met\":%s}\n",
                r.what.c_str(), r.presto->median_ns, r.baseline != nullptr ? r.baseline->median_ns : 0.0,
                r.presto->unit.c_str(), r.value(), r.target, r.at_most ? "true" : "false", r.met() ? "true" : "false");
  }
  std::fflush(stdout);
}

}  // namespace presto::bench
