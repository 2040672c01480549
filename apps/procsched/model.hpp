#pragma once
// Model: Zahorjan and McCann's processor-scheduling study as one PSIM simulation: an Arrivals
// LP (the Poisson job stream), an Allocator LP (the policy) and one Processor LP per processor,
// joined allocator <-> each processor and arrivals -> allocator. Its results depend only on
// the configuration (seed included): the same from PSIM on any number of processors, under
// either protocol, as from the SequentialSimulator.

#include <cstdint>
#include <string>
#include <vector>

#include <presto/psim/simulation.hpp>

#include "allocator.hpp"
#include "workload.hpp"

namespace procsched {

struct ModelConfig {
  std::vector<std::string> workloads{"FJ(11)"};  // job classes, arriving at equal rates
  Policy policy = Policy::dynamic;
  int processors = 20;        // P, the simulated machine's
  double overhead = 0;        // O
  double load = 0.5;          // U = lambda * mean work / P
  double end = 15500;
  double warmup = 500;
  double spread = 0.05;       // task times: mean x Uniform(1 - spread, 1 + spread)
  double min_quantum = 1;     // Round-Robin's quantum: 39 O (2.5% overhead), at least this
  std::uint64_t seed = 1;
  std::uint64_t limit = 0;    // at most this many jobs, the first at time 0 (0: no limit)
  // std::invalid_argument naming the field when out of range.
  void check() const;
};

struct ModelResult {
  Measures measures;
  std::uint64_t events = 0;
  presto::psim::SimulationStats stats;  // PSIM's (the sequential run's has only events, seconds)
};

// Runs the model in the SequentialSimulator (`psim_processors` 0) or in PSIM, in a presto
// Runtime of that many processors, under `protocol`, PSIM's scheduler over a ShufflePool seeded
// with `shuffle` (random interleavings, for tests) or, for 0, over its default pool.
ModelResult run_model(const ModelConfig& config, std::size_t psim_processors,
                      presto::psim::Protocol protocol = presto::psim::Protocol::deadlock_recovery,
                      std::uint64_t shuffle = 0);

}  // namespace procsched
