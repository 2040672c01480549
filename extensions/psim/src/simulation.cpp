#include <presto/psim/simulation.hpp>

#include <algorithm>
#include <bit>
#include <cassert>
#include <chrono>
#include <cmath>
#include <exception>
#include <optional>
#include <sstream>
#include <type_traits>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <presto/errors.hpp>
#include <presto/local_queue_pool.hpp>
#include <presto/runtime.hpp>
#include <presto/this_thread.hpp>
#include <presto/psim/deadlock_view.hpp>
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
  l.out_slot_ = static_cast<std::uint32_t>(from.outputs_.size());
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
// its inbox, pending heap, horizon and grant, and its input links' clocks and counts.
// A thread holds at most one LP's mutex at a time, except break_deadlock and a failing LP,
// which take every LP's in index order (AllLocks). An LP's mutex is also the spinlock of its
// input links (Link::ReceiverLock): it sleeps on one with its mutex held, let go once it is
// switched out, so whoever holds its mutex finds it either awake or wholly asleep and recalls
// it without another lock. (A spinlock of each link, taken inside the mutex before sleeping
// and again by the waker, was two more locked instructions a block.) What other LPs need of
// an LP without its mutex is published in atomics: its lower bound (bound_, for the null
// messages they pull from it) and which of its output links an LP sleeps on (waited_, a bit
// per link, for the null messages it pushes; kept under null messages only). An LP about to
// sleep publishes its bound and then reads waited_; an LP about to sleep on a link sets the
// link's bit in its sender's waited_ then reads that sender's bound: one of the two sees the
// other (all four accesses are sequentially consistent), so no null message is lost. When an
// LP takes an event it publishes the event's time with a plain release store and pushes null
// messages to the waiters it sees: a waiter it misses then is served when it blocks, at the
// latest.
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

bool Simulation::deliver(Link& link, const Message& m, WakeList& wakes) {
  LogicalProcess& r = link.to_;
  if (config_.check_grants && m.key() < r.key_ && r.phase_ != LogicalProcess::Phase::finished) [[unlikely]] {
    return false;
  }
  ++link.messages_;
  LogicalProcess::Input& in = r.in_[link.slot_];
  in.clock = std::max(in.clock, m.sent_at + link.lookahead_);
  if (r.phase_ == LogicalProcess::Phase::finished) {  // past its end: never received
    if (m.time < config_.end_time) ++r.stats_.unreceived;
    return true;
  }
  r.inbox_.push_back(m);
  if (m.key() < r.inbox_min_) r.inbox_min_ = m.key();
  if (r.phase_ == LogicalProcess::Phase::blocked && (r.blocked_on_ == &link || m.time < r.horizon_)) {
    unblock(r, wakes);
  }
  return true;
}

const std::pair<Link*, Message>* Simulation::deliver_sent(LogicalProcess& lp, WakeList& wakes) {
  const std::pair<Link*, Message>* refused = nullptr;
  for (const auto& sent : lp.outbox_) {
    if (sent.first->to_.stand_in_) [[unlikely]] {  // runs in another process
      remote_->send(*sent.first, sent.second);
      continue;
    }
    std::lock_guard theirs(sent.first->to_.mutex_);
    if (!deliver(*sent.first, sent.second, wakes) && refused == nullptr) [[unlikely]] refused = &sent;
  }
  return refused;
}

std::string Simulation::unsafe_delivery(const Link& link, const Message& m) {
  std::lock_guard lock(swap_);
  std::ostringstream os;
  const LogicalProcess& r = link.to();
  os << "logical process '" << r.name() << "' was sent a message at t=" << m.time << " by '" << link.from().name()
     << "' after it had handled one at t=" << r.now() << ": a grant by psim scheduler '"
     << (scheduler_ != nullptr ? scheduler_->name() : std::string_view("?"))
     << "' was unsafe (found by SimulationConfig::check_grants)";
  return os.str();
}

void Simulation::fail(std::string what) {
  if (failure_.empty()) failure_ = std::move(what);  // an LP's own failure passes ""
  done_ = true;
}

bool Simulation::restart(LogicalProcess& lp, bool may_wait, WakeList& wakes) {
  // Not allocating without leave: the next break restarts it. (Its mutex is held, so it has
  // been switched out.)
  if (!may_wait && wakes.full()) return false;
  unblock(lp, wakes);
  return true;
}

bool Simulation::restart_all(bool may_wait, WakeList& wakes) {
  bool all = true;
  for (auto& lp : processes_) {
    if (lp->phase_ == LogicalProcess::Phase::blocked && !restart(*lp, may_wait, wakes)) all = false;
  }
  return all;
}

namespace {

// Moves the earliest message of a pending heap (LaterKey, as std::push_heap builds it) into
// `out`. std::pop_heap's step to the earlier of two children is a branch that each level
// mispredicts about half the time (the children's order is a coin toss); here the step is
// picked without a branch. Like std::pop_heap, the hole goes down to a leaf first (a loop
// whose length depends only on the heap's size) and the last message rises from there.
void pop_earliest(std::vector<Message>& heap, Message& out) {
  out = heap.front();
  // The heap becomes h[0, n); h[n], the last message, stays in the vector until the end, so
  // that the branch-free step may read h[child + 1] = h[n] when the right child is past n.
  const std::size_t n = heap.size() - 1;
  Message* const h = heap.data();
  const LaterKey later;
  std::size_t hole = 0;
  for (std::size_t child = 1; child < n; child = 2 * hole + 1) {
    child += static_cast<std::size_t>(child + 1 < n) & static_cast<std::size_t>(later(h[child], h[child + 1]));
    h[hole] = h[child];
    hole = child;
  }
  while (hole > 0 && later(h[(hole - 1) / 2], h[n])) {
    h[hole] = h[(hole - 1) / 2];
    hole = (hole - 1) / 2;
  }
  h[hole] = h[n];
  heap.pop_back();
}

}  // namespace

void Simulation::take_in(LogicalProcess& lp) {
  for (const Message& m : lp.inbox_) {
    lp.pending_.push_back(m);
    std::push_heap(lp.pending_.begin(), lp.pending_.end(), LaterKey{});
  }
  lp.inbox_.clear();
  lp.inbox_min_ = EventKey{kNever};
}

// What pull_owed reads instead of a sender's bound for an input that is owed no null message:
// the least bound, which raises no clock.
static const std::atomic<Time> kNoPromise{-kNever};

inline Time Simulation::pull_null(LogicalProcess::Input& in, const std::atomic<Time>& bound) {
  // Without branches: whether a sender has moved since the last pull is a coin toss that a
  // mispredicted branch per input would charge for.
  const Time promise = bound.load(std::memory_order_seq_cst) + in.lookahead;
  in.null_messages += static_cast<std::uint64_t>(promise > in.clock);
  in.clock = std::max(in.clock, promise);
  return in.clock;
}

inline Time Simulation::pull_null(LogicalProcess::Input& in) { return pull_null(in, *in.sender_bound); }

inline Time Simulation::pull_owed(LogicalProcess::Input& in, Time next) {
  // Whether an input is owed a pull is a coin toss too (about 9 of PHOLD's 15 inputs at a full
  // scan): so no branch, but a bound to read chosen by a mask, the sender's or kNoPromise's; an
  // input owed nothing still reads no sender's line. (A conditional expression compiled to a
  // branch that callgrind's branch simulation found mispredicted about 2 times per event.)
  const std::uintptr_t owed = std::uintptr_t{0} - static_cast<std::uintptr_t>(in.clock <= next);
  const auto* bound = reinterpret_cast<const std::atomic<Time>*>(
      (reinterpret_cast<std::uintptr_t>(in.sender_bound) & owed) | (reinterpret_cast<std::uintptr_t>(&kNoPromise) & ~owed));
  return pull_null(in, *bound);
}

Link* Simulation::refresh_horizon(LogicalProcess& lp, Time next) {
  // Under null messages an input first gets the null message its sender owes from the bound it
  // published. On one processor every input is pulled at a full scan, which raises the horizon
  // as far as the bounds allow and so saves scans: PHOLD with no work per event (16 LPs, 1
  // processor) took 161 ns an event instead of 176 (best of 5, alternated three times). On
  // more, only the inputs whose clocks hold `next` back: pulling every input reads every
  // sender's bound line while the other processors keep writing them, and PHOLD's
  // 2-processor gain (lookahead 1, 1 us work) was 0.81x and 1.01x in two runs with it, against
  // 1.4-1.8x in three of four runs without (the fourth 1.06x: on the 2-core VM that ratio is
  // bimodal). The processor count is read at each full scan; a stale one (set_processors
  // meanwhile) costs speed only, since pulling more or fewer inputs is always safe.
  // The input that was least at the last full scan is looked at first: if it is still no
  // higher than the runner-up was then, it is still the least (clocks only grow) and the other
  // inputs need no look. Otherwise one pass over all of them (contiguous, unlike the links)
  // finds the least and the runner-up.
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
  // What to pull as a compile-time constant, so that the loop tests neither it nor (the stores
  // through in_ could alias it) lp.in_'s bounds each time round.
  LogicalProcess::Input* const first = in.data();
  LogicalProcess::Input* const end = first + in.size();
  LogicalProcess::Input* least = first;
  Time least_clock = kNever, runner_up = kNever;
  enum class Pull { none, owed, all };
  const auto scan = [&]<Pull pulling>() {
    for (LogicalProcess::Input* i = first; i != end; ++i) {
      Time c;
      if constexpr (pulling == Pull::all) {
        c = pull_null(*i);
      } else if constexpr (pulling == Pull::owed) {
        c = pull_owed(*i, next);
      } else {
        c = i->clock;
      }
      // Branch-free, like pull_null: which input is least is as unpredictable.
      runner_up = std::min(runner_up, std::max(least_clock, c));
      least = c < least_clock ? i : least;
      least_clock = std::min(least_clock, c);
    }
  };
  if (!pull) {
    scan.template operator()<Pull::none>();
  } else if (lp.runtime()->processors() == 1) {
    scan.template operator()<Pull::all>();
  } else {
    scan.template operator()<Pull::owed>();
  }
  const auto index = static_cast<std::uint32_t>(least - first);
  lp.horizon_ = least_clock;
  lp.least_ = index;
  lp.runner_up_ = runner_up;
  return lp.inputs_[index];
}

void Simulation::publish_bound(LogicalProcess& lp, Time bound) {
  // Only lp writes its bound; a bound never goes down (an LP's next event is never earlier
  // than one it could already promise). Stored again even when not higher: the store is
  // sequentially consistent, and the caller reads waited_ next.
  lp.bound_.store(std::max(bound, lp.bound_.load(std::memory_order_relaxed)), std::memory_order_seq_cst);
  lp.announced_ = bound;
}


void Simulation::send_nulls(LogicalProcess& lp, Time bound, WakeList& wakes) {
  // A null message that leaves its receiver held back by the same link raises the receiver's
  // bound without waking it (send_null); the receiver's own waiters are then owed null messages
  // from that bound, sent here in turn. Up to kPassOn such receivers are remembered at a time
  // (no allocation: this may run in the dispatch path); past that, send_null wakes them.
  struct Owed {
    LogicalProcess* lp;
    Time bound;
  };
  constexpr std::size_t kPassOn = 8;
  Owed owed[kPassOn];
  std::size_t count = 0;
  for (Owed from{&lp, bound};;) {
    for (std::size_t w = 0; w < from.lp->waited_.size(); ++w) {
      for (std::uint64_t bits = from.lp->waited_[w].load(std::memory_order_seq_cst); bits != 0; bits &= bits - 1) {
        Link& link = *from.lp->outputs_[w * 64 + static_cast<std::size_t>(std::countr_zero(bits))];
        if (const Time passed = send_null(link, from.bound, wakes, count < kPassOn); passed != -kNever) {
          owed[count++] = {&link.to_, passed};
        }
      }
    }
    if (count == 0) return;
    from = owed[--count];
  }
}

Time Simulation::send_null(Link& link, Time bound, WakeList& wakes, bool may_pass_on) {
  // Its bit may be stale (the receiver woke since): whether it still sleeps on the link is
  // decided under its mutex.
  LogicalProcess& r = link.to_;
  std::lock_guard theirs(r.mutex_);
  LogicalProcess::Input& in = r.in_[link.slot_];
  const Time promise = bound + link.lookahead_;
  if (r.phase_ != LogicalProcess::Phase::blocked || r.blocked_on_ != &link || promise <= in.clock) return -kNever;
  in.clock = promise;
  ++in.null_messages;
  // Still held back (its earliest message no earlier than its horizon, before the end, nothing
  // granted): woken, it would publish its bound, tell its waiters and sleep again, a rewait.
  // Done here instead, without the switch in and out; receive() does the same when it next
  // runs. If the link is still its least input (the new clock no later than the runner-up),
  // that is one comparison. If not, its horizon is refreshed here (pulling the null messages
  // owed on its other inputs) and its sleep moved to the input now least (move_wait), but only
  // for an LP of at most kMoveScan inputs: the refresh reads other senders' bounds in the
  // sender's path, which the receiver would otherwise do on its own time. Where LPs wait on
  // each other in chains, one sender's call carries a bound down the chain. On the Intel Xeon
  // VM (2026-12-07; 2 processors, no work an event, psim_phold), the queueing network (stations
  // of 1 or 2 inputs): the same-link case alone, 847-876 ns an event against 2,405-2,422; the
  // moves added, 551-583 against 896-911. PHOLD (16 LPs of 15 inputs): no faster with the first;
  // moves for any number of inputs made it 11% (1 us of work) to 30% (none) slower.
  if (may_pass_on && !done_) {
    const EventKey next = r.earliest_pending();
    if (!(next < r.grant_limit_)) {
      Link* holding = &link;
      if (promise <= r.runner_up_) {
        r.horizon_ = promise;
      } else if (r.in_.size() <= kMoveScan) {
        holding = refresh_horizon(r, next.time);
      } else {
        holding = nullptr;
      }
      const Time horizon = r.horizon_;
      if (holding != nullptr && !(next.time < horizon) && horizon < config_.end_time &&
          (holding == &link || move_wait(r, link, *holding))) {
        ++r.stats_.passed_on;
        const Time b = std::min(next.time, horizon);
        if (!(b > r.announced_)) return -kNever;
        publish_bound(r, b);  // then send_nulls reads r's waited_
        return b;
      }
    }
  }
  unblock(r, wakes);
  return -kNever;
}

bool Simulation::register_wait(LogicalProcess& lp, Link& link) noexcept {
  // The bit, then the sender's bound, both sequentially consistent: against the sender's
  // publish_bound then read of waited_, one of the two sees the other (see Locking).
  link.from_.waited_[link.out_slot_ / 64].fetch_or(bit(link), std::memory_order_seq_cst);
  const LogicalProcess::Input& held = lp.in_[link.slot_];
  if (held.sender_bound->load(std::memory_order_seq_cst) + held.lookahead > held.clock) {
    unwait(link);
    return false;
  }
  return true;
}

bool Simulation::move_wait(LogicalProcess& r, Link& from, Link& to) {
  // As receive() does before it sleeps (register_wait). Both links' spinlock is r's mutex,
  // held: r is forgotten by one and remembered by the other at once.
  unwait(from);
  if (!register_wait(r, to)) return false;
  from.forget(r);
  to.remember(r);
  r.blocked_on_ = &to;
  return true;
}

Simulation::Yield Simulation::yields_instead(LogicalProcess& lp, const Link& holding) {
  // On one processor the LPs take turns: the ones ahead in the ready queue (the sender among
  // them, unless it sleeps) run before lp comes round again, and lp's next full scan pulls
  // what they promised. A yield is one switch out and one back; a sleep is those, the waiter's
  // bit set and cleared (two locked instructions), the bound published with a sequentially
  // consistent store, and the sender's null message, which takes lp's mutex to wake it. PHOLD
  // (16 LPs, lookahead 1, no work) slept about once every two events; yielding, 101.6-101.9
  // against 83.4-84.7 ns an event (three rounds alternated). On more processors a yield polls
  // a sender elsewhere: worth it only while the sender runs (its Thread::state(), read without
  // a lock: a hint), handling an event, which moves its bound within the event's time; one
  // asleep or waiting in a queue may not move for long, and with every held-back LP yielding
  // the queueing network of psim_phold ran 1.7x slower on 2 processors (929-931 against 546-547
  // ns an event; 8-17% slower on an Intel Xeon VM, 2026-12-07). Gated on the sender running,
  // on that VM (four rounds of psim_phold --no-sweep, alternated): PHOLD with no work 292-301
  // against 317-325 ns an event on 2 processors, the queueing network 2,118-2,226 against
  // 2,309-2,364 ns. (Gated on lp's processor having another LP to run instead: no gain.)
  // An LP of more than kMoveScan inputs also yields while the sender waits in the ready pool:
  // a null message cannot move such an LP asleep to another input (send_null), so the wakes
  // it would need cost more than a yield, and a ready sender often runs meanwhile. Only while
  // such yields let the sender move (ReadyYieldGate, detail/ready_yield_gate.hpp): under
  // lowest timestamp first, which gives the held-back LP back first, PHOLD with no work on 2
  // processors was 1.8x slower with every such yield taken (1,133-1,198 against 621-694 ns an
  // event), and is as before with the gate (590-702 against 487-694). PSIM's own scheduler,
  // same VM, 2026-12-07, alternated with the library before: PHOLD (16 LPs of 15 inputs) sleeps
  // 0.33 an event instead of 0.58, with no work 247-398 against 350-552 ns an event (seven
  // rounds of psim_phold --no-sweep); with 1 us of work psim_phold's 2-processor runs are
  // unchanged (812-824 against 809-818 ns an event, four rounds), presto-phold's 3% faster
  // (1.005 against 0.974 million events a second, medians of six runs). For every LP (the
  // queueing network's too, of 1 or 2 inputs, which send_null moves asleep) that network was
  // 20-30% slower.
  // No livelock: lp yields only while the sender's bound differs from what it was at lp's last
  // yield on the same link. At a standstill (a cycle of zero lookahead) bounds and clocks stop
  // moving and no message is sent, so the holding link and its sender's bound stay the same:
  // each LP yields at most once more, then sleeps, and the deadlock is broken as before.
  bool to_ready = false;
  if (lp.runtime()->processors() != 1) {
    const ThreadState sender = holding.from_.state();
    to_ready = sender == ThreadState::ready;
    if (sender != ThreadState::running && !(to_ready && lp.in_.size() > kMoveScan && lp.ready_yields_.open())) {
      return Yield::sleep;
    }
  }
  const Time sender_bound = holding.from_.bound_.load(std::memory_order_relaxed);
  if (&holding == lp.yielded_on_ && sender_bound == lp.yielded_at_) return Yield::sleep;
  lp.yielded_on_ = &holding;
  lp.yielded_at_ = sender_bound;
  return to_ready ? Yield::to_ready : Yield::yield;
}

inline std::uint64_t Simulation::bit(const Link& link) noexcept { return std::uint64_t{1} << (link.out_slot_ % 64); }

inline void Simulation::unwait(Link& link) noexcept {
  link.from_.waited_[link.out_slot_ / 64].fetch_and(~bit(link), std::memory_order_relaxed);
}

void Simulation::unblock(LogicalProcess& lp, WakeList& wakes) {
  // lp set blocked_on_ under its mutex, which is the link's spinlock, and let it go only once it
  // was switched out: holding the mutex, we find lp waiting on the link.
  Link* l = lp.blocked_on_;
  if (config_.protocol == Protocol::null_messages) unwait(*l);
  bool waiting = l->recall(lp);
  lp.ready_time_.store(lp.earliest_pending().time, std::memory_order_relaxed);
  lp.blocked_on_ = nullptr;
  lp.phase_ = LogicalProcess::Phase::receiving;
  if (waiting) wakes.emplace_back(&lp, l);
}

void Simulation::finish_inputs(LogicalProcess& lp) {
  lp.phase_ = LogicalProcess::Phase::finished;
  publish_bound(lp, kNever);
  const auto early = [&](const Message& m) { return m.time < config_.end_time; };
  lp.stats_.unreceived += static_cast<std::uint64_t>(std::count_if(lp.pending_.begin(), lp.pending_.end(), early));
  lp.pending_.clear();
  lp.stats_.unreceived += static_cast<std::uint64_t>(std::count_if(lp.inbox_.begin(), lp.inbox_.end(), early));
  lp.inbox_.clear();
}

void Simulation::close_outputs(LogicalProcess& lp, WakeList& wakes) {
  for (Link* l : lp.outputs_) {
    LogicalProcess& r = l->to_;
    std::lock_guard theirs(r.mutex_);
    r.in_[l->slot_].clock = kNever;  // lp will never send again
    if (r.phase_ == LogicalProcess::Phase::blocked && r.blocked_on_ == l) unblock(r, wakes);
  }
}

void Simulation::cancel_receive(LogicalProcess& lp) noexcept {
  // A waker like any other: under lp's mutex, unblock() it if it sleeps in receive; it then
  // looks at its messages again and, if it would sleep, sees the stop and throws Cancelled.
  // (Not CancellableWait: an LP sleeps on whichever input link holds it back, and its mutex,
  // not the link's spinlock, guards whether it sleeps.)
  WakeList wakes;
  {
    std::lock_guard own(lp.mutex_);
    if (lp.phase_ == LogicalProcess::Phase::blocked) unblock(lp, wakes);
  }
  try {
    wakes.wake_all();
  } catch (...) {
    // Only a subclass's wakeup can throw: the LP then stays blocked and shows in a Deadlock.
  }
}

bool Simulation::receive(LogicalProcess& lp, const StopToken* token, Message& out) {
  // With a token, LogicalProcess::receive(token) has registered the stop callback
  // (cancel_receive) around this call.
  WakeList wakes;
  // Still active: nothing of this event is missed by a deadlock breaker.
  if (!lp.outbox_.empty()) {
    if (const auto* refused = deliver_sent(lp, wakes)) [[unlikely]] {
      wakes.wake_all();
      throw SchedulerError(unsafe_delivery(*refused->first, refused->second));  // ends the simulation
    }
    wakes.wake_all();  // before taking our mutex: an LP sleeps holding it (see block below)
  }
  std::unique_lock own(lp.mutex_);
  for (const Message& m : lp.scheduled_) {
    lp.pending_.push_back(m);
    std::push_heap(lp.pending_.begin(), lp.pending_.end(), LaterKey{});
  }
  lp.scheduled_.clear();
  for (const auto& sent : lp.outbox_) {
    lp.grant_limit_ = std::min(lp.grant_limit_, sent.second.key());  // it may come back, a little later
  }
  lp.outbox_.clear();
  lp.phase_ = LogicalProcess::Phase::receiving;
  const bool nulls = config_.protocol == Protocol::null_messages;
  bool woken = false;  // slept in this call, and took no message since
  for (;;) {
    if (!lp.inbox_.empty()) take_in(lp);
    const Time next = lp.pending_.empty() ? kNever : lp.pending_.front().time;
    Link* holding = nullptr;
    if (next >= lp.horizon_) holding = refresh_horizon(lp, next);  // the cached one is a lower bound
    // (next < the end time: the heap is not empty.) Safe below the horizon, or granted.
    if (!done_ && next < config_.end_time && (next < lp.horizon_ || lp.pending_.front().key() < lp.grant_limit_)) {
      pop_earliest(lp.pending_, out);
      lp.key_ = out.key();
      lp.phase_ = LogicalProcess::Phase::active;
      lp.cancelled_ = false;
      if (next > lp.bound_.load(std::memory_order_relaxed)) lp.bound_.store(next, std::memory_order_release);
      ++lp.stats_.events;
      if (!(next < lp.horizon_)) ++lp.stats_.deadlock_grants;
      own.unlock();
      // Null messages on demand: LPs waiting on this one learn at once that it has moved on.
      if (nulls && lp.waited()) send_nulls(lp, next, wakes);
      wakes.wake_all();
      return true;
    }
    if (done_ || std::min(next, lp.horizon_) >= config_.end_time) {
      finish_inputs(lp);
      own.unlock();
      close_outputs(lp, wakes);
      wakes.wake_all();
      return false;
    }
    // Not yet safe: sleep on the input link holding the LP back.
    assert(holding != nullptr);
    if (token != nullptr && token->stop_requested()) [[unlikely]] {
      // Cancelled, between two events as it was: its messages stay queued; until a receive
      // returns one it may not send (see logical_process.hpp).
      lp.cancelled_ = true;
      ++lp.stats_.cancellations;
      own.unlock();
      wakes.wake_all();
      std::ostringstream operation;
      operation << "receive of logical process '" << lp.name() << "' at t=" << lp.now();
      throw Cancelled(holding->describe(), lp.describe(), operation.str());
    }
    if (nulls) {
      // refresh_horizon took the null messages owed to us; send ours to the LPs waiting on us
      // (without our mutex: one mutex at a time), then look again.
      const Time bound = std::min(next, lp.horizon_);
      if (bound > lp.announced_) {
        publish_bound(lp, bound);
        if (lp.waited()) {
          own.unlock();
          send_nulls(lp, bound, wakes);
          wakes.wake_all();
          own.lock();
          continue;
        }
      }
      if (const Yield yielding = yields_instead(lp, *holding); yielding != Yield::sleep) {
        ++lp.stats_.yields;
        own.unlock();
        this_thread::yield();
        own.lock();
        if (yielding == Yield::to_ready) {  // whether it let the sender move (ReadyYieldGate)
          lp.ready_yields_.note(holding->from_.bound_.load(std::memory_order_relaxed) != lp.yielded_at_);
        }
        continue;
      }
      if (!register_wait(lp, *holding)) {
        // Its sender published a higher bound before it could see us wait: take it and look
        // again (nobody unblocked us: that takes our mutex).
        pull_null(lp.in_[holding->slot_]);
        continue;
      }
    }
    lp.blocked_on_ = holding;
    lp.phase_ = LogicalProcess::Phase::blocked;
    ++lp.stats_.blocks;
    lp.stats_.rewaits += static_cast<std::uint64_t>(woken);
    woken = true;
    assert(wakes.empty());  // every path above that woke LPs woke them
    const bool timed = config_.measure_blocked_time;
    const std::uint64_t asleep = timed ? ticks() : 0;
    // Asleep with our mutex, the link's spinlock, which block() lets go once we are switched
    // out; whoever wakes us unblock()ed us.
    own.release();
    holding->block();
    if (timed) lp.blocked_ticks_ += ticks() - asleep;
    own = std::unique_lock(lp.mutex_);
  }
}

void Simulation::ended(LogicalProcess& lp, bool failed) {
  WakeList wakes;
  bool open;
  {
    std::lock_guard own(lp.mutex_);
    open = lp.phase_ != LogicalProcess::Phase::finished;
  }
  std::string unsafe;
  std::exception_ptr sending;  // a RemotePart's failure to send its last messages
  if (open) {  // its body returned (or threw) without receive() ending it
    if (!failed) {
      try {
        if (const auto* refused = deliver_sent(lp, wakes)) unsafe = unsafe_delivery(*refused->first, refused->second);
      } catch (...) {
        sending = std::current_exception();
        failed = true;
      }
    }
    lp.outbox_.clear();
    lp.scheduled_.clear();
    {
      std::lock_guard own(lp.mutex_);
      finish_inputs(lp);
    }
    close_outputs(lp, wakes);
  }
  if (failed || !unsafe.empty()) {  // end the whole simulation: every LP's receive() returns nullopt
    AllLocks all(*this, /*may_wait=*/true);
    fail(std::move(unsafe));
    restart_all(/*may_wait=*/true, wakes);
  }
  wakes.wake_all();
  if (sending) std::rethrow_exception(sending);  // the LP's failure, which run() rethrows
}

// --- Distribution (remote_part.hpp) --------------------------------------------------------

void Simulation::check_distributable() const {
  if (config_.protocol != Protocol::null_messages) {
    throw UsageError("psim::Simulation::distribute: a distributed simulation runs only Protocol::null_messages (" +
                     std::string(to_string(config_.protocol)) + " needs one view of every LP)");
  }
  for (const auto& l : links_) {
    if (!(l->lookahead() > 0)) {
      throw UsageError("psim::Simulation::distribute: link '" + l->name() +
                       "' has lookahead 0; a distributed simulation needs a positive lookahead on every link");
    }
  }
}

void Simulation::distribute(RemotePart& part, std::vector<bool> owned) {
  if (claimed_) throw UsageError("psim::Simulation::distribute after the simulation ran");
  if (owned.size() != processes_.size()) {
    throw UsageError("psim::Simulation::distribute: " + std::to_string(owned.size()) + " ownership entries for " +
                     std::to_string(processes_.size()) + " logical processes");
  }
  check_distributable();
  remote_ = &part;
  for (auto& lp : processes_) {
    lp->stand_in_ = !owned[lp->index_];
    if (lp->stand_in_) lp->phase_ = LogicalProcess::Phase::finished;  // never runs here
  }
}

bool Simulation::owned(const LogicalProcess& lp) const noexcept { return !lp.stand_in_; }

void Simulation::deliver_remote(Link& link, const Message& message) {
  WakeList wakes;
  {
    std::lock_guard theirs(link.to_.mutex_);
    deliver(link, message, wakes);
  }
  wakes.wake_all();
}

void Simulation::advance_remote(LogicalProcess& lp, Time bound) {
  if (!(bound > lp.bound_.load(std::memory_order_relaxed))) return;  // only the part's thread writes it
  lp.bound_.store(bound, std::memory_order_seq_cst);  // then reads waited_ (see Locking)
  if (!lp.waited()) return;
  WakeList wakes;
  send_nulls(lp, bound, wakes);
  wakes.wake_all();
}

Time Simulation::published_bound(const LogicalProcess& lp) const noexcept {
  // Acquire: the messages the LP sent before it published this bound are in the part already.
  return lp.bound_.load(std::memory_order_acquire);
}

void Simulation::stop(std::string why) {
  WakeList wakes;
  {
    AllLocks all(*this, /*may_wait=*/true);
    if (!done_) stopped_ = std::move(why);
    done_ = true;
    restart_all(/*may_wait=*/true, wakes);
  }
  wakes.wake_all();
}

Simulation::Breaking Simulation::break_deadlock(SimulationScheduler& policy, bool may_wait, bool total) {
  if (!total && config_.protocol == Protocol::null_messages) return Breaking::nothing;
  WakeList wakes;
  bool skipped = false;  // an LP to restart was still switching out
  {
    AllLocks all(*this, may_wait);
    if (!all.owns()) return Breaking::busy;
    if (done_) {  // ended: restart the blocked LPs a failing break had to leave
      skipped = !restart_all(may_wait, wakes);
    } else {
      skipped = !decide(policy, may_wait, total, wakes);
    }
  }
  return wake(wakes, skipped);
}

bool Simulation::decide(SimulationScheduler& policy, bool may_wait, bool total, WakeList& wakes) {
  bool skipped = false;
  bool away = false;  // an LP is out of receive after a cancellation: it may receive later
  // The facts (see deadlock_view.hpp). Every event from now on is at or after the floor, the
  // earliest pending message or event being handled anywhere: a message's key always
  // exceeds that of the event that sent it.
  DeadlockView view(*this, policy, total);
  for (auto& lp : processes_) {
    const std::uint32_t i = lp->index_;
    if (lp->phase_ == LogicalProcess::Phase::finished) {
      earliest_[i] = EventKey{kNever};
      continue;
    }
    const EventKey k = lp->earliest_pending();
    earliest_[i] = k;
    if (lp->cancelled_ && lp->phase_ == LogicalProcess::Phase::receiving) away = true;
    if (lp->phase_ == LogicalProcess::Phase::active) {
      view.handled_ = std::min(view.handled_, lp->key_);
    } else if (k < view.earliest_key_) {
      view.second_ = view.earliest_key_;
      view.earliest_key_ = k;
      view.owner_ = i;
    } else {
      view.second_ = std::min(view.second_, k);
    }
  }
  view.floor_ = std::min(view.earliest_key_, view.handled_);
  // The scheduler decides: end (at a total deadlock), or grant. A failure ends the run.
  bool end = false;
  try {
    if (total) end = policy.end_simulation(view);
    if (!end) policy.resolve_deadlock(view);
  } catch (const SchedulerError& e) {
    fail(e.what());
  } catch (...) {
    fail(hook_failure(policy, view, "threw from a deadlock hook: " + exception_text(std::current_exception())));
  }
  if (end) done_ = true;
  if (done_) {
    skipped = !restart_all(may_wait, wakes);
  } else {
    // Restart every blocked LP whose earliest pending message is now granted, at once.
    for (auto& lp : processes_) {
      if (lp->phase_ != LogicalProcess::Phase::blocked) continue;  // it will see its grant
      const EventKey k = earliest_[lp->index_];  // as found above
      if (!(k < lp->grant_limit_) || k.time >= config_.end_time) continue;
      if (!restart(*lp, may_wait, wakes)) skipped = true;
    }
    if (!wakes.empty()) {
      ++(total ? total_deadlocks_ : partial_deadlocks_);
    } else if (total && !away && view.handled_.time == kNever && view.owner_ != DeadlockView::npos) {
      // Every LP is blocked or finished and the scheduler neither granted nor ended: nothing
      // else can move the simulation. (An LP cancelled out of receive, stuck elsewhere, is
      // not the scheduler's failure: halt() falls through to the runtime's Deadlock report.)
      fail(hook_failure(policy, view, "left a total deadlock unresolved: it granted no blocked LP its earliest "
                                      "message and did not end the simulation"));
      restart_all(may_wait, wakes);
    }
  }
  return !skipped;
}

Simulation::Breaking Simulation::wake(WakeList& wakes, bool skipped) {
  const bool woke = !wakes.empty();
  wakes.wake_all();
  return woke ? Breaking::woke : skipped ? Breaking::busy : Breaking::nothing;
}

std::string Simulation::hook_failure(const SimulationScheduler& policy, const DeadlockView& view,
                                     const std::string& what) const {
  std::ostringstream os;
  os << "psim scheduler '" << policy.name() << "' " << (what.empty() ? "failed" : what) << " (at a "
     << (view.total() ? "total" : "partial") << " deadlock, floor t=" << view.floor().time;
  if (view.earliest_owner() != DeadlockView::npos) {
    os << ", logical process '" << processes_[view.earliest_owner()]->name() << "' holding the earliest message";
  }
  os << ")";
  return os.str();
}

std::unique_ptr<SimulationScheduler> Simulation::replace_scheduler(std::unique_ptr<SimulationScheduler> next) {
  if (!next) throw UsageError("psim::Simulation::replace_scheduler: the new scheduler is null");
  std::lock_guard lock(swap_);
  Runtime* rt = scheduler_ != nullptr ? scheduler_->runtime() : nullptr;
  if (rt == nullptr) throw UsageError("psim::Simulation::replace_scheduler: the simulation is not running");
  if (&rt->scheduler() != scheduler_) {
    throw UsageError("psim::Simulation::replace_scheduler: the runtime's scheduler is '" +
                     std::string(rt->scheduler().name()) +
                     "', not this simulation's (replace it through Simulation::replace_scheduler only)");
  }
  if (next->simulation_ != nullptr) {
    throw UsageError("psim::Simulation::replace_scheduler: psim scheduler '" + std::string(next->name()) +
                     "' already served a simulation; make a new one");
  }
  next->simulation_ = this;
  SimulationScheduler* installed = next.get();
  std::unique_ptr<Scheduler> old = rt->replace_scheduler(std::move(next));
  scheduler_ = installed;
  return std::unique_ptr<SimulationScheduler>(static_cast<SimulationScheduler*>(old.release()));
}

SimulationStats Simulation::run(std::unique_ptr<ThreadPool> inner) {
  return run(std::make_unique<SimulationScheduler>(std::move(inner)));
}

SimulationStats Simulation::run(std::unique_ptr<SimulationScheduler> scheduler) {
  Runtime* rt = Runtime::current();
  if (rt == nullptr) throw UsageError("psim::Simulation::run called outside a presto thread");
  if (!scheduler) throw UsageError("psim::Simulation::run: the scheduler is null");
  if (scheduler->simulation_ != nullptr) {
    throw UsageError("psim::Simulation::run: psim scheduler '" + std::string(scheduler->name()) +
                     "' already served a simulation; make a new one");
  }
  if (remote_ != nullptr) check_distributable();  // links may have been added since distribute()
  claim("psim::Simulation::run");
  earliest_.resize(processes_.size());  // for break_deadlock, which must not allocate
  for (auto& lp : processes_) lp->waited_ = std::vector<std::atomic<std::uint64_t>>((lp->outputs_.size() + 63) / 64);
  scheduler->simulation_ = this;
  std::unique_ptr<Scheduler> previous;
  {
    std::lock_guard lock(swap_);
    scheduler_ = scheduler.get();
    previous = rt->replace_scheduler(std::move(scheduler));
  }
  const auto start = Clock::now();
  const std::uint64_t start_ticks = ticks();
  std::exception_ptr failure;
  std::vector<LogicalProcess*> started;  // the owned LPs (all, unless distributed)
  started.reserve(processes_.size());
  try {
    for (auto& lp : processes_) {
      if (lp->stand_in_) continue;
      lp->start();
      started.push_back(lp.get());
    }
  } catch (...) {
    failure = std::current_exception();
  }
  for (LogicalProcess* lp : started) {
    try {
      lp->join();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  const auto stop = Clock::now();
  const std::uint64_t stop_ticks = ticks();
  {
    std::lock_guard lock(swap_);
    rt->replace_scheduler(std::move(previous));  // hands back (and destroys) the simulation's current one
    scheduler_ = nullptr;
  }
  if (failure) std::rethrow_exception(failure);
  if (!failure_.empty()) throw SchedulerError(failure_);
  if (!stopped_.empty()) throw SimulationStopped(stopped_);

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
    s.rewaits += p.rewaits;
    s.passed_on += p.passed_on;
    s.yields += p.yields;
    p.blocked_time = std::chrono::nanoseconds(static_cast<std::int64_t>(static_cast<double>(lp->blocked_ticks_) * ns_per_tick));
    s.blocked_time += p.blocked_time;
    s.processes.push_back(p);
  }
  return s;
}

}  // namespace presto::psim
