// presto-procsched: Zahorjan and McCann's "Processor Scheduling in Shared Memory
// Multiprocessors" (1990) as a PSIM model: the toolkit simulating its own design space.
//
// Jobs of the paper's classes (MVA(2,2), FJ(3), VFJ(3), MVA(10,10), FJ(11), VFJ(11); task
// graphs in workload.hpp) arrive as a Poisson stream at a P = 20 processor machine; task times
// are Uniform(0.95, 1.05); giving a processor to a job costs O. Three allocation policies:
// Run-To-Completion, Round-Robin co-scheduling and Dynamic (the paper's rules, quoted in
// run_to_completion.cpp, round_robin.cpp and dynamic.cpp). For each workload, policy, load U
// and overhead O the app prints the mean response time of the jobs arriving after the warm-up
// (15,500 time units with the first 500 discarded, as in the paper) and the mean processors
// per job.
//
// Checked (exit status 1 otherwise): first, the task graphs reproduce the paper's Table 1
// (minimum, maximum and average parallelism, total work, minimum elapsed time), both as
// computed from the graphs and as the model's response time for one job alone with
// deterministic task times; then every point is simulated by the SequentialSimulator and by
// PSIM on each --processors count, and the results must be identical to the last bit.

#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "model.hpp"

using namespace procsched;

namespace {

struct Options {
  std::vector<std::string> workloads = Workload::names();
  std::vector<Policy> policies{Policy::run_to_completion, Policy::round_robin, Policy::dynamic};
  std::vector<double> loads{0.5};
  std::vector<double> overheads{0, 0.25, 0.5, 1, 2};
  ModelConfig model{};
  std::vector<std::size_t> processors{2};
  presto::psim::Protocol protocol = presto::psim::Protocol::deadlock_recovery;
  std::uint64_t shuffle = 0;
  bool table1_only = false;
  bool json = false;
};

constexpr const char* usage =
    "usage: %s [--workloads W[,W...]] [--policies rtc,rr,dynamic] [--loads U[,U...]]\n"
    "          [--overheads O[,O...]] [--machine P] [--end T] [--warmup T] [--spread S] [--seed N]\n"
    "          [--min-quantum Q] [--processors P[,P...]] [--protocol recovery|null] [--shuffle SEED]\n"
    "          [--table1] [--json]\n"
    "Zahorjan and McCann's processor-scheduling study, simulated with PSIM. Workloads: MVA(2,2),\n"
    "FJ(3), VFJ(3), MVA(10,10), FJ(11), VFJ(11) (default: all six, each alone), or 'mixed' (all six\n"
    "at equal rates in one run). Policies: rtc (Run-To-Completion), rr (Round-Robin co-scheduling,\n"
    "quantum 39 O, at least Q = 1), dynamic (default: all three). Loads U = lambda x work / P\n"
    "(default 0.5); overheads O (default 0,0.25,0.5,1,2); a machine of P = 20 processors; each run\n"
    "until T = 15500, the first 500 a warm-up; task times mean x Uniform(1 - S, 1 + S), S = 0.05.\n"
    "Prints the Table 1 check, then mean response time and processors per job for each point.\n"
    "Each point is run by the sequential simulator and by PSIM on each --processors count (default\n"
    "2; 0: one per hardware thread), which must agree exactly; --shuffle SEED runs PSIM over a\n"
    "ShufflePool (random interleavings, for tests). --table1: the Table 1 check only.\n";

// Splits at the commas outside parentheses ("MVA(2,2),FJ(3)" -> "MVA(2,2)", "FJ(3)").
std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out{""};
  int depth = 0;
  for (char c : text) {
    if (c == ',' && depth == 0) {
      out.emplace_back();
      continue;
    }
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    out.back() += c;
  }
  return out;
}

bool parse(int argc, char** argv, Options& o) {
  presto::apps::CommandLine cl{usage};
  cl.option("--workloads", [&o](const std::string& v) {
    o.workloads = split_names(v);
    for (const std::string& w : o.workloads) {
      if (w != "mixed") (void)Workload::named(w);  // std::invalid_argument naming the classes
    }
  });
  cl.option("--policies", [&o](const std::string& v) {
    o.policies.clear();
    for (const std::string& p : presto::apps::parse_list<std::string>("--policies", v)) {
      if (p == "rtc") {
        o.policies.push_back(Policy::run_to_completion);
      } else if (p == "rr") {
        o.policies.push_back(Policy::round_robin);
      } else if (p == "dynamic") {
        o.policies.push_back(Policy::dynamic);
      } else {
        throw presto::apps::BadValue("--policies: '" + p + "' is not rtc, rr or dynamic");
      }
    }
  });
  cl.option("--loads", o.loads).option("--overheads", o.overheads).option("--machine", o.model.processors);
  cl.option("--end", o.model.end).option("--warmup", o.model.warmup).option("--spread", o.model.spread);
  cl.option("--seed", o.model.seed).option("--min-quantum", o.model.min_quantum).processors(o.processors);
  cl.option("--protocol", [&o](const std::string& p) {
    if (p != "null" && p != "recovery") throw presto::apps::BadValue("--protocol must be null or recovery");
    o.protocol = p == "null" ? presto::psim::Protocol::null_messages : presto::psim::Protocol::deadlock_recovery;
  });
  cl.option("--shuffle", o.shuffle);
  cl.flag("--table1", o.table1_only).flag("--json", o.json);
  if (!cl.parse(argc, argv)) return false;
  std::string bad;
  for (double u : o.loads) bad += u > 0 && u < 1 ? "" : " a load outside (0, 1);";
  for (double v : o.overheads) bad += v >= 0 ? "" : " a negative overhead;";
  if (o.policies.empty() || o.loads.empty() || o.overheads.empty() || o.workloads.empty()) bad += " an empty list;";
  if (!bad.empty()) return cl.error("bad arguments:" + bad);
  o.model.check();  // std::invalid_argument naming what is out of range
  return true;
}

// Table 1 as printed (P = the machine's processors).
struct Expected {
  int min, max;
  double average, work, elapsed;
};

Expected table1(const Workload& w, int P) {
  const double k = w.width();
  if (w.shape() == Workload::Shape::variable_fork_join) {
    // VFJ(K), c cycles: c + 1 sequential tasks and c phases of K work, each split P ways:
    // work c + 1 + c K, minimum elapsed time c + 1 + c K / P (Table 1's 3 + 6/P and 11 + 110/P),
    // average parallelism their ratio (3P/(P+2) and 11P/(P+10)).
    const double c = w.cycles();
    const double work = c + 1 + c * k, elapsed = c + 1 + c * k / P;
    return {1, P, work / elapsed, work, elapsed};
  }
  if (w.width() == 3) return {1, 3, 1.8, 9, 5};
  return {1, 11, 5.8, 121, 21};
}

bool check_table1(const Options& o) {
  const int P = o.model.processors;
  std::printf("Table 1 (P = %d; deterministic task times, no overhead, the machine to itself):\n", P);
  std::printf("%-11s %9s %9s %18s %14s %22s %12s %12s\n", "workload", "min par", "max par", "average par",
              "work", "min elapsed", "RTC alone", "Dynamic alone");
  bool ok = true;
  for (const std::string& name : Workload::names()) {
    const Workload w = Workload::named(name);
    const Workload::Profile p = w.alone(P);
    const Expected e = table1(w, P);
    // MVA and FJ averages are printed to one decimal in the paper.
    const double average = w.shape() == Workload::Shape::variable_fork_join ? p.average_parallelism()
                                                                             : std::round(p.average_parallelism() * 10) / 10;
    bool row = p.min_parallelism == e.min && p.max_parallelism == e.max && std::abs(average - e.average) < 1e-9 &&
               std::abs(p.work - e.work) < 1e-9 && std::abs(p.elapsed - e.elapsed) < 1e-9;
    // The whole model, one job alone: its response time is the minimum elapsed time.
    double alone[2];
    const Policy policies[2] = {Policy::run_to_completion, Policy::dynamic};
    for (int i = 0; i < 2; ++i) {
      ModelConfig c = o.model;
      c.workloads = {name};
      c.policy = policies[i];
      c.overhead = 0;
      c.spread = 0;
      c.warmup = 0;
      c.limit = 1;
      c.end = 1000;
      const ModelResult r = run_model(c, 0);
      alone[i] = r.measures.jobs == 1 ? r.measures.mean_response() : -1;
      row = row && std::abs(alone[i] - e.elapsed) < 1e-9;
    }
    ok = ok && row;
    char avg[64], el[64];
    std::snprintf(avg, sizeof avg, "%.3f (paper %.3f)", p.average_parallelism(), e.average);
    std::snprintf(el, sizeof el, "%.3f (paper %.3f)", p.elapsed, e.elapsed);
    std::printf("%-11s %4d (%2d) %4d (%2d) %18s %6.1f (%3.0f) %22s %12.3f %12.3f%s\n", name.c_str(), p.min_parallelism,
                e.min, p.max_parallelism, e.max, avg, p.work, e.work, el, alone[0], alone[1], row ? "" : "  MISMATCH");
  }
  std::printf("%s: the task graphs %s Table 1\n\n", ok ? "OK" : "FAILED", ok ? "reproduce" : "do NOT reproduce");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    if (!parse(argc, argv, o)) return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  bool ok = check_table1(o);
  if (o.table1_only) return ok ? 0 : 1;

  std::printf("P = %d, task times x U(%g, %g), %g time units after a warm-up of %g, seed %llu; "
              "Round-Robin quantum max(39 O, %g)\n",
              o.model.processors, 1 - o.model.spread, 1 + o.model.spread, o.model.end - o.model.warmup, o.model.warmup,
              static_cast<unsigned long long>(o.model.seed), o.model.min_quantum);
  std::printf("%-11s %-12s %5s %5s %10s %10s %7s %5s %9s %8s %s\n", "workload", "policy", "U", "O", "response",
              "procs/job", "jobs", "left", "events", "seq s", "PSIM (P: s, same?)");
  int mismatches = 0;
  for (const std::string& name : o.workloads) {
    for (double load : o.loads) {
      for (Policy policy : o.policies) {
        for (double overhead : o.overheads) {
          ModelConfig c = o.model;
          c.workloads = name == "mixed" ? Workload::names() : std::vector<std::string>{name};
          c.policy = policy;
          c.load = load;
          c.overhead = overhead;
          auto t0 = std::chrono::steady_clock::now();
          const ModelResult seq = run_model(c, 0);
          const double seq_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          std::string psim;
          bool same_all = true;
          for (std::size_t p : o.processors) {
            const ModelResult par = run_model(c, p, o.protocol, o.shuffle);
            const bool same = par.measures == seq.measures && par.events == seq.events;
            same_all = same_all && same;
            char cell[64];
            std::snprintf(cell, sizeof cell, " %zu: %.2f %s", p, par.stats.seconds, same ? "yes" : "NO");
            psim += cell;
          }
          mismatches += same_all ? 0 : 1;
          const Measures& m = seq.measures;
          const bool unstable = m.unstable();
          std::printf("%-11s %-12s %5.2f %5.2f %10.3f%c %9.2f %7llu %5llu %9llu %8.2f%s\n", name.c_str(),
                      to_string(policy), load, overhead, m.mean_response(), unstable ? '!' : ' ', m.mean_processors(),
                      static_cast<unsigned long long>(m.jobs), static_cast<unsigned long long>(m.left),
                      static_cast<unsigned long long>(seq.events), seq_s, psim.c_str());
          if (name == "mixed") {  // Table 2's right half: each class's mean response
            std::printf("%-11s", "  by class:");
            for (std::size_t k = 0; k < c.workloads.size(); ++k) {
              std::printf(" %s %.2f", c.workloads[k].c_str(),
                          m.class_jobs[k] ? m.class_response[k] / static_cast<double>(m.class_jobs[k]) : 0.0);
            }
            std::printf("\n");
          }
          if (o.json) {
            std::printf("{\"name\": \"procsched\", \"workload\": \"%s\", \"policy\": \"%s\", \"load\": %g, \"overhead\": %g, "
                        "\"response\": %.6g, \"processors_per_job\": %.4g, \"jobs\": %llu, \"left\": %llu, "
                        "\"events\": %llu, \"unstable\": %s, \"identical\": %s}\n",
                        name.c_str(), to_string(policy), load, overhead, m.mean_response(), m.mean_processors(),
                        static_cast<unsigned long long>(m.jobs), static_cast<unsigned long long>(m.left),
                        static_cast<unsigned long long>(seq.events), unstable ? "true" : "false",
                        same_all ? "true" : "false");
          }
          std::fflush(stdout);
        }
      }
    }
  }
  std::printf("(response!: unstable, the queue kept growing: more than 10 jobs, and 5%% of those that arrived "
              "after the warm-up, left at the end)\n");
  ok = ok && mismatches == 0;
  std::printf("%s: %d point(s) where PSIM did NOT reproduce the sequential simulator\n", ok ? "OK" : "FAILED", mismatches);
  return ok ? 0 : 1;
}
