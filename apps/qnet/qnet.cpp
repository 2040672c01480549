// presto-qnet: a closed multi-class queueing network solved by exact Mean Value Analysis and by
// Schweitzer's approximation, and simulated with PSIM, side by side.
//
// The network (a classic central-server model): terminals (a delay station, think time 4),
// a CPU (FCFS, mean service 0.5) and two disks (FCFS, 0.8 and 0.6); class "batch" cycles
// terminals -> cpu -> disk1, class "interactive" terminals -> cpu -> disk2; moving between
// stations takes the transit time (PSIM's lookahead; MVA counts it as think time). It is
// product-form, so exact MVA gives the true means. The app prints, per class, throughput and
// the mean number at each station: exact MVA, Schweitzer (with its error) and PSIM's mean over
// independent replications with a 99% confidence interval; then how Schweitzer's error moves
// as the populations grow (the approximation study of Zahorjan, Lazowska and Sevcik).
//
// Checked: PSIM's first replication equals the sequential simulator's exactly, and every
// simulated mean's confidence interval holds exact MVA, all of them together at family-wise 99%:
// with k figures, each at 1 - 0.01/k (Bonferroni), so that other --end, --replications or
// --seed values fail a correct model by chance at most 1% of the time (exit status 1 otherwise).
// The table prints the ordinary 99% intervals; OUTSIDE marks a miss of the family-wise one.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <presto/presto.hpp>
#include <presto/psim/mva.hpp>
#include <presto/psim/queueing_network.hpp>
#include <presto/psim/sequential_simulator.hpp>
#include <presto/psim/simulation.hpp>

#include "command_line.hpp"
#include "confidence.hpp"
#include "psim_schedulers.hpp"

using namespace presto::psim;

namespace {

struct Options {
  int batch = 4;
  int interactive = 3;
  Time transit = 0.05;
  Time warmup = 100;
  Time end = 5100;
  int replications = 10;
  std::uint64_t seed = 1000;  // replication r is seeded seed + r
  std::size_t processors = 2;
  Protocol protocol = Protocol::null_messages;
  std::string scheduler = "psim";
};

constexpr const char* usage =
      "usage: %s [--customers B,I] [--transit T] [--end T] [--warmup T] [--replications R] [--seed N]\n"
      "          [--processors P] [--protocol null|recovery] [--scheduler psim|ltf|minimal|windowed]\n"
      "Solves a closed two-class central-server network (B batch and I interactive customers,\n"
      "default 4,3) by exact MVA and Schweitzer's approximation and simulates it with PSIM\n"
      "(R replications, default 10, each until T = 5100 after a warm-up of 100, on P = 2\n"
      "processors, null-message protocol, PSIM's own scheduler; replication r seeded N + r, default\n"
      "1000), side by side. P = 0: one per hardware thread. Exact MVA must lie in every simulated\n"
      "mean's interval, all of them together at family-wise 99% (Bonferroni).\n";

bool parse(int argc, char** argv, Options& o) {
  presto::apps::CommandLine cl{usage};
  cl.option("--customers", [&o](const std::string& v) {
    const std::size_t comma = v.find(',');
    if (comma == std::string::npos) throw std::invalid_argument("--customers needs B,I");
    o.batch = presto::apps::parse_value<int>("--customers", v.substr(0, comma));
    o.interactive = presto::apps::parse_value<int>("--customers", v.substr(comma + 1));
  });
  cl.option("--transit", o.transit).option("--end", o.end).option("--warmup", o.warmup);
  cl.option("--replications", o.replications).option("--seed", o.seed).processors(o.processors);
  cl.option("--scheduler", [&o](const std::string& name) {
    psim_schedulers::make(name);  // std::invalid_argument naming the choices if unknown
    o.scheduler = name;
  });
  cl.option("--protocol", [&o](const std::string& p) {
    if (p != "null" && p != "recovery") throw std::invalid_argument("--protocol must be null or recovery");
    o.protocol = p == "null" ? Protocol::null_messages : Protocol::deadlock_recovery;
  });
  if (!cl.parse(argc, argv)) return false;
  if (o.batch < 1 || o.interactive < 1 || o.replications < 2 || o.end <= o.warmup) {
    throw std::invalid_argument("need customers >= 1, replications >= 2, end > warmup");
  }
  return true;
}

QueueingNetworkConfig network(const Options& o, std::uint64_t seed) {
  return QueueingNetworkConfig{
      .stations = {{"terminals", 4.0, true}, {"cpu", 0.5, false}, {"disk1", 0.8, false}, {"disk2", 0.6, false}},
      .classes = {{"batch", o.batch, {0, 1, 2}}, {"interactive", o.interactive, {0, 1, 3}}},
      .transit = o.transit,
      .warmup = o.warmup,
      .seed = seed,
  };
}

NetworkMeasures simulate(const Options& o, const QueueingNetworkConfig& net, SimulationStats& stats) {
  presto::Runtime rt{{.processors = o.processors}};
  return rt.run([&] {
    Simulation sim{{.protocol = o.protocol, .end_time = o.end}};
    std::vector<Station*> stations;
    build_queueing_network(sim, net, stations);
    stats = sim.run(psim_schedulers::make(o.scheduler));
    return measure(net, stations, o.end);
  });
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
  const QueueingNetworkConfig shape = network(o, 1);
  const MvaModel model = mva_model(shape);
  const MvaResult exact = exact_mva(model);
  const MvaResult approx = schweitzer_mva(model);

  // The first replication, sequentially: PSIM must reproduce it exactly.
  NetworkMeasures reference;
  {
    const QueueingNetworkConfig net = network(o, o.seed);
    Simulation sim{{.end_time = o.end}};
    std::vector<Station*> stations;
    build_queueing_network(sim, net, stations);
    SequentialSimulator{sim}.run();
    reference = measure(net, stations, o.end);
  }
  std::vector<NetworkMeasures> runs;
  SimulationStats total{};
  for (int r = 0; r < o.replications; ++r) {
    SimulationStats s;
    runs.push_back(simulate(o, network(o, o.seed + static_cast<std::uint64_t>(r)), s));
    total.events += s.events;
    total.null_messages += s.null_messages;
    total.partial_deadlocks += s.partial_deadlocks;
    total.total_deadlocks += s.total_deadlocks;
    total.seconds += s.seconds;
  }
  const bool reproduced = runs.front().throughput == reference.throughput && runs.front().queue == reference.queue;

  std::printf("closed network: %d batch + %d interactive customers, transit %g; PSIM %s, scheduler %s, on %zu "
              "processor(s), %d replications of [%g, %g)\n",
              o.batch, o.interactive, o.transit, std::string(to_string(o.protocol)).c_str(), o.scheduler.c_str(),
              o.processors,
              o.replications, o.warmup, o.end);
  std::printf("PSIM: %llu events in %.3f s (%.0f events/s), %llu null messages, %llu deadlocks broken\n\n",
              static_cast<unsigned long long>(total.events), total.seconds, total.events_per_second(),
              static_cast<unsigned long long>(total.null_messages),
              static_cast<unsigned long long>(total.deadlocks()));
  std::printf("%-12s %-22s %10s %10s %8s %22s %s\n", "class", "measure", "exact MVA", "Schweitzer", "error",
              "PSIM (99% CI)", "");
  // The figures checked: each class's throughput and its number at each station it visits.
  std::size_t figures = 0;
  for (std::size_t c = 0; c < shape.classes.size(); ++c) {
    figures += 1;
    for (std::size_t k = 0; k < shape.stations.size(); ++k) figures += model.demand[c][k] != 0 ? 1 : 0;
  }
  const double level = presto::apps::bonferroni_level(0.99, figures);
  int outside = 0;
  auto row = [&](const std::string& cls, const std::string& what, double ex, double ap, auto sample) {
    std::vector<double> samples;
    for (const auto& m : runs) samples.push_back(sample(m));
    const presto::apps::Interval ci = presto::apps::confidence_interval(samples);  // printed
    const bool ok = presto::apps::confidence_interval(samples, level).contains(ex);  // decides
    outside += ok ? 0 : 1;
    std::printf("%-12s %-22s %10.4f %10.4f %7.2f%% %12.4f +- %7.4f %s\n", cls.c_str(), what.c_str(), ex, ap,
                ex != 0 ? 100.0 * (ap - ex) / ex : 0.0, ci.mean, ci.half_width, ok ? "" : "OUTSIDE");
  };
  for (std::size_t c = 0; c < shape.classes.size(); ++c) {
    const std::string& cls = shape.classes[c].name;
    row(cls, "throughput", exact.throughput[c], approx.throughput[c],
        [c](const NetworkMeasures& m) { return m.throughput[c]; });
    for (std::size_t k = 0; k < shape.stations.size(); ++k) {
      if (model.demand[c][k] == 0) continue;
      row(cls, "number at " + shape.stations[k].name, exact.queue[c][k], approx.queue[c][k],
          [c, k](const NetworkMeasures& m) { return m.queue[c][k]; });
    }
  }

  std::printf("(OUTSIDE: exact MVA outside the simulated mean's interval at %s%%, the level for each of the %zu figures)\n",
              presto::apps::percent_text(level).c_str(), figures);

  std::printf("\nSchweitzer's approximation as the populations grow (throughput error vs exact MVA):\n");
  std::printf("%8s %14s %14s %10s\n", "scale", "batch", "interactive", "iterations");
  for (int scale : {1, 2, 4, 8, 16}) {
    Options big = o;
    big.batch = o.batch * scale;
    big.interactive = o.interactive * scale;
    const MvaModel m = mva_model(network(big, 1));
    const MvaResult e = exact_mva(m), a = schweitzer_mva(m);
    std::printf("%8d %13.3f%% %13.3f%% %10d\n", scale, 100.0 * (a.throughput[0] - e.throughput[0]) / e.throughput[0],
                100.0 * (a.throughput[1] - e.throughput[1]) / e.throughput[1], a.iterations);
  }
  std::printf("\n%s: PSIM %s the sequential simulator's first replication; exact MVA outside %d simulated "
              "mean(s)' family-wise 99%% interval (%zu figures, each at %s%%)\n",
              reproduced && outside == 0 ? "OK" : "FAILED", reproduced ? "reproduced" : "did NOT reproduce", outside,
              figures, presto::apps::percent_text(level).c_str());
  return reproduced && outside == 0 ? 0 : 1;
}
