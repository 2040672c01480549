// MinimalGrantScheduler: Chandy and Misra's minimal deadlock resolution, written the way a
// user writes a PSIM scheduler (public headers only): at a deadlock it grants only the single
// earliest pending message, and only when no event being handled is earlier (that event could
// still send something earlier). PSIM's own rule (SimulationScheduler::resolve_deadlock)
// grants every LP a window at once: the floor plus its least input lookahead. Comparing the
// two shows what the window buys: this one needs a deadlock break for nearly every event that
// the link clocks do not release. The choice of the next LP and the end of the simulation are
// PSIM's.
#pragma once

#include <memory>
#include <string_view>

#include <presto/psim/deadlock_view.hpp>
#include <presto/psim/simulation_scheduler.hpp>

namespace psim_schedulers {

class MinimalGrantScheduler final : public presto::psim::SimulationScheduler {
 public:
  using SimulationScheduler::SimulationScheduler;
  std::string_view name() const noexcept override { return "chandy-misra-minimal"; }

 protected:
  void resolve_deadlock(presto::psim::DeadlockView& view) override {
    const std::size_t owner = view.earliest_owner();
    if (owner == presto::psim::DeadlockView::npos) return;
    const presto::psim::EventKey earliest = view.earliest(owner);
    if (!(earliest < view.earliest_handled())) return;  // an event being handled comes first
    view.grant(owner, presto::psim::just_after(earliest));
  }
};

}  // namespace psim_schedulers
