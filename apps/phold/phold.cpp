// presto-phold: the PHOLD benchmark on PSIM, against PSIM's own sequential simulator.
//
// Builds PHOLD (N LPs fully connected, each with an initial population of events; every event
// spins for the given work, then goes to another LP with probability `remote`, or back to its
// own LP, lookahead + Exp(mean) later), runs it once in the sequential event-list simulator
// and then in PSIM on each requested number of processors with each protocol, and prints
// events/s, events/s per processor, speed-up over PSIM on one processor and over the
// sequential simulator, deadlocks broken and null messages. The result is checked: every run
// must give every LP the sequential simulator's history (same events, same checksum).

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <presto/presto.hpp>
#include <presto/psim/phold.hpp>
#include <presto/psim/sequential_simulator.hpp>
#include <presto/psim/simulation.hpp>

#include "command_line.hpp"
#include "psim_schedulers.hpp"

using namespace presto::psim;

namespace {

struct Options {
  PholdConfig model{};
  double work_us = 1.0;
  Time end = 0;  // 0: chosen for about 200,000 events
  std::vector<std::size_t> processors{1, 2};
  std::vector<Protocol> protocols{Protocol::null_messages, Protocol::deadlock_recovery};
  std::string scheduler = "psim";
};

constexpr const char* usage =
      "usage: %s [--lps N] [--population K] [--lookahead L] [--mean M] [--remote R] [--work-us W]\n"
      "          [--end T] [--processors P[,P...]] [--protocol null|recovery|both] [--seed S]\n"
      "          [--scheduler psim|ltf|minimal|windowed]\n"
      "PHOLD on PSIM: N LPs (default 16), K initial events each (4), delays L + Exp(M)\n"
      "(1 + Exp(1)), a fraction R (0.25) of events sent to another LP, W microseconds of work per\n"
      "event (1), simulated until T (default: about 200,000 events), on each P processors (1,2)\n"
      "with each protocol (both) under the named PSIM scheduler (psim: PSIM's own; ltf: lowest\n"
      "timestamp first; minimal: Chandy-Misra's single earliest message; windowed: YAWNS-style\n"
      "windows); reports events/s and speed-ups; checks every run against the sequential simulator.\n"
      "P = 0: one processor per hardware thread.\n";

bool parse(int argc, char** argv, Options& o) {
  presto::apps::CommandLine cl{usage};
  cl.option("--lps", o.model.processes).option("--population", o.model.population);
  cl.option("--lookahead", o.model.lookahead).option("--mean", o.model.mean).option("--remote", o.model.remote);
  cl.option("--work-us", o.work_us).option("--end", o.end).processors(o.processors);
  cl.option("--seed", o.model.seed);
  cl.option("--scheduler", [&o](const std::string& name) {
    psim_schedulers::make(name);  // std::invalid_argument naming the choices if unknown
    o.scheduler = name;
  });
  cl.option("--protocol", [&o](const std::string& p) {
    if (p == "null") {
      o.protocols = {Protocol::null_messages};
    } else if (p == "recovery") {
      o.protocols = {Protocol::deadlock_recovery};
    } else if (p == "both") {
      o.protocols = {Protocol::null_messages, Protocol::deadlock_recovery};
    } else {
      throw std::invalid_argument("--protocol must be null, recovery or both");
    }
  });
  if (!cl.parse(argc, argv)) return false;
  if (o.model.processes < 2 || o.model.population == 0 || o.processors.empty()) {
    throw std::invalid_argument("need at least 2 LPs, a positive population and a processor count");
  }
  return true;
}

std::uint64_t checksum(const Simulation& sim) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < sim.size(); ++i) sum = sum * 1099511628211ULL + static_cast<PholdProcess&>(sim.process(i)).checksum();
  return sum;
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
  o.model.work = work_iterations(std::chrono::nanoseconds(static_cast<long>(o.work_us * 1000)));
  if (o.end == 0) {
    // Events per unit of time: LPs x population / mean delay.
    o.end = 200000.0 * (o.model.lookahead + o.model.mean) / (o.model.processes * o.model.population);
  }
  std::printf("PHOLD: %u LPs, population %u, lookahead %g, mean %g, remote %g, work %.2f us (%llu spins), end %g, "
              "scheduler %s\n",
              o.model.processes, o.model.population, o.model.lookahead, o.model.mean, o.model.remote, o.work_us,
              static_cast<unsigned long long>(o.model.work), o.end, o.scheduler.c_str());

  Simulation reference{{.end_time = o.end}};
  build_phold(reference, o.model);
  SimulationStats seq = SequentialSimulator{reference}.run();
  const std::uint64_t expected = checksum(reference);
  std::printf("%-18s %3s %12s %14s %14s %9s %9s %10s %12s %10s %10s\n", "system", "P", "events", "events/s",
              "ev/s/proc", "vs P=1", "vs seq", "deadlocks", "null msgs", "blocks/ev", "yields/ev");
  std::printf("%-18s %3d %12llu %14.0f %14.0f %9s %9.2f %10s %12s %10s %10s\n", "sequential", 1,
              static_cast<unsigned long long>(seq.events), seq.events_per_second(), seq.events_per_second(), "-", 1.0,
              "-", "-", "-", "-");

  bool ok = true;
  for (Protocol protocol : o.protocols) {
    double one = 0;
    for (std::size_t p : o.processors) {
      presto::Runtime rt{{.processors = p}};
      auto [stats, sum] = rt.run([&] {
        Simulation sim{{.protocol = protocol, .end_time = o.end}};
        build_phold(sim, o.model);
        SimulationStats s = sim.run(psim_schedulers::make(o.scheduler));
        return std::pair{s, checksum(sim)};
      });
      if (p == 1) one = stats.events_per_second();
      const bool same = stats.events == seq.events && sum == expected;
      ok = ok && same;
      const double blocks = static_cast<double>(stats.blocks) / static_cast<double>(stats.events);
      const double yields = static_cast<double>(stats.yields) / static_cast<double>(stats.events);
      char vs_one[16] = "-";
      if (one > 0) std::snprintf(vs_one, sizeof vs_one, "%.2f", stats.events_per_second() / one);
      std::printf("%-18s %3zu %12llu %14.0f %14.0f %9s %9.2f %10llu %12llu %10.2f %10.2f%s\n",
                  std::string(to_string(protocol)).c_str(), p, static_cast<unsigned long long>(stats.events),
                  stats.events_per_second(), stats.events_per_second() / static_cast<double>(p), vs_one,
                  stats.events_per_second() / seq.events_per_second(),
                  static_cast<unsigned long long>(stats.deadlocks()),
                  static_cast<unsigned long long>(stats.null_messages), blocks, yields, same ? "" : "  MISMATCH");
    }
  }
  std::printf("%s: every PSIM run %s the sequential simulator's events and checksum\n", ok ? "OK" : "FAILED",
              ok ? "reproduced" : "did NOT reproduce");
  return ok ? 0 : 1;
}
