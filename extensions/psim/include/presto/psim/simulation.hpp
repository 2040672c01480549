#pragma once
// Simulation: a PSIM model (logical processes joined by links) and the engine that runs it in
// parallel, one presto thread per LP, with one of two conservative protocols:
//
//  - Protocol::deadlock_recovery (Chandy and Misra, 1981; PSIM's own): LPs block until their
//    next message is safe; no null messages. Deadlocks are broken by the processors: the
//    SimulationPool, asked for a thread when none is ready, and the SimulationScheduler, when
//    the system would halt, find the earliest pending message or event being handled in the
//    whole simulation (the floor) and restart at once every blocked LP whose earliest message
//    is then provably safe: below the floor plus the least lookahead of its input links, or,
//    for the LP holding the earliest message, below every other LP's earliest (which needs no
//    lookahead). That is the default: the SimulationScheduler's hooks decide (see
//    simulation_scheduler.hpp), so a scheduler of yours may resolve deadlocks differently.
//  - Protocol::null_messages (Chandy, Misra and Bryant), with null messages on demand: a null
//    message raises a link's clock to the earliest time its sender could still send on it (the
//    sender's lower bound on its next event, plus the link's lookahead). An LP about to block
//    first pulls the null messages owed on the input links holding its next message back
//    (shared memory lets it read each sender's bound), and sends its own on every output link
//    an LP is blocked on, both when it blocks and each time it takes a message, waking those
//    LPs. Links nobody waits on get no null messages. An LP about to block yields instead
//    while the sender holding it back keeps publishing new bounds and, on several processors,
//    is running (or, for an LP of more than kMoveScan inputs, ready, while such yields let it
//    move: yields_instead). With positive lookahead on every link this never deadlocks (at a
//    standstill the waiting LP with the least horizon would have pulled a clock above it); the
//    scheduler's halt still breaks a total deadlock as a safety net (zero lookahead) and counts
//    it.
//
// Both deliver every LP's messages in the same order as the SequentialSimulator, so a model's
// histories are identical on any number of processors, under any inner pool.
//
//   Simulation sim{{.protocol = Protocol::null_messages, .end_time = 1000}};
//   auto& a = sim.add<Source>("source", ...);  auto& b = sim.add<Sink>("sink");
//   sim.connect(a, b, /*lookahead=*/1.0);
//   SimulationStats s = sim.run();      // from a presto thread; returns after every LP ended
//
// A Simulation runs once (run() or SequentialSimulator::run). Each LP's share of the engine's
// state is guarded by its own spinlock, held for a few hundred nanoseconds per event and never
// across a context switch; only breaking a deadlock takes them all.

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <presto/thread_pool.hpp>
#include <presto/psim/link.hpp>
#include <presto/psim/logical_process.hpp>
#include <presto/psim/random.hpp>  // models draw from psim::Random (docs/guide/psim.md)
#include <presto/psim/remote_part.hpp>

namespace presto::psim {

class DeadlockView;
class SimulationScheduler;

// Simulation::stop ended the run (another process of a distributed simulation failed):
// Simulation::run throws this, with stop()'s reason as what().
class SimulationStopped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Protocol { deadlock_recovery, null_messages };
std::string_view to_string(Protocol protocol) noexcept;

struct SimulationConfig {
  Protocol protocol = Protocol::deadlock_recovery;
  // Messages at or after this time are never received.
  Time end_time = 1000;
  // Debugging a SimulationScheduler: check every message delivered against what its receiver
  // has already handled. One that is earlier means a grant was unsafe: the simulation ends and
  // run() throws SchedulerError naming the scheduler, the LP and both messages. (Every grant is
  // always checked against the safety rule, DeadlockView::safe_limit; this also catches what
  // that rule cannot see.) Costs a key comparison per message.
  bool check_grants = false;
  // Time each LP's sleeps in receive() (ProcessStats::blocked_time, SimulationStats::blocked_time;
  // 0 when off). Two reads of the time-stamp counter a sleep: with no work per event they were
  // 12% of PHOLD's time on one processor of a 2-core Intel Xeon VM (10.0 against 8.8 million
  // events a second), so they are made only when asked for.
  bool measure_blocked_time = false;
};

struct SimulationStats {
  std::uint64_t events = 0;
  std::uint64_t messages = 0;         // on links
  std::uint64_t null_messages = 0;
  std::uint64_t partial_deadlocks = 0;  // broken by the SimulationPool
  std::uint64_t total_deadlocks = 0;    // broken by the SimulationScheduler's halt
  std::uint64_t blocks = 0;
  std::uint64_t rewaits = 0;  // blocks right after a wake-up (ProcessStats::rewaits)
  std::uint64_t passed_on = 0;  // null messages taken asleep (ProcessStats::passed_on)
  std::uint64_t yields = 0;  // receive()s that yielded instead of sleeping (ProcessStats::yields)
  std::chrono::nanoseconds blocked_time{0};  // all LPs' wall time asleep in receive() (measure_blocked_time)
  double seconds = 0;                  // wall time of the run
  std::vector<ProcessStats> processes;  // by LP index
  std::uint64_t deadlocks() const noexcept { return partial_deadlocks + total_deadlocks; }
  double events_per_second() const noexcept { return seconds > 0 ? static_cast<double>(events) / seconds : 0; }
};

class Simulation {
 public:
  explicit Simulation(SimulationConfig config = {});
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;
  ~Simulation();

  // Adds an LP of type P (derived from LogicalProcess), constructed from `args`.
  template <class P, class... Args>
  P& add(Args&&... args) {
    auto lp = std::make_unique<P>(std::forward<Args>(args)...);
    P& ref = *lp;
    adopt(std::move(lp));
    return ref;
  }
  // A link from `from` to `to` (two distinct LPs of this simulation) with the given lookahead.
  Link& connect(LogicalProcess& from, LogicalProcess& to, Time lookahead = 0);

  // Runs the model in PSIM, from a presto thread: installs `scheduler` (a SimulationScheduler
  // or a subclass of yours; see simulation_scheduler.hpp) in the current runtime, starts every
  // LP, waits for all of them, puts the previous scheduler back and returns the statistics. An
  // LP's exception ends the simulation and is rethrown here; a scheduler's failure (a hook
  // that threw, an unsafe grant) ends it too and is thrown as SchedulerError.
  SimulationStats run(std::unique_ptr<SimulationScheduler> scheduler);
  // The same with PSIM's own scheduler, over `inner` (nullptr: a LocalQueuePool).
  SimulationStats run(std::unique_ptr<ThreadPool> inner = nullptr);

  // While run() runs, from any presto thread (an LP's handle() included) or OS thread:
  // installs `next` in place of the simulation's current scheduler through
  // Runtime::replace_scheduler (the ready LPs move into its pool) and returns the previous one
  // once no processor can be inside it. Every LP's history is the same whatever the scheduler
  // and whenever it changes. UsageError if the simulation is not running, or if the runtime's
  // scheduler is no longer this simulation's (replaced behind its back).
  std::unique_ptr<SimulationScheduler> replace_scheduler(std::unique_ptr<SimulationScheduler> next);

  // Under null messages, an LP of at most this many input links that a null message leaves
  // asleep but held back by another input is moved, asleep, to that input by the sender; an LP
  // of more, whose wake-ups cost more, yields (on several processors) while the sender holding
  // it back is running or ready, not only running, as long as such yields let the sender move
  // (a pool that gives the yielding LP straight back, as lowest timestamp first may, teaches it
  // to sleep instead). Neither changes any LP's history.
  static constexpr std::size_t kMoveScan = 4;

  const SimulationConfig& config() const noexcept { return config_; }
  std::size_t size() const noexcept { return processes_.size(); }
  LogicalProcess& process(std::size_t index) const { return *processes_.at(index); }
  const std::vector<std::unique_ptr<Link>>& links() const noexcept { return links_; }

  // --- Distributing the model over processes (see remote_part.hpp; extensions/psim_mpi) ------

  // Before run(): this process runs the LPs i with owned[i]; the others are stand-ins whose
  // messages go to `part` (which must outlive the run). UsageError unless `owned` has one
  // entry per LP, the protocol is null_messages and every link's lookahead is positive.
  void distribute(RemotePart& part, std::vector<bool> owned);
  // Whether this process runs `lp` (true unless distribute() said otherwise).
  bool owned(const LogicalProcess& lp) const noexcept;
  // While run() runs, from any presto thread or OS thread (the part's), with no PSIM lock held:
  // a message `message` on `link`, sent by a stand-in (on its owner's process) to an owned LP.
  // The caller checked that the link is one from a stand-in to an owned LP and that the
  // message respects its lookahead.
  void deliver_remote(Link& link, const Message& message);
  // Likewise: the stand-in `lp`'s owner published `bound` (only the growth counts), which raises
  // its links' clocks here and wakes the owned LPs waiting on them.
  void advance_remote(LogicalProcess& lp, Time bound);
  // From any thread: the bound an owned LP last published (see remote_part.hpp); kNever once it
  // has finished.
  Time published_bound(const LogicalProcess& lp) const noexcept;
  // While run() runs, from any presto thread or OS thread: ends the simulation at once (every
  // LP's receive() returns nullopt) and makes run() throw SimulationStopped(why). A later
  // call, or one after an LP failed, changes nothing.
  void stop(std::string why);

  // --- For SimulationPool and SimulationScheduler -----------------------------------------

  enum class Breaking { woke, nothing, busy };
  // Breaks a (partial or total) deadlock, if there is one, by `policy`'s hooks: asks it (at a
  // total deadlock) whether to end the simulation, or else which LPs to grant what, and makes
  // ready each blocked LP whose earliest pending message is then granted. A hook's failure ends
  // the simulation (run() throws SchedulerError). Called from the dispatch path: never blocks
  // when `may_wait` is false, answering busy if a lock it needs is held (then the caller
  // should try again).
  Breaking break_deadlock(SimulationScheduler& policy, bool may_wait, bool total);

 private:
  // A cheap monotonic tick count for the blocked times (see simulation.cpp).
  static std::uint64_t ticks() noexcept;
  friend class LogicalProcess;
  friend class SequentialSimulator;
  friend class DeadlockView;

  class WakeList;  // LPs to wake after the mutexes are released
  class AllLocks;  // every LP's mutex, in index order

  void adopt(std::unique_ptr<LogicalProcess> lp);
  void check_distributable() const;  // UsageError naming what cannot be distributed
  void claim(const char* by);  // a Simulation runs once
  // With the receiver's mutex held; false (nothing delivered) if check_grants finds `m`
  // earlier than an event its receiver already handled:
  bool deliver(Link& link, const Message& m, WakeList& wakes);
  // Raises an input's clock to its sender's published bound (or to `bound`, read in its
  // place), plus the link's lookahead; returns the clock.
  Time pull_null(LogicalProcess::Input& in);
  Time pull_null(LogicalProcess::Input& in, const std::atomic<Time>& bound);
  // pull_null if the input's clock is at or below `next` (its sender's bound read only then);
  // returns the clock.
  Time pull_owed(LogicalProcess::Input& in, Time next);
  void unblock(LogicalProcess& lp, WakeList& wakes);
  // With lp's own mutex held:
  // Moves the messages delivered to lp into its pending heap (inbox_ not empty).
  void take_in(LogicalProcess& lp);
  // Sets lp's horizon to its least input clock and returns that link (nullptr: no inputs);
  // with null messages, first takes what is owed on the inputs whose clocks are <= next.
  Link* refresh_horizon(LogicalProcess& lp, Time next);
  // Publishes lp's bound (sequentially consistent), to be followed by a look at its waiters.
  void publish_bound(LogicalProcess& lp, Time bound);
  void finish_inputs(LogicalProcess& lp);
  // With no mutex held (each takes the receivers' in turn):
  // Returns the first message check_grants refused (nullptr: none), after delivering the rest.
  const std::pair<Link*, Message>* deliver_sent(LogicalProcess& lp, WakeList& wakes);
  // What check_grants says of `m`, refused on `link` (takes swap_).
  std::string unsafe_delivery(const Link& link, const Message& m);
  // With every mutex held: ends the simulation, for a scheduler's failure `what` ("" for an
  // LP's own, which run() rethrows); the caller restarts the blocked LPs (restart_all).
  void fail(std::string what);
  // With every mutex held: makes a blocked LP ready; with may_wait false, false (nothing done)
  // when that would allocate.
  bool restart(LogicalProcess& lp, bool may_wait, WakeList& wakes);
  // restart() for every blocked LP; false if one was left for a later break.
  bool restart_all(bool may_wait, WakeList& wakes);
  // break_deadlock's work with every mutex held, the simulation not ended: the facts, the
  // policy's decision, the restarts; false if an LP was left for a later break.
  bool decide(SimulationScheduler& policy, bool may_wait, bool total, WakeList& wakes);
  // After the mutexes are released: wakes the LPs listed and says what break_deadlock did.
  static Breaking wake(WakeList& wakes, bool skipped);
  // A hook's failure in words, naming the scheduler and the LP holding the earliest message.
  std::string hook_failure(const SimulationScheduler& policy, const DeadlockView& view, const std::string& what) const;
  // With no mutex held, after publishing `bound` and finding lp waited() on: a null message on
  // every output link an LP is blocked on whose clock it raises (send_null, one link).
  void send_nulls(LogicalProcess& lp, Time bound, WakeList& wakes);
  // With lp's mutex held, under null messages, lp about to sleep on `holding` with its bound
  // published: whether to yield and look again instead (and if so, noted in lp), and whether
  // the sender holding it back waits in the ready pool (the yield then teaches lp's
  // ReadyYieldGate whether it let the sender move).
  enum class Yield { sleep, yield, to_ready };
  static Yield yields_instead(LogicalProcess& lp, const Link& holding);
  // With no mutex held: if `link`'s receiver sleeps on it with a lower clock, raises the clock
  // to bound + lookahead and wakes it; or, with may_pass_on, if the receiver is still held back
  // (by this link, or by another it is moved to: move_wait), leaves it asleep and returns its
  // new bound when that is higher than it had announced (published: its waiters are owed null
  // messages from it). Else -kNever.
  Time send_null(Link& link, Time bound, WakeList& wakes, bool may_pass_on);
  // With r's mutex held, r asleep on `from` and now held back by `to`: moves its sleep there,
  // or returns false if to's sender has published a bound r has not pulled (r's bit on from's
  // sender is then cleared already: the caller wakes r).
  bool move_wait(LogicalProcess& r, Link& from, Link& to);
  // A link's bit in its sender's waited_ words; unwait clears it (its receiver's mutex held).
  static std::uint64_t bit(const Link& link) noexcept;
  static void unwait(Link& link) noexcept;
  // Under null messages, with lp's mutex held, lp about to sleep on `link` (its bound
  // published): sets link's bit, then reads its sender's bound; false, with the bit cleared
  // again, if that bound already raises the link's clock (lp should pull it and look again).
  static bool register_wait(LogicalProcess& lp, Link& link) noexcept;
  void close_outputs(LogicalProcess& lp, WakeList& wakes);

  // `token` (nullptr: none) is LogicalProcess::receive(token)'s. Sets `out` to lp's next message
  // and returns true, or returns false once none before the end time can come. (An out
  // parameter, not an optional: the message is copied once, straight from the heap.)
  bool receive(LogicalProcess& lp, const StopToken* token, Message& out);
  // A stop was requested on the token of lp's receive: wakes lp if it sleeps there.
  void cancel_receive(LogicalProcess& lp) noexcept;
  void ended(LogicalProcess& lp, bool failed);

  SimulationConfig config_;
  std::vector<std::unique_ptr<LogicalProcess>> processes_;
  std::vector<std::unique_ptr<Link>> links_;
  bool claimed_ = false;

  std::mutex swap_;  // run()'s install and restore against replace_scheduler
  SimulationScheduler* scheduler_ = nullptr;  // installed while running (guarded by swap_)
  std::string failure_;  // a scheduler's failure (all mutexes)
  std::string stopped_;  // stop()'s reason (all mutexes)
  RemotePart* remote_ = nullptr;  // set by distribute()

  std::vector<EventKey> earliest_;  // by LP: its earliest pending message (break_deadlock's, under AllLocks)
  bool done_ = false;  // nothing before the end time can happen (or an LP failed); all mutexes
  std::uint64_t partial_deadlocks_ = 0;
  std::uint64_t total_deadlocks_ = 0;
};

}  // namespace presto::psim
