#pragma once
// DeadlockView: what a SimulationScheduler's deadlock hooks see of a simulation at a standstill,
// and the one thing they may do to it: grant an LP the messages below a key.
//
// The engine builds it inside a deadlock break (SimulationScheduler::resolve_deadlock and
// end_simulation), with every LP's lock held: the facts are one consistent state and stay
// true while the hook runs. It is valid only during that call; do not keep it.
//
// The facts, for LP i (0 <= i < size()):
//  - state(i): active (handling an event, key handling(i)), receiving (ready, or about to
//    look at its messages), blocked (asleep in receive(): its earliest message is not yet
//    known to be safe) or finished.
//  - earliest(i): its earliest pending message, taken in or still on an input link
//    (EventKey{kNever} if none).
//  - min_lookahead(i): the least lookahead of its input links (kNever: it has none).
//  - grant_limit(i): every message below this key is already known to be safe for it.
// and of the whole simulation: floor(), the earliest pending message or event being handled
// anywhere (every event from now on is at or after it); earliest_owner(), the non-active LP
// holding the earliest pending message among non-active LPs, second_earliest() (the earliest
// pending message of every other non-active LP) and earliest_handled() (the earliest event
// being handled).
//
// The safety rule. Granting LP i the messages below `limit` declares that nothing below
// `limit` can still reach i from another LP (its own later sends lower its grant again, so
// they need no proof). From these facts that holds below safe_limit(i), the larger of
//  - floor().time + min_lookahead(i): anything reaching i from now on is sent by an event at
//    or after the floor, across a link at least that long; and
//  - for earliest_owner() only, if no event being handled is earlier than its message:
//    min(second_earliest(), earliest_handled()) (a message's key exceeds its cause's).
// grant() refuses a limit above safe_limit(i): it throws SchedulerError naming the scheduler,
// the LP and both keys, and the simulation ends with that error (Simulation::run throws it)
// instead of producing a different history. A grant never lowers a limit.

#include <algorithm>
#include <cstddef>
#include <limits>
#include <memory>
#include <vector>

#include <presto/psim/logical_process.hpp>
#include <presto/psim/message.hpp>
#include <presto/psim/simulation.hpp>

namespace presto::psim {

class SimulationScheduler;

// Its accessors are inline (the default hook runs them for every LP at every break); an index
// must be below size().
class DeadlockView {
 public:
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();
  enum class State { active, receiving, blocked, finished };

  DeadlockView(const DeadlockView&) = delete;
  DeadlockView& operator=(const DeadlockView&) = delete;

  // Called by the runtime's halt (every processor idle, nothing ready: a total deadlock), or
  // by the ready pool for a processor that found nothing (partial: others may be running).
  bool total() const noexcept { return total_; }
  Protocol protocol() const noexcept { return config_.protocol; }
  Time end_time() const noexcept { return config_.end_time; }
  std::size_t size() const noexcept { return processes_.size(); }

  LogicalProcess& process(std::size_t i) const noexcept { return *processes_[i]; }
  State state(std::size_t i) const noexcept {
    switch (processes_[i]->phase_) {
      case LogicalProcess::Phase::active: return State::active;
      case LogicalProcess::Phase::receiving: return State::receiving;
      case LogicalProcess::Phase::blocked: return State::blocked;
      case LogicalProcess::Phase::finished: break;
    }
    return State::finished;
  }
  EventKey earliest(std::size_t i) const noexcept { return earliest_[i]; }
  EventKey handling(std::size_t i) const noexcept {
    return processes_[i]->phase_ == LogicalProcess::Phase::active ? processes_[i]->key_ : EventKey{kNever};
  }
  Time min_lookahead(std::size_t i) const noexcept { return processes_[i]->min_lookahead_; }
  EventKey grant_limit(std::size_t i) const noexcept { return processes_[i]->grant_limit_; }

  EventKey floor() const noexcept { return floor_; }
  std::size_t earliest_owner() const noexcept { return owner_; }
  EventKey second_earliest() const noexcept { return second_; }
  EventKey earliest_handled() const noexcept { return handled_; }

  // The most grant(i, ...) accepts (see the safety rule above).
  EventKey safe_limit(std::size_t i) const noexcept {
    EventKey limit{floor_.time + processes_[i]->min_lookahead_};
    if (i == owner_ && earliest_key_ < handled_) limit = std::max(limit, std::min(second_, handled_));
    return limit;
  }
  // Declares every message of LP i below `limit` safe. A blocked LP whose earliest message is
  // then granted is restarted by the engine after the hook returns. Throws SchedulerError if
  // `limit` exceeds safe_limit(i).
  void grant(std::size_t i, EventKey limit) {
    LogicalProcess& lp = *processes_[i];
    if (!(lp.grant_limit_ < limit)) return;
    if (const EventKey safe = safe_limit(i); safe < limit) [[unlikely]] unsafe(i, limit, safe);
    lp.grant_limit_ = limit;
  }
  // grant(i, safe_limit(i)) for every LP that has not finished: PSIM's floor rule.
  void grant_all_safe() noexcept {
    for (std::size_t i = 0; i < processes_.size(); ++i) {
      LogicalProcess& lp = *processes_[i];
      if (lp.phase_ != LogicalProcess::Phase::finished) lp.grant_limit_ = std::max(lp.grant_limit_, safe_limit(i));
    }
  }

 private:
  friend class Simulation;
  DeadlockView(const Simulation& simulation, const SimulationScheduler& scheduler, bool total) noexcept
      : processes_(simulation.processes_), earliest_(simulation.earliest_), config_(simulation.config_),
        scheduler_(scheduler), total_(total) {}
  [[noreturn, gnu::cold]] void unsafe(std::size_t i, EventKey limit, EventKey safe) const;

  const std::vector<std::unique_ptr<LogicalProcess>>& processes_;
  const std::vector<EventKey>& earliest_;
  const SimulationConfig& config_;
  const SimulationScheduler& scheduler_;
  bool total_;
  EventKey floor_{kNever};
  std::size_t owner_ = npos;
  EventKey earliest_key_{kNever};  // owner_'s
  EventKey second_{kNever};
  EventKey handled_{kNever};
};

}  // namespace presto::psim
