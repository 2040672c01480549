// PSIM's queueing network with open classes and load-dependent stations: the simulated means
// of an M/M/1 open class and an M/M/c station agree with the analytic results within 99%
// confidence intervals over seeded replications (each replication's events bounded), and a
// mixed network's histories are the sequential simulator's in every configuration.

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <presto/errors.hpp>
#include <presto/psim/queueing_network.hpp>
#include <presto/psim/sequential_simulator.hpp>
#include <presto/psim/simulation.hpp>

#include "confidence.hpp"
#include "psim_test_models.hpp"
#include "test_support.hpp"

using namespace presto;
using namespace presto::psim;
using namespace psim_test;

namespace {

// One station of mean service 1 with rates `rate` (empty: one server), fed by an open class.
QueueingNetworkConfig single_station(double lambda, std::vector<double> rate, std::uint64_t seed) {
  return {.stations = {{"server", 1.0, false, std::move(rate)}},
          .classes = {{.name = "poisson", .population = 0, .route = {0}, .arrival_rate = lambda}},
          .transit = 1,
          .warmup = 200,
          .seed = seed};
}

// Replications of `shape` with seeds 500, 501, ...; each must stay below `max_events`.
std::vector<NetworkMeasures> replicate(QueueingNetworkConfig shape, int replications, Time end, std::uint64_t max_events) {
  std::vector<NetworkMeasures> runs;
  for (int r = 0; r < replications; ++r) {
    shape.seed = 500 + static_cast<std::uint64_t>(r);
    runs.push_back(presto::test::run({.processors = 2}, [&] {
      Simulation sim{{.protocol = r % 2 == 0 ? Protocol::null_messages : Protocol::deadlock_recovery, .end_time = end}};
      std::vector<Station*> stations;
      build_queueing_network(sim, shape, stations);
      const SimulationStats stats = sim.run();
      CHECK(stats.events <= max_events);
      return measure(shape, stations, end);
    }));
  }
  return runs;
}

template <class F>
void check_interval(const std::vector<NetworkMeasures>& runs, const char* what, double exact, F sample) {
  std::vector<double> samples;
  for (const auto& m : runs) samples.push_back(sample(m));
  const presto::apps::Interval ci = presto::apps::confidence_interval(samples);
  INFO(what << ": simulated " << ci.mean << " +- " << ci.half_width << " (99%), exact " << exact);
  CHECK(ci.contains(exact));
  CHECK(ci.half_width < 0.1 * exact);  // the interval is tight enough to mean something
}

// Erlang's C formula: the probability that an arrival at an M/M/c queue with offered load a waits.
double erlang_c(int c, double a) {
  double term = 1, sum = 0;
  for (int k = 0; k < c; ++k) {
    sum += term;
    term *= a / (k + 1);
  }
  const double last = term * c / (c - a);
  return last / (sum + last);
}

}  // namespace

TEST_CASE("an open M/M/1 class: time in the network 1/(mu - lambda), number present rho/(1 - rho)", "[psim][qnet]") {
  const double lambda = 0.5, mu = 1;
  // About 2 events per customer (its arrival and its service end): 2 x 0.5 x 20200 ~ 20,200.
  const auto runs = replicate(single_station(lambda, {}, 0), 10, 20200, 25000);
  check_interval(runs, "mean response", 1 / (mu - lambda), [](const NetworkMeasures& m) { return m.response[0]; });
  check_interval(runs, "mean number", lambda / (mu - lambda), [](const NetworkMeasures& m) { return m.queue[0][0]; });
  check_interval(runs, "throughput", lambda, [](const NetworkMeasures& m) { return m.throughput[0]; });
}

TEST_CASE("an M/M/3 load-dependent station agrees with the Erlang-C formula", "[psim][qnet]") {
  const int c = 3;
  const double lambda = 2.4, mu = 1, a = lambda / mu;
  const double response = erlang_c(c, a) / (c * mu - lambda) + 1 / mu;  // 2.0787 at rho = 0.8
  // Rates 1, 2, 3: a service restart at each change of rate adds at most one event per
  // arrival and departure: at most 4 x 2.4 x 40200 ~ 386,000 events.
  const auto runs = replicate(single_station(lambda, {1, 2, 3}, 0), 10, 40200, 400000);
  check_interval(runs, "mean response", response, [](const NetworkMeasures& m) { return m.response[0]; });
  check_interval(runs, "mean number", lambda * response, [](const NetworkMeasures& m) { return m.queue[0][0]; });
}

TEST_CASE("preemptive-resume priority: each class's time in the network agrees with the M/M/1 priority formulas",
          "[psim][qnet]") {
  // High priority: lambda 0.5, mean service 1; low: lambda 0.2, mean service 1.25 (rho = 0.75).
  const double l1 = 0.5, s1 = 1, l2 = 0.2, s2 = 1.25, r1 = l1 * s1, rho = r1 + l2 * s2;
  const double high = s1 / (1 - r1);  // the high class sees only itself: 2
  // The low class waits for the high class's work and its own: (S2 (1 - rho) + sum l E[S^2] / 2)
  // / ((1 - rho1)(1 - rho)), E[S^2] = 2 S^2 for exponential service: 9.
  const double low = (s2 * (1 - rho) + l1 * s1 * s1 + l2 * s2 * s2) / ((1 - r1) * (1 - rho));
  QueueingNetworkConfig shape{
      .stations = {{.name = "cpu", .mean_service = 1, .priority = true}},
      .classes = {{.name = "high", .population = 0, .route = {0}, .arrival_rate = l1, .priority = 1},
                  {.name = "low", .population = 0, .route = {0}, .arrival_rate = l2, .service = {s2}}},
      .transit = 1, .warmup = 200};
  // Arrivals, service ends and at most one stale end per preemption: 3 x 0.7 x 40200 ~ 84,000.
  const auto runs = replicate(shape, 10, 40200, 90000);
  check_interval(runs, "high priority, mean response", high, [](const NetworkMeasures& m) { return m.response[0]; });
  check_interval(runs, "low priority, mean response", low, [](const NetworkMeasures& m) { return m.response[1]; });
}

TEST_CASE("a load-dependent station with rate 1 has a single server's history", "[psim][qnet]") {
  auto history = [](std::vector<double> rate) {
    QueueingNetworkConfig net{.stations = {{"terminals", 2.0, true}, {"cpu", 0.5, false, rate}, {"disk", 0.4}},
                              .classes = {{"users", 6, {0, 1, 2}}, {.name = "open", .population = 0, .route = {1, 2}, .arrival_rate = 0.3}},
                              .transit = 0.1, .warmup = 0, .seed = 3, .record = true};
    Simulation sim{{.end_time = 300}};
    std::vector<Station*> stations;
    build_queueing_network(sim, net, stations);
    SequentialSimulator{sim}.run();
    return stations[1]->history();
  };
  const auto single = history({}), rate_one = history({1});
  CHECK(single.size() > 500);
  CHECK(single == rate_one);
  CHECK(history({1, 2}) != single);
}

TEST_CASE("a mixed network's histories (open classes, load-dependent and priority stations) equal the sequential "
          "simulator's", "[psim][qnet]") {
  const Time end = 150;
  const QueueingNetworkConfig net{
      .stations = {{"terminals", 3.0, true}, {"cpu", 0.4, false, {1, 1.8, 2.4}}, {"disk1", 0.5},
                   {.name = "disk2", .mean_service = 0.3, .priority = true}},
      .classes = {{"batch", 3, {0, 1, 2}},
                  {.name = "transactions", .population = 0, .route = {1, 3, 2}, .arrival_rate = 0.8},
                  {.name = "queries", .population = 0, .route = {3}, .arrival_rate = 0.5, .priority = 1, .service = {0.2}}},
      .transit = 0.05, .warmup = 0, .seed = 11, .record = true};
  const Histories reference = sequential_station_histories(net, end);
  CHECK(reference[1].size() > 300);
  CHECK(reference[3].size() > 100);
  auto cfg = GENERATE(presto::test::configs());
  for (Protocol protocol : kProtocols) {
    INFO(cfg << ", " << to_string(protocol));
    CHECK(psim_station_histories(cfg, protocol, net, end) == reference);
  }
}

TEST_CASE("malformed open classes and load-dependent stations raise UsageError", "[psim][qnet]") {
  auto build = [](QueueingNetworkConfig net) {
    Simulation sim{{.end_time = 10}};
    std::vector<Station*> stations;
    build_queueing_network(sim, net, stations);
  };
  const QueueingNetworkConfig ok = single_station(0.5, {1, 2}, 1);
  CHECK_NOTHROW(build(ok));
  auto with = [&](auto change) {
    QueueingNetworkConfig net = ok;
    change(net);
    return net;
  };
  CHECK_THROWS_AS(build(with([](auto& n) { n.classes[0].population = 2; })), UsageError);  // open with a population
  CHECK_THROWS_AS(build(with([](auto& n) { n.classes[0].arrival_rate = -1; })), UsageError);
  CHECK_THROWS_AS(build(with([](auto& n) { n.classes[0].route = {}; })), UsageError);
  CHECK_THROWS_AS(build(with([](auto& n) { n.stations[0].rate = {1, 0}; })), UsageError);
  CHECK_THROWS_AS(build(with([](auto& n) { n.stations[0].delay = true; })), UsageError);  // delay with rates
  CHECK_THROWS_AS(build(with([](auto& n) { n.stations[0].priority = true; })), UsageError);  // priority with rates
  CHECK_THROWS_AS(build(with([](auto& n) { n.classes[0].service = {1, 2}; })), UsageError);  // one per route station
  CHECK_THROWS_WITH(mva_model(ok), Catch::Contains("load-dependent"));
  CHECK_THROWS_WITH(mva_model(with([](auto& n) { n.stations[0].rate.clear(); })), Catch::Contains("is open"));
}
