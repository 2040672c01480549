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
  // For LogicalProcess::send/schedule: a new event for `to`, whose message the caller stamps
  // in place. run() orders it into the event list before it takes the next event.
  Message& add(LogicalProcess& to);

  struct Entry {
    Message message;
    LogicalProcess* to;
  };
  Simulation& simulation_;
  // A heap (earliest key on top) of its first `ordered_` entries, then the events added since.
  std::vector<Entry> events_;
  std::size_t ordered_ = 0;
};

}  // namespace presto::psim
