#pragma once
// SimulationScheduler: presto::Scheduler with PSIM's halting rule. When every processor is
// idle and nothing is ready (every LP blocked: a total deadlock), halt() restarts the blocked
// LPs whose earliest pending messages are provably safe (Simulation::break_deadlock), at
// least the one with the earliest message, or ends the simulation if nothing before its end time
// remains; only if neither applies (a deadlock outside the simulation's reach) does it fall
// back to Scheduler::halt(), which reports the Deadlock. Installed by Simulation::run.

#include <memory>
#include <string_view>

#include <presto/scheduler.hpp>

namespace presto::psim {

class Simulation;

class SimulationScheduler final : public Scheduler {
 public:
  SimulationScheduler(Simulation& simulation, std::unique_ptr<ThreadPool> pool);
  void halt() override;
  std::string_view name() const noexcept override { return "psim scheduler"; }

 private:
  Simulation& simulation_;
};

}  // namespace presto::psim
