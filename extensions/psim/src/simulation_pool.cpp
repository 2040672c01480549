#include <presto/psim/simulation_pool.hpp>

#include <presto/errors.hpp>
#include <presto/psim/simulation.hpp>

namespace presto::psim {

SimulationPool::SimulationPool(Simulation& simulation, std::unique_ptr<ThreadPool> inner)
    : simulation_(simulation), inner_(std::move(inner)) {
  if (!inner_) throw UsageError("psim::SimulationPool: the inner pool is null");
  name_ = "psim(" + std::string(inner_->name()) + ")";
}

Thread* SimulationPool::get(Processor& p) {
  if (Thread* t = inner_->get(p)) return t;
  retry_.store(false, std::memory_order_relaxed);
  switch (simulation_.break_deadlock(/*may_wait=*/false, /*total=*/false)) {
    case Simulation::Breaking::woke: return inner_->get(p);  // the restarted LP went through put()
    case Simulation::Breaking::busy: retry_.store(true, std::memory_order_relaxed); return nullptr;
    case Simulation::Breaking::nothing: return nullptr;
  }
  return nullptr;
}

}  // namespace presto::psim
