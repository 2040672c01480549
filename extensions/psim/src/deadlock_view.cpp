#include <presto/psim/deadlock_view.hpp>

#include <algorithm>
#include <sstream>

#include <presto/psim/simulation.hpp>
#include <presto/psim/simulation_scheduler.hpp>

namespace presto::psim {

namespace {

void describe(std::ostream& os, const EventKey& k) {
  os << "t=" << k.time;
  if (k.time != kNever) os << " (depth " << k.depth << ", from LP " << k.source << ", #" << k.sequence << ")";
}

}  // namespace

void DeadlockView::unsafe(std::size_t i, EventKey limit, EventKey safe) const {
  std::ostringstream os;
  os << "psim scheduler '" << scheduler_.name() << "' granted logical process '" << processes_[i]->name()
     << "' every message below ";
  describe(os, limit);
  os << ", but only those below ";
  describe(os, safe);
  os << " are provably safe: an earlier message can still reach it (at a " << (total_ ? "total" : "partial")
     << " deadlock, floor t=" << floor_.time << ")";
  throw SchedulerError(os.str());
}

}  // namespace presto::psim
