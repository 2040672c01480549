// What the psim test files share: PHOLD as they configure it, every LP's history, and the
// protocols each configuration runs under.
#pragma once

#include <cstdint>
#include <vector>

#include <presto/psim/phold.hpp>
#include <presto/psim/queueing_network.hpp>
#include <presto/psim/sequential_simulator.hpp>
#include <presto/psim/simulation.hpp>

#include "test_support.hpp"

namespace psim_test {

using Histories = std::vector<std::vector<presto::psim::HistoryEntry>>;

inline presto::psim::PholdConfig phold_config(presto::psim::Time lookahead, std::uint64_t seed = 12345) {
  return presto::psim::PholdConfig{.processes = 8, .population = 2, .lookahead = lookahead, .mean = 1.0,
                                   .remote = 0.5, .work = 0, .seed = seed, .record = true};
}

inline Histories phold_histories(const presto::psim::Simulation& sim) {
  Histories h;
  for (std::size_t i = 0; i < sim.size(); ++i) {
    h.push_back(static_cast<presto::psim::PholdProcess&>(sim.process(i)).history());
  }
  return h;
}

// Every station's history of `net` until `end`: by the sequential simulator, and by PSIM in
// configuration `cfg` under `protocol`.
inline Histories sequential_station_histories(const presto::psim::QueueingNetworkConfig& net, presto::psim::Time end) {
  presto::psim::Simulation sim{{.end_time = end}};
  std::vector<presto::psim::Station*> stations;
  presto::psim::build_queueing_network(sim, net, stations);
  presto::psim::SequentialSimulator{sim}.run();
  Histories h;
  for (auto* s : stations) h.push_back(s->history());
  return h;
}

inline Histories psim_station_histories(const presto::test::Config& cfg, presto::psim::Protocol protocol,
                                        const presto::psim::QueueingNetworkConfig& net, presto::psim::Time end) {
  return presto::test::run(cfg, [&] {
    presto::psim::Simulation sim{{.protocol = protocol, .end_time = end}};
    std::vector<presto::psim::Station*> stations;
    presto::psim::build_queueing_network(sim, net, stations);
    sim.run(presto::test::make_pool(cfg.pool));
    Histories h;
    for (auto* s : stations) h.push_back(s->history());
    return h;
  });
}

inline const presto::psim::Protocol kProtocols[] = {presto::psim::Protocol::deadlock_recovery,
                                                    presto::psim::Protocol::null_messages};

}  // namespace psim_test
