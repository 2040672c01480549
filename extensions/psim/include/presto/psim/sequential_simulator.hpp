#pragma once
// SequentialSimulator: the reference. Runs an event-style PSIM model (LPs that override
// initialize() and handle(); see logical_process.hpp) on the calling thread from one global
// event list, in increasing key order, without threads, links' clocks or locks. PSIM must
// give every LP exactly the history this gives it.
//
//   Simulation sim{{.end_time = 100}};  ... add LPs and links ...
//   SimulationStats s = SequentialSimulator{sim}.run();
//
// An LP that calls receive() here raises UsageError (process-style models run only in PSIM).

#include <vector>

#include <presto/psim/simulation.hpp>

namespace presto::psim {

class SequentialSimulator {
 public:
  explicit SequentialSimulator(Simulation& simulation) : simulation_(simulation) {}
  SimulationStats run();

 private:
  friend class LogicalProcess;
  // For LogicalProcess::send/schedule: enqueue a stamped message for `to`.
  void enqueue(LogicalProcess& to, const Message& m);

  struct Entry {
    Message message;
    LogicalProcess* to;
  };
  Simulation& simulation_;
  std::vector<Entry> events_;  // heap, earliest key on top
};

}  // namespace presto::psim
