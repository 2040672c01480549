#include <presto/psim/simulation_scheduler.hpp>

#include <algorithm>

#include <presto/psim/simulation.hpp>
#include <presto/psim/simulation_pool.hpp>

namespace presto::psim {

namespace {

// The pool a SimulationScheduler runs on: `inner` itself if it is a SimulationPool already.
std::unique_ptr<SimulationPool> simulation_pool(std::unique_ptr<ThreadPool> inner) {
  if (auto* own = dynamic_cast<SimulationPool*>(inner.get())) {
    inner.release();
    return std::unique_ptr<SimulationPool>(own);
  }
  return std::make_unique<SimulationPool>(std::move(inner));
}

}  // namespace

SimulationScheduler::SimulationScheduler(std::unique_ptr<ThreadPool> inner)
    : Scheduler(simulation_pool(std::move(inner))) {
  static_cast<SimulationPool&>(pool()).scheduler_ = this;
}

void SimulationScheduler::halt() {
  if (simulation_ != nullptr &&
      simulation_->break_deadlock(*this, /*may_wait=*/true, /*total=*/true) == Simulation::Breaking::woke) {
    return;
  }
  Scheduler::halt();
}

bool SimulationScheduler::end_simulation(const DeadlockView& view) {
  return view.earliest_handled().time == kNever && view.floor().time >= view.end_time();
}

void SimulationScheduler::resolve_deadlock(DeadlockView& view) {
  view.grant_all_safe();  // PSIM's floor rule: every LP as far as the facts prove (deadlock_view.hpp)
}

}  // namespace presto::psim
