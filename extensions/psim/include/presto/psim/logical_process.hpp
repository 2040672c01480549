#pragma once
// LogicalProcess (LP): a presto Thread with a private simulation clock that communicates with
// other LPs only through timestamped messages on links (PSIM, after Chandy and Misra).
//
// Write a model in one of two styles:
//  - event style (runs in PSIM and in the SequentialSimulator alike): override initialize()
//    (send the first messages) and handle(m) (react to one message); the default body() is
//        initialize(); while (auto m = receive()) handle(*m);
//  - process style (PSIM only): override body() and call receive() and send() yourself.
//
// receive() returns the LP's next message in increasing key order (see message.hpp) across all
// of its input links, and sets now() to its time. It blocks (the LP's thread sleeps on the
// input link holding it back; under null messages a sender may move it, asleep, to another of
// its inputs that holds it back instead, so a Thread::wakeup override may see a link other than
// the one it went to sleep on) until no earlier message can still arrive: until every input
// link's clock has passed the message's time, or PSIM has proved the message safe while
// breaking a deadlock. It returns std::nullopt once no message before the simulation's end
// time can arrive; the LP's body should then return.
//
// receive(token) is receive() honouring a presto::StopToken (presto/stop_token.hpp). The token
// is consulted only when the LP would sleep: a message that is already safe is returned even if
// a stop was requested. A stop requested before the call or while the LP sleeps makes it throw
// presto::Cancelled naming the input link holding the LP back, the LP and its thread
// ("receive of logical process 'sink' at t=3 on psim link 'source->sink' by thread 'sink' (id 5)
// was cancelled: ..."). A message that reached the LP first is received (the stop is seen by a
// later receive); one arriving after the stop stays queued: every message is received once, in
// key order, by a later receive. A cancelled LP holds no event: it waits between two events,
// as it did inside receive(), and the engine treats it so (its pending messages count for the
// deadlock breakers; LPs waiting on it wait until it receives again). Until a receive returns
// its next message it may not send or schedule (UsageError: it promised its neighbours nothing
// earlier than that message). Its body may then call receive again, with or without a token;
// return (the LP finishes: its output links are closed, so nobody waits for it, and the
// messages it never received are counted in ProcessStats::unreceived); or let Cancelled
// propagate, which ends the whole simulation like any exception from a body: every other LP's
// receive returns nullopt and Simulation::run rethrows the Cancelled.
//
// send(link, message, delay) sends on one of this LP's output links, to arrive at
// now() + delay; schedule(message, delay) sends to this LP itself without a link. Sending into
// the past (a negative delay, or one shorter than the link's lookahead) raises UsageError
// naming the link and the LP, as does sending on another LP's link, sending or receiving from
// another thread, or sending after receive() returned nullopt.
//
// LPs are created by Simulation::add and run by Simulation::run (or SequentialSimulator::run);
// an LP runs once. Its statistics are read after the run.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <presto/spinlock.hpp>
#include <presto/stop_token.hpp>
#include <presto/thread.hpp>
#include <presto/psim/detail/ready_yield_gate.hpp>
#include <presto/psim/link.hpp>
#include <presto/psim/message.hpp>

namespace presto::psim {

class Simulation;
class SequentialSimulator;

struct ProcessStats {
  std::uint64_t events = 0;            // messages received (scheduled ones included)
  std::uint64_t messages_sent = 0;     // on links
  std::uint64_t scheduled = 0;         // to itself
  std::uint64_t null_messages = 0;     // sent on its output links
  std::uint64_t blocks = 0;            // times receive() slept
  // Of those, times it slept again after a wake-up, with no message received in between: woken
  // by a null message or a message that did not make its next message safe.
  std::uint64_t rewaits = 0;
  // Null messages it took asleep, still held back (by the same link, or moved asleep to the one
  // now holding it back): its sender raised its bound and passed it on to its own waiters
  // instead of waking it (Simulation::send_null).
  std::uint64_t passed_on = 0;
  // Times receive() yielded instead (null messages; on several processors only while the
  // sender holding it back runs, or, for an LP of more than Simulation::kMoveScan inputs, is
  // ready: Simulation::yields_instead)
  std::uint64_t yields = 0;
  // Wall time asleep in receive(), with SimulationConfig::measure_blocked_time (else 0).
  std::chrono::nanoseconds blocked_time{0};
  std::uint64_t deadlock_grants = 0;   // messages it received because PSIM broke a deadlock
  std::uint64_t cancellations = 0;     // receive(token) calls that threw Cancelled
  // Messages before the end time it never received: its body returned early (after a
  // cancellation, say) or the simulation ended early (an LP's exception, Simulation::stop).
  // 0 in a run that reaches its end time.
  std::uint64_t unreceived = 0;
};

class LogicalProcess : public Thread {
 public:
  explicit LogicalProcess(std::string name);
  ~LogicalProcess() noexcept(false) override;

  // The LP's clock: the time of the message it received last (0 before the first).
  Time now() const noexcept { return key_.time; }
  // Its position in the simulation (the order of Simulation::add), from 0.
  std::uint32_t index() const noexcept { return index_; }
  const std::vector<Link*>& inputs() const noexcept { return inputs_; }
  const std::vector<Link*>& outputs() const noexcept { return outputs_; }
  // The output link to `to`, or nullptr.
  Link* link_to(const LogicalProcess& to) const noexcept;
  const ProcessStats& stats() const noexcept { return stats_; }
  // The time of the earliest message this LP held when PSIM last made it ready (restarted it
  // after it blocked; 0 before that): for ready pools that order LPs, such as lowest timestamp
  // first. Readable from any thread, in the dispatch path; a hint, which messages arriving
  // since may have made later than the LP's true next event.
  Time ready_time() const noexcept { return ready_time_.load(std::memory_order_relaxed); }

  void send(Link& link, Message message, Time delay);
  void schedule(Message message, Time delay);
  std::optional<Message> receive();
  std::optional<Message> receive(const StopToken& token);  // see the header comment

 protected:
  virtual void initialize() {}
  virtual void handle(const Message& message) { (void)message; }
  virtual void body();

 private:
  friend class Simulation;
  friend class SequentialSimulator;
  friend class Link;
  friend class DeadlockView;

  enum class Phase { active, receiving, blocked, finished };

  void run() final;
  // The engine's receive (Simulation::receive) as receive()'s optional, once checked.
  std::optional<Message> take(const StopToken* token);
  // UsageError unless `delay` is finite, not negative and (on `link`; nullptr for a message
  // to itself) no shorter than the link's lookahead. The check inline, the message not.
  void check_delay(Time delay, const Link* link) const {
    if (delay >= 0 && delay < kNever && (link == nullptr || delay >= link->lookahead())) [[likely]] return;
    past_error(delay, link);
  }
  [[noreturn, gnu::cold]] void past_error(Time delay, const Link* link) const;
  // Writes `payload`'s model fields and the stamps of a message sent `delay` after now() on
  // `link` into `out`, its place in the queue that takes it. Field by field in place, not a
  // Message returned and copied: a copy reads the fields just written with wider loads, which
  // the store buffer cannot forward (three such stalls took a quarter of the sequential
  // simulator's time on PHOLD).
  void stamp(Message& out, const Message& payload, Time delay, const Link* link) noexcept;
  // UsageError unless the LP's own thread calls `operation` during its simulation (the
  // sequential simulator runs it from its own thread). The check inline, the messages not.
  void check_owner(const char* operation) const {
    if (simulation_ != nullptr && (sequential_ != nullptr || (&Thread::current() == this && phase_ != Phase::finished)))
        [[likely]] {
      return;
    }
    owner_error(operation);
  }
  [[noreturn, gnu::cold]] void owner_error(const char* operation) const;
  [[noreturn]] void misuse(const std::string& what) const;
  [[noreturn, gnu::cold]] void cancelled_send(const char* operation) const;

  Simulation* simulation_ = nullptr;
  SequentialSimulator* sequential_ = nullptr;  // set while the SequentialSimulator runs it
  std::uint32_t index_ = 0;
  bool stand_in_ = false;  // runs in another process (Simulation::distribute)
  std::vector<Link*> inputs_;
  std::vector<Link*> outputs_;
  EventKey key_{};  // of the event being handled; its children's keys exceed it
  std::uint64_t sequence_ = 0;
  ProcessStats stats_;
  std::uint64_t blocked_ticks_ = 0;  // asleep in receive(), in Simulation::ticks()

  // PSIM's state, guarded by mutex_ (see the locking note in simulation.cpp). It is also the
  // spinlock of every input link (Link::ReceiverLock): the LP sleeps on a link with its mutex
  // held, which is let go once the LP is switched out, and whoever holds the mutex may recall
  // the LP from the link it sleeps on.
  class Mutex final : public presto::Spinlock {
   public:
    // The algorithm alone, for a SynchroObject's spinlock, whose caller keeps the count of
    // spinlocks held (see Spinlock).
    void acquire_uncounted() noexcept { acquire(); }
    bool try_acquire_uncounted() noexcept { return try_acquire(); }
    void release_uncounted() noexcept { release(); }
  };
  Mutex mutex_;
  Phase phase_ = Phase::active;
  // Its last receive threw Cancelled and none has returned a message since: it may not send.
  // Written by its own thread with mutex_ held (read by the deadlock breakers).
  bool cancelled_ = false;
  std::vector<Message> pending_;   // heap (LaterKey): taken in, not yet received
  // The receiving side of inputs_[i], contiguous for the horizon's scan: the link's clock (the
  // only copy), what a null message on it adds to its sender's bound, and the null messages
  // it took.
  struct Input {
    Time clock;
    Time lookahead;
    const std::atomic<Time>* sender_bound;
    std::uint64_t null_messages = 0;
  };
  std::vector<Input> in_;
  std::vector<Message> inbox_;     // delivered on any input link, not yet taken in
  EventKey inbox_min_{kNever};     // least key in inbox_
  Time horizon_ = 0;               // <= every input clock (clocks only grow); see refresh_horizon
  std::uint32_t least_ = 0;        // the input whose clock was least at the last full scan
  Time runner_up_ = -kNever;       // <= every other input's clock
  Link* blocked_on_ = nullptr;
  // The link it last yielded on instead of sleeping, and its sender's bound then
  // (Simulation::yields_instead; guarded by mutex_).
  const Link* yielded_on_ = nullptr;
  Time yielded_at_ = 0;
  // Whether its yields to senders waiting in the ready pool let them move
  // (detail/ready_yield_gate.hpp).
  detail::ReadyYieldGate ready_yields_;
  // Read by other LPs without mutex_:
  // Bit i%64 of word i/64 is set while an LP sleeps on outputs_[i]: it is owed a null message
  // when this LP's bound grows. One bitmask, not a flag in each link, so that an LP with no
  // waiter finds that out in one load, and one with waiters loads only their links (PHOLD's
  // 15 output links, one cache line each, were most of the cost of pushing null messages).
  // Sized by Simulation::run; kept under null messages only.
  std::vector<std::atomic<std::uint64_t>> waited_;
  bool waited() const noexcept {
    for (const auto& word : waited_) {
      if (word.load(std::memory_order_seq_cst) != 0) return true;
    }
    return false;
  }
  // Published lower bound on its next event (only grows), on a cache line of its own: other LPs
  // read it at every scan of their inputs, and it shared a line with ready_time_, which
  // whoever makes this LP ready writes, and with fields this LP writes at every event (outbox_,
  // scheduled_): each such write took the line from the bound's readers, bound changed or not.
  // PHOLD on 2 processors, host round trips of 340-375 ns: 995-1,011 against 1,028-1,055 ns
  // an event under null messages, deadlock recovery no slower (docs/benchmarks.md, "Where a
  // target is missed", 2026-12-05 09:13).
  alignas(64) std::atomic<Time> bound_{0};
  alignas(64) std::atomic<Time> ready_time_{0};  // see ready_time(); written under mutex_
  Time announced_ = 0;  // the last bound it published before reading waited_ (guarded by mutex_)
  // Breaking a deadlock proved every message below this key safe for this LP: nothing that
  // is not this LP's own doing can reach it below the key, and its sends to other LPs lower it.
  EventKey grant_limit_{};
  Time min_lookahead_ = kNever;  // least lookahead of its input links
  // Its earliest message taken in or not (with mutex_ held).
  // (Either key returned whole, not through std::min's reference to a temporary, which was
  // stored field by field and read back at once, stalling store forwarding.)
  EventKey earliest_pending() const noexcept {
    if (pending_.empty() || !(pending_.front().key() < inbox_min_)) return inbox_min_;
    return pending_.front().key();
  }
  // Sent while handling the event, on links and to itself; delivered when it next receives.
  std::vector<std::pair<Link*, Message>> outbox_;
  std::vector<Message> scheduled_;
};

}  // namespace presto::psim
