#pragma once
// SimulationScheduler: the presto::Scheduler a PSIM simulation runs under, and the class to
// derive from to change how PSIM schedules. Simulation::run installs one (the built-in one, or
// yours: run(std::make_unique<MyScheduler>())) on the running runtime, and
// Simulation::replace_scheduler swaps it for another while the model runs, through the core's
// lateral replacement (Runtime::replace_scheduler): the ready LPs move to the new one and
// every LP's history stays the same.
//
// Its ready pool is a SimulationPool wrapping an inner ThreadPool; a deadlock break asks its
// hooks what to do. The three decisions and their hooks:
//
//  1. Which ready LP runs next: the inner pool (constructor argument; any ThreadPool, under
//     ThreadPool's contract). LogicalProcess::ready_time() tells a pool the time of the
//     earliest message an LP held when it was made ready. The scheduler's ready()/next()
//     (presto::Scheduler's) may also be overridden, under Scheduler's rules.
//  2. How a deadlock is resolved: resolve_deadlock(view). Called from inside a deadlock break:
//     by the SimulationPool's get() on a processor that found no ready LP (partial; deadlock
//     recovery only: under null messages the pool breaks none), and by halt() when every
//     processor is idle (total; both protocols). It grants LPs messages through
//     view.grant(i, limit); the engine then restarts every blocked LP whose earliest message
//     is granted. Default: PSIM's floor rule (every LP up to view.safe_limit(i): the floor
//     plus its least input lookahead, and the holder of the earliest message up to the next
//     LP's). At a total deadlock it must grant at least one blocked LP its earliest message.
//  3. When the simulation ends: end_simulation(view), asked at each total deadlock before
//     resolve_deadlock. Returning true ends the run: every LP's receive() returns nullopt
//     (LPs keep what they handled). Default: true once no event is being handled and nothing
//     before the end time is pending.
//
// Contract of both hooks: called with every LP's lock held, from the dispatch path (the pool's
// get) or the runtime's halt, by one processor at a time. They must not block, yield, sleep,
// allocate on the common path, log above debug level, or call anything of the simulation or
// of an LP besides the view (its facts and grant()); they may keep state of their own (no
// lock needed: calls are serialized). A hook that throws, or a grant above
// view.safe_limit(i), ends the simulation: Simulation::run throws SchedulerError naming the
// scheduler and the LP. So does a total deadlock that resolve_deadlock leaves unresolved
// while end_simulation declines to end. SimulationConfig::check_grants additionally checks
// every delivered message against what its receiver has already handled.

#include <memory>
#include <string>
#include <string_view>

#include <presto/errors.hpp>
#include <presto/scheduler.hpp>
#include <presto/psim/deadlock_view.hpp>

namespace presto::psim {

class Simulation;

// A SimulationScheduler broke the safety rule or failed: the message names the scheduler, and
// the LP concerned. Thrown by Simulation::run (and by DeadlockView::grant to the hook).
class SchedulerError : public UsageError {
 public:
  using UsageError::UsageError;
};

class SimulationScheduler : public Scheduler {
 public:
  // `inner` (nullptr: a LocalQueuePool) chooses the ready LP that runs next; it is wrapped in
  // a SimulationPool, unless it is one (a subclass of yours) already.
  explicit SimulationScheduler(std::unique_ptr<ThreadPool> inner = nullptr);

  // Breaks a total deadlock or ends the simulation (the hooks above); falls back to
  // Scheduler::halt() (its Deadlock report) for a standstill outside the simulation's reach,
  // such as an LP blocked on some other object. An override must call this one.
  void halt() override;
  std::string_view name() const noexcept override { return "psim scheduler"; }

  // The simulation it serves (set by Simulation::run or replace_scheduler; nullptr before).
  Simulation* simulation() const noexcept { return simulation_; }

 protected:
  virtual void resolve_deadlock(DeadlockView& view);
  virtual bool end_simulation(const DeadlockView& view);

 private:
  friend class Simulation;
  Simulation* simulation_ = nullptr;
};

}  // namespace presto::psim
