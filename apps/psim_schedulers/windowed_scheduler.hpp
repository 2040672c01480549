// WindowedScheduler: a YAWNS-style windowed barrier (Nicol, 1993) on PSIM's deadlock hooks,
// written the way a user writes a PSIM scheduler (public headers only). It never resolves a
// partial deadlock: processors that find nothing ready go idle until every processor is idle
// and every LP blocked or finished (the barrier: a total deadlock, the runtime's halt). There it
// opens one window for all LPs: every message below floor + L is granted to every LP, L being
// the least lookahead of any link in the model (YAWNS's global window, against PSIM's per-LP
// floor + least input lookahead). With a zero-lookahead link the window is empty, and the
// earliest message alone is let through. Between barriers the LPs also advance by their link
// clocks (and, under Protocol::null_messages, by null messages), as under PSIM's own rule;
// the choice of the next LP and the end of the simulation are PSIM's.
#pragma once

#include <algorithm>
#include <memory>
#include <string_view>

#include <presto/psim/deadlock_view.hpp>
#include <presto/psim/simulation_scheduler.hpp>

namespace psim_schedulers {

class WindowedScheduler final : public presto::psim::SimulationScheduler {
 public:
  using SimulationScheduler::SimulationScheduler;
  std::string_view name() const noexcept override { return "windowed"; }

 protected:
  void resolve_deadlock(presto::psim::DeadlockView& view) override {
    using presto::psim::DeadlockView;
    using presto::psim::EventKey;
    if (!view.total()) return;  // wait for the barrier
    if (lookahead_ < 0) {       // the model's least lookahead (calls are serialized; no lock)
      lookahead_ = presto::psim::kNever;
      for (std::size_t i = 0; i < view.size(); ++i) lookahead_ = std::min(lookahead_, view.min_lookahead(i));
    }
    if (lookahead_ > 0) {
      const EventKey window{view.floor().time + lookahead_};
      for (std::size_t i = 0; i < view.size(); ++i) {
        if (view.state(i) != DeadlockView::State::finished) view.grant(i, window);
      }
    } else if (const std::size_t owner = view.earliest_owner(); owner != DeadlockView::npos) {
      view.grant(owner, presto::psim::just_after(view.earliest(owner)));  // an empty window
    }
  }

 private:
  presto::psim::Time lookahead_ = -1;  // not yet known
};

}  // namespace psim_schedulers
