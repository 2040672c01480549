// The PSIM schedulers of presto-phold, presto-qnet, the psim benchmark and tests, by name:
//   psim       PSIM's own (SimulationScheduler): the floor rule, a LocalQueuePool
//   ltf        LowestTimestampFirst: the LP holding the earliest message runs first
//   minimal    MinimalGrantScheduler: Chandy-Misra's rule, the single earliest message
//   windowed   WindowedScheduler: YAWNS-style windows opened at a barrier
#pragma once

#include <array>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <presto/psim/simulation_scheduler.hpp>

#include "lowest_timestamp_first.hpp"
#include "minimal_grant_scheduler.hpp"
#include "windowed_scheduler.hpp"

namespace psim_schedulers {

inline constexpr std::array<std::string_view, 4> kNames{"psim", "ltf", "minimal", "windowed"};

// A new scheduler of that name over `inner` (nullptr: a LocalQueuePool; ltf brings its own
// and ignores it); std::invalid_argument listing the names if there is none.
inline std::unique_ptr<presto::psim::SimulationScheduler> make(std::string_view name,
                                                               std::unique_ptr<presto::ThreadPool> inner = nullptr) {
  if (name == "psim") return std::make_unique<presto::psim::SimulationScheduler>(std::move(inner));
  if (name == "ltf") return std::make_unique<LowestTimestampFirst>();
  if (name == "minimal") return std::make_unique<MinimalGrantScheduler>(std::move(inner));
  if (name == "windowed") return std::make_unique<WindowedScheduler>(std::move(inner));
  throw std::invalid_argument("unknown scheduler '" + std::string(name) + "': psim, ltf, minimal or windowed");
}

}  // namespace psim_schedulers
