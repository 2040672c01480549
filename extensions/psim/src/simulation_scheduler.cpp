#include <presto/psim/simulation_scheduler.hpp>

#include <presto/psim/simulation.hpp>

namespace presto::psim {

SimulationScheduler::SimulationScheduler(Simulation& simulation, std::unique_ptr<ThreadPool> pool)
    : Scheduler(std::move(pool)), simulation_(simulation) {}

void SimulationScheduler::halt() {
  if (simulation_.break_deadlock(/*may_wait=*/true, /*total=*/true) == Simulation::Breaking::woke) return;
  Scheduler::halt();
}

}  // namespace presto::psim
