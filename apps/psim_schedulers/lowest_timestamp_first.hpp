// LowestTimestampFirst: a PSIM scheduler under which the ready LP holding the earliest message
// runs first, written the way a user writes one: from public headers only. It keeps PSIM's own
// deadlock resolution and end of simulation, and changes only the choice of the next LP (hook 1
// of simulation_scheduler.hpp), through its inner pool:
//
// LowestTimestampFirstPool: a HeapPool (apps/live_scheduler/heap_pool.hpp) keyed by
// LogicalProcess::ready_time() (the time of the earliest message the LP held when PSIM made it
// ready), read in put(). A thread that is not an LP (the one waiting in Simulation::run) goes
// first; equal times go in the order they became ready.
#pragma once

#include <limits>
#include <memory>
#include <string_view>

#include <presto/psim/simulation_scheduler.hpp>

#include "../live_scheduler/heap_pool.hpp"

namespace psim_schedulers {

// The time of the earliest message an LP held when PSIM made it ready; other threads first.
struct ReadyTimeKey {
  presto::psim::Time operator()(const presto::Thread& t) const noexcept {
    const auto* lp = dynamic_cast<const presto::psim::LogicalProcess*>(&t);
    return lp != nullptr ? lp->ready_time() : -std::numeric_limits<presto::psim::Time>::infinity();
  }
};

class LowestTimestampFirstPool final : public HeapPool<ReadyTimeKey> {
 public:
  LowestTimestampFirstPool() : HeapPool("lowest-timestamp-first") {}
};

class LowestTimestampFirst final : public presto::psim::SimulationScheduler {
 public:
  LowestTimestampFirst() : SimulationScheduler(std::make_unique<LowestTimestampFirstPool>()) {}
  std::string_view name() const noexcept override { return "lowest-timestamp-first"; }
};

}  // namespace psim_schedulers
