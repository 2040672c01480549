#include <presto/psim/simulation.hpp>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <exception>
#include <sstream>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <presto/errors.hpp>
#include <presto/local_queue_pool.hpp>
#include <presto/runtime.hpp>
#include <presto/psim/simulation_pool.hpp>
#include <presto/psim/simulation_scheduler.hpp>

namespace presto::psim {

// The clock of the per-LP blocked time: read twice per block, so it must be cheap. The x86-64
// time-stamp counter (a few ns, against tens for steady_clock in a VM) where there is one,
// converted to nanoseconds over the run; steady_clock's nanoseconds elsewhere.
std::uint64_t Simulation::ticks() noexcept {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
#endif
}

std::string_view to_string(Protocol protocol) noexcept {
  switch (protocol) {
    case Protocol::deadlock_recovery: return "deadlock-recovery";
    case Protocol::null_messages: return "null-messages";
  }
  return "?";
}

// The LPs to wake once the lock is released, in the order they were unblocked. Most events
// wake none or one, and a deadlock break a window's worth: up to kInline fit without
// allocating (break_deadlock runs in the dispatch path, which must not allocate: there it
// wakes no more than that at a time).
class Simulation::WakeList {
 public:
  static constexpr std::size_t kInline = 16;
  void emplace_back(LogicalProcess* lp, Link* link) {
    if (inline_size_ < kInline) {
      inline_[inline_size_++] = {lp, link};
    } else {
      overflow_.push_back({lp, link});
    }
  }
  bool empty() const noexcept { return inline_size_ == 0; }
  bool full() const noexcept { return inline_size_ == kInline; }  // the next one would allocate
  // Wakes every LP listed (without the simulation's lock) and empties the list.
  void wake_all() {
    for (std::size_t i = 0; i < inline_size_; ++i) inline_[i].lp->wakeup(*inline_[i].link);
    for (const Wake& w : overflow_) w.lp->wakeup(*w.link);
    inline_size_ = 0;
    overflow_.clear();
  }

 private:
  struct Wake {
    LogicalProcess* lp;
    Link* link;
  };
  Wake inline_[kInline];  // the first inline_size_ are set
  std::size_t inline_size_ = 0;
  std::vector<Wake> overflow_;
};

Simulation::Simulation(SimulationConfig config) : config_(config) {
  if (!(config_.end_time > 0)) throw UsageError("psim::Simulation: end_time must be positive");
}

Simulation::~Simulation() = default;

void Simulation::claim(const char* by) {
  if (claimed_) throw UsageError(std::string(by) + ": this psim::Simulation has already run; build the model again");
  claimed_ = true;
}

void Simulation::adopt(std::unique_ptr<LogicalProcess> lp) {
  if (claimed_) throw UsageError("psim::Simulation::add after the simulation ran");
  lp->simulation_ = this;
  lp->index_ = static_cast<std::uint32_t>(processes_.size());
  processes_.push_back(std::move(lp));
}

Link& Simulation::connect(LogicalProcess& from, LogicalProcess& to, Time lookahead) {
  if (claimed_) throw UsageError("psim::Simulation::connect after the simulation ran");
  if (from.simulation_ != this || to.simulation_ != this) {
    throw UsageError("psim::Simulation::connect: '" + from.name() + "' or '" + to.name() +
                     "' is not a logical process of this simulation");
  }
  if (&from == &to) {
    throw UsageError("psim::Simulation::connect: a link from '" + from.name() +
                     "' to itself; an LP sends to itself with schedule()");
  }
  if (!std::isfinite(lookahead) || lookahead < 0) {
    std::ostringstream os;  // NaN shows as "nan", infinities as "inf" and "-inf"
    os << "psim::Simulation::connect: lookahead " << lookahead << " on '" << from.name() << "->" << to.name()
       << "' is not a finite, non-negative time";
    throw UsageError(os.str());
  }
  links_.push_back(std::make_unique<Link>(from, to, lookahead));
  Link& l = *links_.back();
  from.outputs_.push_back(&l);
  l.slot_ = static_cast<std::uint32_t>(to.inputs_.size());
  to.inputs_.push_back(&l);
  to.min_lookahead_ = std::min(to.min_lookahead_, lookahead);
  to.in_.push_back({.clock = lookahead, .lookahead = lookahead, .sender_bound = &from.bound_});
  return l;
}

// --- The engine ----------------------------------------------------------------------------
//
// Locking. Each LP's mutex_ guards its side of the engine: its phase, the link it sleeps on,
// its pending heap, horizon and grant, and its input links (their FIFOs, clocks and counts).
// A thread holds at most one LP's mutex at a time, except break_deadlock and a failing LP,
// which take every LP's in index order (AllLocks); the spinlock of the link an LP sleeps on is
// taken inside that LP's mutex. What other LPs need of an LP without its mutex is published
// in atomics: its lower bound (bound_, for the null messages they pull from it), how many LPs
// sleep on its output links and on which (waiters_, Link::waited_, for the null messages it
// pushes; kept under null messages only). An LP about to sleep publishes its bound and then
// reads waiters_; an LP about to sleep on a link sets waited_ and waiters_ then reads the
// link's sender's bound: one of the two sees the other (all four accesses are sequentially
// consistent), so no null message is lost. When an LP takes an event it publishes the event's
// time with a plain release store and pushes null messages to the waiters it sees: a waiter it
// misses then is served when it blocks, at the latest.
//
// An LP stays active until every message of its event is delivered, so a deadlock breaker,
// which sees every LP at once, never misses a message in flight: a message not yet delivered is
// later than its sender's active event.

class Simulation::AllLocks {
 public:
  // Takes every LP's mutex in index order; with may_wait false, gives up (owns() false) rather
  // than wait for one that is held.
  AllLocks(Simulation& simulation, bool may_wait) : processes_(simulation.processes_) {
    for (; taken_ < processes_.size(); ++taken_) {
      presto::Spinlock& m = processes_[taken_]->mutex_;
      if (may_wait) {
        m.lock();
      } else if (!m.try_lock()) {
        break;
      }
    }
  }
  AllLocks(const AllLocks&) = delete;
  AllLocks& operator=(const AllLocks&) = delete;
  ~AllLocks() {
    while (taken_ > 0) processes_[--taken_]->mutex_.unlock();
  }
  bool owns() const noexcept { return taken_ == processes_.size(); }

 private:
  const std::vector<std::unique_ptr<LogicalProcess>>& processes_;
  std::size_t taken_ = 0;
};

void Simulation::deliver(Link& link, const Message& m, WakeList& wakes) {
  LogicalProcess& r = link.to_;
  ++link.messages_;
  LogicalProcess::Input& in = r.in_[link.slot_];
  in.clock = std::max(in.clock, m.sent_at + link.lookahead_);
  if (r.phase_ == LogicalProcess::Phase::finished) return;  // past its end: never received
  if (link.fifo_.empty()) r.filled_.push_back(&link);
  link.fifo_.push_back(m);
  if (m.key() < r.inbox_min_) r.inbox_min_ = m.key();
  if (r.phase_ == LogicalProcess::Phase::blocked && (r.blocked_on_ == &link || m.time < r.horizon_)) {
    unblock(r, wakes);
  }
}

void Simulation::deliver_sent(LogicalProcess& lp, WakeList& wakes) {
  for (auto& [link, m] : lp.outbox_) {
    if (link == nullptr) continue;  // to itself: taken in by receive()
    std::lock_guard theirs(link->to_.mutex_);
    deliver(*link, m, wakes);
  }
}

void Simulation::take_in(LogicalProcess& lp) {
  for (Link* l : lp.filled_) {
    for (const Message& m : l->fifo_) {
      lp.pending_.push_back(m);
      std::push_heap(lp.pending_.begin(), lp.pending_.end(), LaterKey{});
    }
    l->fifo_.clear();
  }
  lp.filled_.clear();
  lp.inbox_min_ = EventKey{kNever};
}

inline Time Simulation::pull_null(LogicalProcess::Input& in) {
  const Time promise = in.sender_bound->load(std::memory_order_seq_cst) + in.lookahead;
  if (promise <= in.clock) return in.clock;
  in.clock = promise;
  ++in.null_messages;
  return promise;
}

Link* Simulation::refresh_horizon(LogicalProcess& lp, Time next) {
  // Under null messages, an input whose clock holds `next` back first gets the null message its
  // sender owes from the bound it published. The input that was least at the last full scan is
  // looked at first: if it is still no higher than the runner-up was then, it is still the
  // least (clocks only grow) and the other inputs need no look. Otherwise one pass over all of
  // them (contiguous, unlike the links) finds the least and the runner-up.
  std::vector<LogicalProcess::Input>& in = lp.in_;
  if (in.empty()) {
    lp.horizon_ = kNever;
    return nullptr;
  }
  const bool pull = config_.protocol == Protocol::null_messages;
  LogicalProcess::Input& last = in[lp.least_];
  if (pull && last.clock <= next) pull_null(last);
  if (last.clock <= lp.runner_up_) {
    lp.horizon_ = last.clock;
    return lp.inputs_[lp.least_];
  }
  std::uint32_t least = 0;
  Time least_clock = kNever, runner_up = kNever;
  const std::uint32_t n = static_cast<std::uint32_t>(in.size());
  for (std::uint32_t i = 0; i < n; ++i) {
    Time c = in[i].clock;
    if (pull && c <= next) c = pull_null(in[i]);
    if (c < least_clock) {
      runner_up = least_clock;
      least_clock = c;
      least = i;
    } else if (c < runner_up) {
      runner_up = c;
    }
  }
  lp.horizon_ = least_clock;
  lp.least_ = least;
  lp.runner_up_ = runner_up;
  return lp.inputs_[least];
}

void Simulation::publish_bound(LogicalProcess& lp, Time bound) {
  // Only lp writes its bound; a bound never goes down (an LP's next event is never earlier
  // than one it could already promise). Stored again even when not higher: the store is
  // sequentially consistent, and the caller reads waiters_ next.
  lp.bound_.store(std::max(bound, lp.bound_.load(std::memory_order_relaxed)), std::memory_order_seq_cst);
  lp.announced_ = bound;
}


void Simulation::send_nulls(LogicalProcess& lp, Time bound, WakeList& wakes) {
  if (lp.waiters_.load(std::memory_order_seq_cst) == 0) return;
  for (Link* l : lp.outputs_) {
    if (!l->waited_.load(std::memory_order_seq_cst)) continue;
    LogicalProcess& r = l->to_;
    std::lock_guard theirs(r.mutex_);
    LogicalProcess::Input& in = r.in_[l->slot_];
    const Time promise = bound + l->lookahead_;
    if (r.phase_ != LogicalProcess::Phase::blocked || r.blocked_on_ != l || promise <= in.clock) continue;
    in.clock = promise;
    ++in.null_messages;
    unblock(r, wakes);
  }
}

void Simulation::unblock(LogicalProcess& lp, WakeList& wakes) {
  // lp set blocked_on_ under its mutex and took that link's spinlock before releasing the
  // mutex, and keeps it until it is switched out: once we hold the spinlock, lp waits on it.
  Link* l = lp.blocked_on_;
  if (config_.protocol == Protocol::null_messages) {
    l->waited_.store(false, std::memory_order_relaxed);
    l->from_.waiters_.fetch_sub(1, std::memory_order_relaxed);
  }
  l->spin_lock();
  bool waiting = l->recall(lp);
  l->spin_unlock();
  lp.blocked_on_ = nullptr;
  lp.phase_ = LogicalProcess::Phase::receiving;
  if (waiting) wakes.emplace_back(&lp, l);
}

void Simulation::finish_inputs(LogicalProcess& lp) {
  lp.phase_ = LogicalProcess::Phase::finished;
  publish_bound(lp, kNever);
  lp.pending_.clear();
  for (Link* l : lp.inputs_) l->fifo_.clear();
  lp.filled_.clear();
}

void Simulation::close_outputs(LogicalProcess& lp, WakeList& wakes) {
  for (Link* l : lp.outputs_) {
    LogicalProcess& r = l->to_;
    std::lock_guard theirs(r.mutex_);
    r.in_[l->slot_].clock = kNever;  // lp will never send again
    if (r.phase_ == LogicalProcess::Phase::blocked && r.blocked_on_ == l) unblock(r, wakes);
  }
}

std::optional<Message> Simulation::receive(LogicalProcess& lp) {
  WakeList wakes;
  deliver_sent(lp, wakes);  // still active: nothing of this event is missed by a deadlock breaker
  std::unique_lock own(lp.mutex_);
  for (auto& [link, m] : lp.outbox_) {
    if (link == nullptr) {
      lp.pending_.push_back(m);
      std::push_heap(lp.pending_.begin(), lp.pending_.end(), LaterKey{});
    } else {
      lp.grant_limit_ = std::min(lp.grant_limit_, m.key());  // it may come back, a little later
    }
  }
  lp.outbox_.clear();
  lp.phase_ = LogicalProcess::Phase::receiving;
  const bool nulls = config_.protocol == Protocol::null_messages;
  for (;;) {
    take_in(lp);
    const Time next = lp.pending_.empty() ? kNever : lp.pending_.front().time;
    Link* holding = nullptr;
    if (next >= lp.horizon_) holding = refresh_horizon(lp, next);  // the cached one is a lower bound
    const bool granted = !lp.pending_.empty() && lp.pending_.front().key() < lp.grant_limit_;
    if (!done_ && next < config_.end_time && (next < lp.horizon_ || granted)) {
      std::pop_heap(lp.pending_.begin(), lp.pending_.end(), LaterKey{});
      Message m = lp.pending_.back();
      lp.pending_.pop_back();
      lp.key_ = m.key();
      lp.phase_ = LogicalProcess::Phase::active;
      if (m.time > lp.bound_.load(std::memory_order_relaxed)) lp.bound_.store(m.time, std::memory_order_release);
      ++lp.stats_.events;
      if (!(next < lp.horizon_)) ++lp.stats_.deadlock_grants;
      own.unlock();
      // Null messages on demand: LPs waiting on this one learn at once that it has moved on.
      if (nulls) send_nulls(lp, m.time, wakes);
      wakes.wake_all();
      return m;
    }
    if (done_ || std::min(next, lp.horizon_) >= config_.end_time) {
      finish_inputs(lp);
      own.unlock();
      close_outputs(lp, wakes);
      wakes.wake_all();
      return std::nullopt;
    }
    // Not yet safe: sleep on the input link holding the LP back.
    assert(holding != nullptr);
    if (nulls) {
      // refresh_horizon took the null messages owed to us; send ours to the LPs waiting on us
      // (without our mutex: one mutex at a time), then look again.
      const Time bound = std::min(next, lp.horizon_);
      if (bound > lp.announced_) {
        publish_bound(lp, bound);
        if (lp.waiters_.load(std::memory_order_seq_cst) > 0) {
          own.unlock();
          send_nulls(lp, bound, wakes);
          wakes.wake_all();
          own.lock();
          continue;
        }
      }
      holding->waited_.store(true, std::memory_order_seq_cst);
      holding->from_.waiters_.fetch_add(1, std::memory_order_seq_cst);
    }
    lp.blocked_on_ = holding;
    lp.phase_ = LogicalProcess::Phase::blocked;
    LogicalProcess::Input& held = lp.in_[holding->slot_];
    if (nulls && held.sender_bound->load(std::memory_order_seq_cst) + held.lookahead > held.clock) {
      // Its sender published a higher bound before it could see us wait: take it and look
      // again (nobody unblocked us: that takes our mutex).
      holding->waited_.store(false, std::memory_order_relaxed);
      holding->from_.waiters_.fetch_sub(1, std::memory_order_relaxed);
      lp.blocked_on_ = nullptr;
      lp.phase_ = LogicalProcess::Phase::receiving;
      pull_null(held);
      continue;
    }
    ++lp.stats_.blocks;
    holding->spin_lock();
    own.unlock();
    wakes.wake_all();
    const std::uint64_t asleep = ticks();
    holding->block();  // releases the spinlock once switched out; whoever wakes us unblock()ed us
    lp.blocked_ticks_ += ticks() - asleep;
    own.lock();
  }
}

void Simulation::ended(LogicalProcess& lp, bool failed) {
  WakeList wakes;
  bool open;
  {
    std::lock_guard own(lp.mutex_);
    open = lp.phase_ != LogicalProcess::Phase::finished;
  }
  if (open) {  // its body returned (or threw) without receive() ending it
    if (!failed) deliver_sent(lp, wakes);
    lp.outbox_.clear();
    {
      std::lock_guard own(lp.mutex_);
      finish_inputs(lp);
    }
    close_outputs(lp, wakes);
  }
  if (failed) {  // end the whole simulation: every LP's receive() returns nullopt
    AllLocks all(*this, /*may_wait=*/true);
    done_ = true;
    for (auto& other : processes_) {
      if (other->phase_ == LogicalProcess::Phase::blocked) unblock(*other, wakes);
    }
  }
  wakes.wake_all();
}

Simulation::Breaking Simulation::break_deadlock(bool may_wait, bool total) {
  if (!total && config_.protocol == Protocol::null_messages) return Breaking::nothing;
  WakeList wakes;
  bool skipped = false;  // an LP to restart was still switching out
  {
    AllLocks all(*this, may_wait);
    if (!all.owns()) return Breaking::busy;
    if (done_) return Breaking::nothing;
    // Every event from now on is at or after `floor`, the earliest pending message or event
    // being handled anywhere: a message's key always exceeds that of the event that sent it.
    EventKey earliest{kNever}, runner_up{kNever};
    LogicalProcess* owner = nullptr;
    bool any_active = false;
    EventKey earliest_active{kNever};
    for (auto& lp : processes_) {
      switch (lp->phase_) {
        case LogicalProcess::Phase::active:
          any_active = true;
          earliest_active = std::min(earliest_active, lp->key_);
          break;
        case LogicalProcess::Phase::receiving:
        case LogicalProcess::Phase::blocked: {
          const EventKey k = lp->earliest_pending();
          earliest_[lp->index_] = k;
          if (k < earliest) {
            runner_up = earliest;
            earliest = k;
            owner = lp.get();
          } else {
            runner_up = std::min(runner_up, k);
          }
          break;
        }
        case LogicalProcess::Phase::finished: break;
      }
    }
    if (!any_active && earliest.time >= config_.end_time) {
      if (!total) return Breaking::nothing;  // the halt ends it, when every processor is idle
      done_ = true;
      for (auto& lp : processes_) {
        if (lp->phase_ == LogicalProcess::Phase::blocked) unblock(*lp, wakes);
      }
    } else {
      // Two proofs, each still valid later (an LP's own sends lower its grant, in receive()):
      //  - the owner of the earliest pending message may go on up to the next LP's earliest
      //    message or event, if no event being handled is earlier (this needs no lookahead);
      //  - every LP may go on up to floor + its least input lookahead: whatever reaches it from
      //    now on was sent by an event at or after floor, across a link at least that long.
      // Every blocked LP whose earliest pending message is now granted restarts, at once.
      const Time floor = std::min(earliest, earliest_active).time;
      if (owner != nullptr && !(any_active && !(earliest < earliest_active))) {
        owner->grant_limit_ = std::max(owner->grant_limit_, std::min(runner_up, earliest_active));
      }
      for (auto& lp : processes_) {
        if (lp->phase_ == LogicalProcess::Phase::finished) continue;
        if (lp->min_lookahead_ > 0) lp->grant_limit_ = std::max(lp->grant_limit_, EventKey{floor + lp->min_lookahead_});
        if (lp->phase_ != LogicalProcess::Phase::blocked) continue;  // it will see its grant
        const EventKey k = earliest_[lp->index_];  // as found above
        if (!(k < lp->grant_limit_) || k.time >= config_.end_time) continue;
        if (!may_wait) {
          // Not waiting and not allocating: the next break restarts it.
          if (wakes.full() || !lp->blocked_on_->spin_try_lock()) {  // or still switching out
            skipped = true;
            continue;
          }
          lp->blocked_on_->spin_unlock();
        }
        unblock(*lp, wakes);
      }
      if (!wakes.empty()) ++(total ? total_deadlocks_ : partial_deadlocks_);
    }
  }
  const bool woke = !wakes.empty();
  wakes.wake_all();
  return woke ? Breaking::woke : skipped ? Breaking::busy : Breaking::nothing;
}

SimulationStats Simulation::run(std::unique_ptr<ThreadPool> inner) {
  Runtime* rt = Runtime::current();
  if (rt == nullptr) throw UsageError("psim::Simulation::run called outside a presto thread");
  claim("psim::Simulation::run");
  auto pool = std::make_unique<SimulationPool>(*this, inner ? std::move(inner) : std::make_unique<LocalQueuePool>());
  std::unique_ptr<Scheduler> previous = rt->replace_scheduler(std::make_unique<SimulationScheduler>(*this, std::move(pool)));
  earliest_.resize(processes_.size());  // for break_deadlock, which must not allocate
  const auto start = Clock::now();
  const std::uint64_t start_ticks = ticks();
  std::exception_ptr failure;
  std::size_t started = 0;
  try {
    for (auto& lp : processes_) {
      lp->start();
      ++started;
    }
  } catch (...) {
    failure = std::current_exception();
  }
  for (std::size_t i = 0; i < started; ++i) {
    try {
      processes_[i]->join();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  const auto stop = Clock::now();
  const std::uint64_t stop_ticks = ticks();
  rt->replace_scheduler(std::move(previous));
  if (failure) std::rethrow_exception(failure);

  SimulationStats s;
  s.seconds = std::chrono::duration<double>(stop - start).count();
  // Ticks to nanoseconds over the run itself (the tick rate is the TSC's, not known in advance).
  const double ns_per_tick =
      stop_ticks > start_ticks ? s.seconds * 1e9 / static_cast<double>(stop_ticks - start_ticks) : 0.0;
  s.partial_deadlocks = partial_deadlocks_;
  s.total_deadlocks = total_deadlocks_;
  for (auto& lp : processes_) {
    ProcessStats& p = lp->stats_;
    p.null_messages = 0;
    for (const Link* l : lp->outputs_) p.null_messages += l->null_messages();
    s.events += p.events;
    s.messages += p.messages_sent;
    s.null_messages += p.null_messages;
    s.blocks += p.blocks;
    p.blocked_time = std::chrono::nanoseconds(static_cast<std::int64_t>(static_cast<double>(lp->blocked_ticks_) * ns_per_tick));
    s.blocked_time += p.blocked_time;
    s.processes.push_back(p);
  }
  return s;
}

}  // namespace presto::psim
