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

void SequentialSimulator::enqueue(LogicalProcess& to, const Message& m) {
  events_.push_back({m, &to});
  std::push_heap(events_.begin(), events_.end(), LaterEntry{});
}

SimulationStats SequentialSimulator::run() {
  Simulation& sim = simulation_;
  sim.claim("psim::SequentialSimulator::run");
  for (auto& lp : sim.processes_) lp->sequential_ = this;
  const auto start = Clock::now();
  for (auto& lp : sim.processes_) lp->initialize();
  const Time end = sim.config().end_time;
  while (!events_.empty()) {
    std::pop_heap(events_.begin(), events_.end(), LaterEntry{});
    Entry e = events_.back();
    events_.pop_back();
    if (e.message.time >= end) break;
    LogicalProcess& lp = *e.to;
    lp.key_ = e.message.key();
    ++lp.stats_.events;
    lp.handle(e.message);
  }
  const auto stop = Clock::now();
  events_.clear();
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
