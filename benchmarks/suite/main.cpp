// presto_bench: PRESTO beside the systems users would pick instead, in one run on one
// machine, with the paper's measurements (Tables II and III, Figures 2 and 3). Prints one
// JSON line per measurement (support/harness.hpp), then the targets as ratios.
// benchmarks/run.py runs it with the Go peer and draws the plots; see docs/benchmarks.md.
//
// Usage: presto_bench [--quick] [--processors N] [--doubling] [--only GROUP,...] [--peers FILE]
//        presto_bench --figure3-counts      (prints Figure 3's thread counts, for the Go peer)
//   --quick          reduced counts and repetitions (CI's smoke run, well under a minute)
//   --processors N   curves run on 1..N processors (default: the hardware threads)
//   --doubling       curves run on 1, 2, 4, ..., N processors instead (a machine with many cores)
//   --only GROUP,..  switching, threads, locks, matmul, memory (default: all)
//   --peers FILE     measurement lines of peer programs (the Go peer) to include in the ratios

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "suite.hpp"

namespace presto::bench {
namespace {

void usage() {
  std::puts(
      "usage: presto_bench [--quick] [--processors N] [--doubling] [--only GROUP,...] [--peers FILE] [--figure3-counts]\n"
      "  groups: switching, threads, locks, matmul, memory");
}

void print_targets(const Suite& s) {
  const std::size_t p2 = std::min<std::size_t>(2, s.options().max_processors);
  const std::size_t pmax = s.options().max_processors;
  const std::uint64_t leaves = s.options().scaled(1'000'000, 10'000);
  const std::uint64_t blocked = s.options().scaled(1'000'000, 20'000);
  struct Spec {
    std::string what;
    const Result* presto;
    const Result* baseline;
    double target;
    bool at_most;
    bool absolute;
  };
  const std::string skynet = "skynet " + std::to_string(leaves) + " on " + std::to_string(p2) + " processors: ";
  std::vector<Spec> specs{
      {"yield / raw Boost.Context switch", s.find("yield", "presto", 1), s.find("yield", "boost.context", 1), 3, true, false},
      {"yield: Boost.Fiber / presto", s.find("yield", "presto", 1), s.find("yield", "boost.fiber", 1), 3, false, false},
      {"fork+join: Boost.Fiber / presto", s.find("fork_join", "presto", 1), s.find("fork_join", "boost.fiber", 1), 4,
       false, false},
      {"fork+join: Go goroutine+WaitGroup / presto", s.find("fork_join", "presto", 1), s.find("fork_join", "go", 1), 4,
       false, false},
      {"Monitor entry+exit / std::mutex lock+unlock", s.find("monitor_test", "presto", 1),
       s.find("lock_test", "std", 1), 2, true, false},
      {"condition ping-pong, 1 proc: Boost.Fiber / presto", s.find("switch_test", "presto", 1),
       s.find("switch_test", "boost.fiber", 1), 4, false, false},
      {"condition ping-pong, 1 proc: Go channel / presto", s.find("switch_test", "presto", 1),
       s.find("switch_test", "go", 1), 3, false, false},
      // The same target for the turns a producer and a consumer take (the monitor entered for
      // each): the paper's switch_test lets the signaller's wait hand over the processor.
      {"condition turns, monitor entered each turn, 1 proc: Boost.Fiber / presto", s.find("condition_turns", "presto", 1),
       s.find("condition_turns", "boost.fiber", 1), 4, false, false},
      {skynet + "Boost.Fiber / presto", s.find("skynet", "presto", p2, leaves), s.find("skynet", "boost.fiber", p2, leaves),
       2, false, false},
      {skynet + "Go / presto", s.find("skynet", "presto", p2, leaves), s.find("skynet", "go", p2, leaves), 3, false,
       false},
      {skynet + "Boost.Fiber / presto, lifo pool", s.find("skynet", "presto-lifo", p2, leaves),
       s.find("skynet", "boost.fiber", p2, leaves), 2, false, false},
      {skynet + "Go / presto, lifo pool", s.find("skynet", "presto-lifo", p2, leaves), s.find("skynet", "go", p2, leaves),
       3, false, false},
      {"Fig. 3, " + std::to_string(pmax) + " procs: 40,000 threads / " + std::to_string(pmax) + " threads",
       s.find("matmul200", "presto", pmax, 40'000), s.find("matmul200", "presto", pmax, pmax), 1.15, true, false},
      {"Fig. 3, tight kernel, " + std::to_string(pmax) + " procs: 40,000 threads / " + std::to_string(pmax) + " threads",
       s.find("matmul200_tight", "presto", pmax, 40'000), s.find("matmul200_tight", "presto", pmax, pmax), 1.15, true, false},
      {"Fig. 3, tight kernel, " + std::to_string(pmax) + " procs: 40,000 threads / the kernel per element, no threads",
       s.find("matmul200_tight", "presto", pmax, 40'000), s.find("matmul200_tight", "kernel-per-element", pmax, 40'000), 1.15,
       true, false},
      {std::to_string(blocked) + " blocked threads: bytes resident per thread", s.find("blocked_memory", "presto", 1, blocked),
       nullptr, 16 * 1024, true, true},
  };
  std::vector<Ratio> ratios;
  for (const Spec& spec : specs) {
    if (spec.presto == nullptr || (!spec.absolute && spec.baseline == nullptr)) {
      std::printf("target not measured in this run: %s\n", spec.what.c_str());
      continue;
    }
    if (spec.absolute) {
      ratios.emplace_back(spec.what, *spec.presto, spec.target, spec.at_most);
    } else {
      ratios.emplace_back(spec.what, *spec.presto, *spec.baseline, spec.target, spec.at_most);
    }
  }
  print_ratios(ratios);
}

int main_impl(int argc, char** argv) {
  Options options;
  options.max_processors = std::max(1u, std::thread::hardware_concurrency());
  std::string only = "switching,threads,locks,matmul,memory";
  std::string peers;
  bool counts = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--quick") {
      options.quick = true;
    } else if (a == "--processors") {
      options.max_processors = std::stoul(value());
    } else if (a == "--doubling") {
      options.doubling = true;
    } else if (a == "--only") {
      only = value();
    } else if (a == "--peers") {
      peers = value();
    } else if (a == "--figure3-counts") {
      counts = true;
    } else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else {
      usage();
      return 2;
    }
  }
  if (options.max_processors == 0) throw std::invalid_argument("--processors must be at least 1");
  options.repetitions = options.quick ? 3 : 7;
  if (counts) {
    const char* sep = "";
    for (std::size_t t : figure3_counts(options)) {
      std::printf("%s%zu", sep, t);
      sep = ",";
    }
    std::printf("\n");
    return 0;
  }

  Suite suite{options};
  auto wanted = [&](const char* group) { return ("," + only + ",").find(std::string(",") + group + ",") != std::string::npos; };
  if (wanted("memory")) run_memory(suite);  // first: it forks, which wants a single thread
  // The host's cross-core latency, before and after the groups: the multi-processor figures
  // move with it (support/harness.hpp). After the memory group, which forks processes.
  const int trip_reps = options.quick ? 3 : 5;
  core_round_trip("core_round_trip_before", trip_reps);
  if (wanted("switching")) run_switching(suite);
  if (wanted("threads")) run_threads(suite);
  if (wanted("locks")) run_locks(suite);
  if (wanted("matmul")) run_matmul(suite);
  core_round_trip("core_round_trip_after", trip_reps);
  if (!peers.empty()) {
    std::ifstream in{peers};
    if (!in) throw std::runtime_error("cannot read " + peers);
    for (std::string line; std::getline(in, line);) {
      if (auto r = parse_json(line)) suite.keep(std::move(*r));
    }
  }
  print_targets(suite);
  return 0;
}

}  // namespace
}  // namespace presto::bench

int main(int argc, char** argv) {
  try {
    return presto::bench::main_impl(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "presto_bench: %s\n", e.what());
    return 1;
  }
}
