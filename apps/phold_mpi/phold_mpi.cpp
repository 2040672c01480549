// presto-phold-mpi: PHOLD on PSIM across MPI ranks (presto::psim_mpi), against the sequential
// simulator measured in the same run.
//
//   presto-phold-mpi --ranks 1,2,4 [options]      launches itself with mpirun once per count
//   presto-phold-mpi --ranks 1,2,4 --protocol null,window   ... and per protocol, side by side
//   mpirun -n 4 presto-phold-mpi [options]        or is launched by you
//
// Every rank builds the same PHOLD model (presto-phold's) and runs its block of LPs on
// --processors processors. Rank 0 also runs the sequential simulator, checks that every LP
// ended with the sequential simulator's checksum and the events agree, and prints events/s
// and the per-event costs: what crossed ranks (events and null messages), MPI messages
// (batching), blocks, windows, and the one-way MPI latency and MPI_Allreduce time measured
// before the run.
// The sequential simulator runs first, alone (the other ranks sleep meanwhile).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <presto/presto.hpp>
#include <presto/psim/phold.hpp>
#include <presto/psim/sequential_simulator.hpp>
#include <presto/psim_mpi/distributed_simulation.hpp>
#include <presto/psim_mpi/environment.hpp>

#include "command_line.hpp"
#include "json_line.hpp"
#include "mpi_launch.hpp"

using namespace presto::psim;
using namespace presto::psim_mpi;

namespace {

struct Options {
  PholdConfig model{};
  double work_us = 0;
  Time end = 0;  // 0: about 100,000 events
  std::size_t processors = 1;
  std::vector<int> ranks;  // empty: the ranks mpirun gave
  std::vector<std::string> protocols;  // across ranks: "null", "window"; empty: the library's default
  std::size_t batch = DistributedConfig{}.batch;
  std::uint32_t idle_spins = DistributedConfig{}.idle_spins;
  long idle_sleep_us = DistributedConfig{}.idle_sleep.count();
  std::uint32_t window_spins = DistributedConfig{}.window_spins;
  int repeat = 3;
  bool json = false;
};

constexpr const char* usage =
    "usage: %s [--ranks R[,R...]] [--protocol null|window[,...]] [--processors P] [--lps N] [--population K]\n"
    "          [--lookahead L] [--mean M] [--remote R] [--work-us W] [--end T] [--seed S] [--batch B]\n"
    "          [--idle-spins S] [--idle-sleep-us U] [--window-spins S] [--repeat N] [--json]\n"
    "PHOLD on PSIM across MPI ranks: N LPs (default 64) in blocks over the ranks, each rank a presto\n"
    "runtime of P processors (1); K initial events per LP (4), delays L + Exp(M) (1 + Exp(1)), a fraction\n"
    "R (0.25) of events sent to another LP, W microseconds of work per event (0), until T (default:\n"
    "about 100,000 events); at most B records per MPI message (4096); the median of N runs (3).\n"
    "--ranks: run under mpirun once per count (from outside mpirun); otherwise the ranks mpirun gave.\n"
    "--protocol: across ranks, null messages or windows (YAWNS); several: each, side by side (default:\n"
    "the library's, DistributedConfig::protocol). --idle-spins, --idle-sleep-us: the null messages'\n"
    "communication thread's idle policy; --window-spins: polls before a rank waiting in a window sleeps\n"
    "(DistributedConfig::idle_spins, idle_sleep, window_spins).\n"
    "Checks every LP against the sequential simulator; --json adds JSON lines for benchmarks/run.py.\n";

bool parse(int argc, char** argv, Options& o) {
  presto::apps::CommandLine cl{usage};
  cl.option("--ranks", o.ranks).option("--protocol", o.protocols).processors(o.processors);
  cl.option("--lps", o.model.processes).option("--population", o.model.population);
  cl.option("--lookahead", o.model.lookahead).option("--mean", o.model.mean).option("--remote", o.model.remote);
  cl.option("--work-us", o.work_us).option("--end", o.end).option("--seed", o.model.seed);
  cl.option("--idle-spins", o.idle_spins).option("--idle-sleep-us", o.idle_sleep_us);
  cl.option("--window-spins", o.window_spins);
  cl.option("--batch", o.batch).option("--repeat", o.repeat).flag("--json", o.json);
  if (!cl.parse(argc, argv)) return false;
  if (o.model.processes < 2 || o.model.population == 0) return cl.error("need at least 2 LPs and a positive population");
  if (!(o.model.lookahead > 0)) return cl.error("--lookahead must be positive: distributed PSIM needs lookahead");
  if (o.batch == 0 || o.repeat < 1) return cl.error("--batch and --repeat must be positive");
  for (int r : o.ranks) {
    if (r < 1) return cl.error("--ranks: every count must be at least 1");
  }
  for (const std::string& p : o.protocols) {
    if (p != "null" && p != "window") return cl.error("--protocol: '" + p + "' is neither null nor window");
  }
  if (o.protocols.size() > 1 && o.ranks.empty()) return cl.error("--protocol: several need --ranks (one per mpirun)");
  return true;
}

RankProtocol protocol_of(const std::string& name) {
  return name == "window" ? RankProtocol::windows : RankProtocol::null_messages;
}
std::string name_of(RankProtocol p) { return p == RankProtocol::windows ? "window" : "null"; }

// From outside mpirun: runs this program under mpirun once per rank count, echoes what rank 0
// prints, and compares the counts' events/s (taken from the children's JSON lines).
int launch(int argc, char** argv, const Options& o) {
  const std::string self = presto::apps::self_path(argv[0]);
  std::string passed;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--ranks" || a == "--protocol") {
      ++i;
    } else if (a != "--json") {
      passed += " '" + a + "'";
    }
  }
  std::vector<std::string> protocols = o.protocols;
  if (protocols.empty()) protocols.push_back(name_of(DistributedConfig{}.protocol));
  // events/s by protocol, then by rank count (0: that run failed)
  std::vector<std::vector<double>> rates(protocols.size(), std::vector<double>(o.ranks.size()));
  bool ok = true;
  for (std::size_t p = 0; p < protocols.size(); ++p) {
    for (std::size_t k = 0; k < o.ranks.size(); ++k) {
      const std::string cmd =
          presto::apps::mpirun_command(o.ranks[k], self, passed + " --protocol " + protocols[p] + " --json");
      std::fflush(stdout);
      FILE* child = popen(cmd.c_str(), "r");
      if (child == nullptr) throw std::runtime_error("cannot run " + cmd);
      char line[4096];
      while (std::fgets(line, sizeof line, child) != nullptr) {
        if (line[0] == '{') {
          if (const char* eps = std::strstr(line, "\"events_per_second\": ")) rates[p][k] = std::atof(eps + 21);
          if (!o.json) continue;
        }
        std::fputs(line, stdout);
      }
      const int status = pclose(child);
      if (status != 0) {
        std::fprintf(stderr, "presto-phold-mpi: '%s' failed (status %d)\n", cmd.c_str(), status);
        ok = false;
      }
    }
  }
  // events/s per protocol side by side; each against the first count, and against the first
  // protocol at the same count.
  std::printf("\n%6s", "ranks");
  for (const std::string& p : protocols) std::printf(" %16s %8s", (p + " events/s").c_str(), "vs 1st");
  for (std::size_t p = 1; p < protocols.size(); ++p) std::printf(" %14s", (protocols[p] + "/" + protocols[0]).c_str());
  std::printf("\n");
  for (std::size_t k = 0; k < o.ranks.size(); ++k) {
    std::printf("%6d", o.ranks[k]);
    for (std::size_t p = 0; p < protocols.size(); ++p) {
      std::printf(" %16.0f %8.2f", rates[p][k], rates[p][0] > 0 ? rates[p][k] / rates[p][0] : 0.0);
    }
    for (std::size_t p = 1; p < protocols.size(); ++p) {
      std::printf(" %14.2f", rates[0][k] > 0 ? rates[p][k] / rates[0][k] : 0.0);
    }
    std::printf("\n");
  }
  return ok ? 0 : 1;
}

// One-way latency of a 64-byte MPI message between rank 0 and every other rank, the worst
// (microseconds; 0 on one rank): half the mean of 1,000 round trips after 100 warm-up ones.
double latency_us(int rank, int ranks) {
  double worst = 0;
  char buffer[64] = {};
  for (int peer = 1; peer < ranks; ++peer) {
    if (rank != 0 && rank != peer) continue;
    const int other = rank == 0 ? peer : 0;
    std::chrono::steady_clock::time_point start;
    for (int i = 0; i < 1100; ++i) {
      if (i == 100) start = std::chrono::steady_clock::now();
      if (rank == 0) {
        check_mpi(MPI_Send(buffer, 64, MPI_BYTE, other, 7, MPI_COMM_WORLD), "MPI_Send");
        check_mpi(MPI_Recv(buffer, 64, MPI_BYTE, other, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
      } else {
        check_mpi(MPI_Recv(buffer, 64, MPI_BYTE, other, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
        check_mpi(MPI_Send(buffer, 64, MPI_BYTE, other, 7, MPI_COMM_WORLD), "MPI_Send");
      }
    }
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    worst = std::max(worst, us / 1000 / 2);
  }
  return worst;
}

// Microseconds per MPI_Allreduce of one double over all ranks (the mean of 1,000 after 100):
// what a windowed (YAWNS) protocol pays at least once per window.
double allreduce_us() {
  double value = 1, sum = 0;
  std::chrono::steady_clock::time_point start;
  for (int i = 0; i < 1100; ++i) {
    if (i == 100) start = std::chrono::steady_clock::now();
    check_mpi(MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  }
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / 1000;
}

int run_ranks(Options o, int rank, int ranks) {
  // The spin count per event is part of the model (it enters the checksums): rank 0's for all.
  o.model.work = rank == 0 ? work_iterations(std::chrono::nanoseconds(static_cast<long>(o.work_us * 1000))) : 0;
  check_mpi(MPI_Bcast(&o.model.work, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
  // The baseline first, on rank 0, while the other ranks sleep (a blocking MPI wait would spin
  // on a core the baseline needs).
  SimulationStats seq;
  Simulation reference{{.end_time = o.end}};
  build_phold(reference, o.model);
  if (rank == 0) seq = SequentialSimulator{reference}.run();
  MPI_Request barrier = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &barrier), "MPI_Ibarrier");
  for (int done = 0; done == 0;) {
    check_mpi(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const double latency = latency_us(rank, ranks);
  const double reduce = allreduce_us();
  const RankProtocol protocol = o.protocols.empty() ? DistributedConfig{}.protocol : protocol_of(o.protocols.front());
  std::vector<DistributedStats> runs;
  std::vector<std::uint64_t> sums(o.model.processes), total(o.model.processes);
  presto::Runtime rt{{.processors = o.processors}};
  rt.run([&] {
    for (int i = 0; i < o.repeat; ++i) {
      Simulation sim{{.protocol = Protocol::null_messages, .end_time = o.end, .measure_blocked_time = true}};
      build_phold(sim, o.model);
      DistributedSimulation dist{sim, {.partition = {}, .protocol = protocol, .batch = o.batch,
                                      .idle_spins = o.idle_spins,
                                      .idle_sleep = std::chrono::microseconds(o.idle_sleep_us),
                                      .window_spins = o.window_spins}};
      runs.push_back(dist.run());
      for (std::uint32_t lp = 0; lp < o.model.processes; ++lp) {
        sums[lp] = dist.owned(sim.process(lp)) ? static_cast<const PholdProcess&>(sim.process(lp)).checksum() : 0;
      }
    }
  });
  check_mpi(MPI_Reduce(sums.data(), total.data(), static_cast<int>(sums.size()), MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD),
            "MPI_Reduce");
  int ok = 1;
  if (rank == 0) {
    for (std::uint32_t lp = 0; lp < o.model.processes; ++lp) {
      if (total[lp] != static_cast<const PholdProcess&>(reference.process(lp)).checksum()) ok = 0;
    }
    for (const DistributedStats& s : runs) ok = ok && s.events() == seq.events ? 1 : 0;

    std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.seconds < b.seconds; });
    const DistributedStats& s = runs[runs.size() / 2];  // the median run
    const double events = static_cast<double>(s.events());
    std::printf("PHOLD on %d ranks x %zu processors, protocol %s across ranks: %u LPs, population %u, lookahead "
                "%g, mean %g, remote %g, work %.2f us, end %g, batch %zu; MPI one-way latency %.1f us, "
                "MPI_Allreduce %.1f us\n",
                ranks, o.processors, name_of(protocol).c_str(), o.model.processes, o.model.population,
                o.model.lookahead, o.model.mean, o.model.remote, o.work_us, o.end, o.batch, latency, reduce);
    double cpu_all = 0;
    for (const RankStats& x : s.ranks) cpu_all += x.cpu_seconds;
    std::printf("sequential: %.0f events/s; distributed: %.0f events/s (%.2fx sequential), median of %d runs of "
                "%.0f events (fastest %.0f, slowest %.0f events/s); CPU %.0f ns per event, all ranks (sequential "
                "%.0f ns wall)\n",
                seq.events_per_second(), s.events_per_second(), s.events_per_second() / seq.events_per_second(),
                o.repeat, events, runs.front().events_per_second(), runs.back().events_per_second(),
                cpu_all * 1e9 / events, 1e9 / seq.events_per_second());
    std::printf("%4s %5s %9s %10s %10s %10s %10s %10s %9s %9s %9s %9s %8s %9s %8s\n", "rank", "LPs", "events",
                "cpu ns/ev", "remote/ev", "rnulls/ev", "lnulls/ev", "mpi/ev", "rec/mpi", "blocks/ev", "block us",
                "rounds/ev", "idle %", "window us", "window %");
    for (std::size_t r = 0; r < s.ranks.size(); ++r) {
      const RankStats& x = s.ranks[r];
      const double ev = std::max<double>(1, static_cast<double>(x.events));
      const double records = static_cast<double>(x.remote_messages + x.remote_bounds);
      std::printf("%4zu %5llu %9llu %10.0f %10.3f %10.3f %10.3f %10.3f %9.1f %9.3f %9.1f %9.3f %8.1f %9.1f %8.1f\n", r,
                  static_cast<unsigned long long>(x.lps), static_cast<unsigned long long>(x.events),
                  x.cpu_seconds * 1e9 / ev, static_cast<double>(x.remote_messages) / ev,
                  static_cast<double>(x.remote_bounds) / ev, static_cast<double>(x.local_null_messages) / ev,
                  static_cast<double>(x.mpi_messages) / ev,
                  x.mpi_messages > 0 ? records / static_cast<double>(x.mpi_messages) : 0.0,
                  static_cast<double>(x.blocks) / ev, x.blocks > 0 ? x.blocked_seconds * 1e6 / static_cast<double>(x.blocks) : 0.0,
                  static_cast<double>(x.rounds) / ev,
                  x.rounds > 0 ? 100.0 * static_cast<double>(x.idle_rounds) / static_cast<double>(x.rounds) : 0.0,
                  x.rounds > 0 ? x.window_seconds * 1e6 / static_cast<double>(x.rounds) : 0.0,
                  x.seconds > 0 ? 100.0 * x.window_seconds / x.seconds : 0.0);
    }
    std::printf("%s: every LP %s the sequential simulator's checksum (%llu events)\n", ok ? "OK" : "FAILED",
                ok ? "reproduced" : "did NOT reproduce", static_cast<unsigned long long>(seq.events));
    double remote = 0, nulls = 0, mpi = 0, blocks = 0, cpu = 0, windows = 0, window_seconds = 0;
    for (const RankStats& x : s.ranks) {
      windows = std::max(windows, protocol == RankProtocol::windows ? static_cast<double>(x.rounds) : 0.0);
      window_seconds = std::max(window_seconds, x.window_seconds);
      cpu += x.cpu_seconds;
      remote += static_cast<double>(x.remote_messages);
      nulls += static_cast<double>(x.remote_bounds);
      mpi += static_cast<double>(x.mpi_messages);
      blocks += static_cast<double>(x.blocks);
    }
    const auto ns = [&](const DistributedStats& d) { return d.seconds * 1e9 / static_cast<double>(d.events()); };
    presto::apps::print_json_line(
        {.name = "psim_mpi_phold",
         .system = std::to_string(ranks) + " ranks" + (protocol == RankProtocol::windows ? ", windows" : ""),
         .processors = o.processors,
         .param = static_cast<std::size_t>(ranks), .median_ns = ns(s), .min_ns = ns(runs.front()),
         .max_ns = ns(runs.back()), .repetitions = runs.size(),
         .extra = {{"events_per_second", s.events_per_second()},
                   {"sequential_events_per_second", seq.events_per_second()},
                   {"vs_sequential", s.events_per_second() / seq.events_per_second()},
                   {"remote_per_event", remote / events}, {"remote_nulls_per_event", nulls / events},
                   {"mpi_messages_per_event", mpi / events}, {"blocks_per_event", blocks / events},
                   {"cpu_ns_per_event", cpu * 1e9 / events}, {"latency_us", latency}, {"allreduce_us", reduce}, {"lookahead", o.model.lookahead},
                   {"windows", windows}, {"window_us", windows > 0 ? window_seconds * 1e6 / windows : 0.0},
                   {"batch", static_cast<double>(o.batch)}}},
        o.json);
  }
  check_mpi(MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return ok != 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.model.processes = 64;
  try {
    if (!parse(argc, argv, o)) return 2;
    if (o.end == 0) o.end = 100000.0 * (o.model.lookahead + o.model.mean) / (o.model.processes * o.model.population);
    if (!o.ranks.empty() && !presto::apps::under_mpirun()) return launch(argc, argv, o);
    Environment mpi{argc, argv};
    if (!o.ranks.empty() && (o.ranks.size() != 1 || o.ranks.front() != mpi.ranks())) {
      std::fprintf(stderr, "presto-phold-mpi: --ranks %d under mpirun, which gave %d ranks\n", o.ranks.front(),
                   mpi.ranks());
      return 2;
    }
    try {
      return run_ranks(o, mpi.rank(), mpi.ranks());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "presto-phold-mpi: %s\n", e.what());
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "presto-phold-mpi: %s\n", e.what());
    return 1;
  }
}
