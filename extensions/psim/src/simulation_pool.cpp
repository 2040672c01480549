#include <presto/psim/simulation_pool.hpp>

#include <presto/local_queue_pool.hpp>
#include <presto/psim/simulation.hpp>
#include <presto/psim/simulation_scheduler.hpp>

namespace presto::psim {

SimulationPool::SimulationPool(std::unique_ptr<ThreadPool> inner)
    : inner_(inner ? std::move(inner) : std::make_unique<LocalQueuePool>()) {
  name_ = "psim(" + std::string(inner_->name()) + ")";
}

Thread* SimulationPool::get(Processor& p) {
  if (Thread* t = inner_->get(p)) return t;
  Simulation* simulation = scheduler_ != nullptr ? scheduler_->simulation() : nullptr;
  if (simulation == nullptr) return nullptr;
  retry_.store(false, std::memory_order_relaxed);
  switch (simulation->break_deadlock(*scheduler_, /*may_wait=*/false, /*total=*/false)) {
    case Simulation::Breaking::woke: return inner_->get(p);  // the restarted LPs went through put()
    case Simulation::Breaking::busy: retry_.store(true, std::memory_order_relaxed); return nullptr;
    case Simulation::Breaking::nothing: return nullptr;
  }
  return nullptr;
}

}  // namespace presto::psim
