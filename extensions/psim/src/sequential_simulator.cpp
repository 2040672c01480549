#include <presto/psim/sequential_simulator.hpp>

#include <algorithm>

namespace presto::psim {

namespace {
struct LaterEntry {
  template <class E>
  bool operator()(const E& a, const E& b) const noexcept {
    return b.message.key() < a.message.key();
  }
};
}  // namespace

Message& SequentialSimulator::add(LogicalProcess& to) { return events_.emplace_back(Entry{{}, &to}).message; }

SimulationStats SequentialSimulator::run() {
  Simulation& sim = simulation_;
  sim.claim("psim::SequentialSimulator::run");
  for (auto& lp : sim.processes_) lp->sequential_ = this;
  const auto start = Clock::now();
  for (auto& lp : sim.processes_) lp->initialize();
  const Time end = sim.config().end_time;
  for (;;) {
    // The events the last handle() added join the heap now, not as each was stamped: pushed at
    // once, each would be copied while its fields were still in the store buffer.
    while (ordered_ < events_.size()) {
      std::push_heap(events_.begin(), events_.begin() + static_cast<std::ptrdiff_t>(++ordered_), LaterEntry{});
    }
    if (events_.empty()) break;
    std::pop_heap(events_.begin(), events_.end(), LaterEntry{});
    Entry e = events_.back();
    events_.pop_back();
    --ordered_;
    if (e.message.time >= end) break;
    LogicalProcess& lp = *e.to;
    lp.key_ = e.message.key();
    ++lp.stats_.events;
    lp.handle(e.message);
  }
  const auto stop = Clock::now();
  events_.clear();
  ordered_ = 0;
  SimulationStats s;
  s.seconds = std::chrono::duration<double>(stop - start).count();
  for (auto& lp : sim.processes_) {
    lp->phase_ = LogicalProcess::Phase::finished;
    lp->sequential_ = nullptr;
    s.events += lp->stats_.events;
    s.messages += lp->stats_.messages_sent;
    s.processes.push_back(lp->stats_);
  }
  return s;
}

}  // namespace presto::psim
