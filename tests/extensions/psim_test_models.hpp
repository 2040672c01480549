// What the psim test files share: PHOLD as they configure it, every LP's history, and the
// protocols each configuration runs under.
#pragma once

#include <cstdint>
#include <vector>

#include <presto/psim/phold.hpp>
#include <presto/psim/simulation.hpp>

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

inline const presto::psim::Protocol kProtocols[] = {presto::psim::Protocol::deadlock_recovery,
                                                    presto::psim::Protocol::null_messages};

}  // namespace psim_test
