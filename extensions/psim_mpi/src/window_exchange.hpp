#pragma once
// WindowExchange (RankProtocol::windows): a windowed conservative protocol across ranks (YAWNS,
// Nicol 1993) on PSIM's engine, with no communication thread and no KeepAlive.
//
// Within a rank the LPs run PSIM's null messages among themselves; a stand-in (an LP another
// rank runs) holds a bound T, so the links from it let its receivers run every event before
// T plus the link's lookahead. When they have, every owned LP is blocked or finished, every
// processor idles and the runtime calls the scheduler's halt(): WindowScheduler::halt runs a
// *window round* there (no LP runs meanwhile):
//   1. this rank's bound: the least bound its LPs published (an LP blocked in receive() has
//      published min(its next event, its inputs' least clock); a finished one, never) and the
//      least time of the messages they sent to other ranks since the last round;
//   2. those messages go out, one MPI message per neighbour rank (one that an owned LP has a
//      link to; split at config.batch records, all parts but the last flagged kMore), and the
//      rank joins an MPI_Iallreduce (MIN) of (its bound, whether it is finished and sent
//      nothing, its rank if it failed);
//   3. it polls (MPI_Test, MPI_Iprobe, the idle policy) until the reduction is done, the last
//      part from every rank with a link to an owned LP has arrived and its own sends are
//      complete: nothing of this round is left in flight;
//   4. T := the reduced bound, every future event anywhere is at or after it (a message is at
//      least its sender's time plus a positive lookahead). The messages received are checked
//      and delivered (only now: an LP woken in the middle of the round could only block again,
//      and its processor would spin on the runtime's halt lock meanwhile), then every
//      stand-in's bound becomes T (Simulation::advance_remote), which wakes the LPs it held back.
// halt() returns once a round has made an LP ready (WindowScheduler counts ready()); otherwise
// the next round follows at once. T grows by at least the least lookahead per round. After its
// LPs have all finished, a rank goes on taking part in rounds from end() (bound: its unsent
// messages only), so that every rank runs the same rounds; the rounds end for all when, in one
// round, every rank is finished and sent nothing (nothing is left in flight anywhere), or when
// a rank reports a failure: its text is broadcast from it, and every rank stops its run.
//
// Rounds alternate between two tags, so that a round's messages cannot be taken for the
// previous round's (a rank can be one round ahead of another, not two: a round ends only after
// the reduction every rank joins).

#include <atomic>
#include <utility>
#include <vector>

#include "exchange.hpp"

namespace presto::psim_mpi::detail {

class WindowExchange;

// PSIM's scheduler, whose halt() runs window rounds (and counts the threads made ready, so that
// it knows when a round has given the processors something to do).
class WindowScheduler final : public psim::SimulationScheduler {
 public:
  WindowScheduler(std::unique_ptr<ThreadPool> inner, WindowExchange& exchange)
      : SimulationScheduler(std::move(inner)), exchange_(exchange) {}
  void ready(Thread& t) override {
    readied_.fetch_add(1, std::memory_order_relaxed);
    SimulationScheduler::ready(t);
  }
  void halt() override;
  std::string_view name() const noexcept override { return "psim window scheduler"; }
  std::uint64_t readied() const noexcept { return readied_.load(std::memory_order_relaxed); }

 private:
  WindowExchange& exchange_;
  std::atomic<std::uint64_t> readied_{0};
};

class WindowExchange final : public Exchange {
 public:
  WindowExchange(Simulation& sim, MPI_Comm comm, int rank, const std::vector<int>& owner,
                 const DistributedConfig& config);

  // From WindowScheduler::halt (every owned LP blocked or finished, every processor idle): runs
  // rounds until one makes a thread here ready; false if the rounds are over and none did.
  bool standstill(const WindowScheduler& scheduler);

 protected:
  void begin(Runtime& rt) override;
  std::unique_ptr<psim::SimulationScheduler> scheduler(std::unique_ptr<ThreadPool> inner) override;
  void end(const std::string& failure) override;  // rounds, as a finished rank, until they are over

 private:
  // One window round (steps 1-4 above). An MPI failure aborts every rank: the others wait in
  // the round's MPI, and none can go on.
  void round(bool finished) noexcept;

  std::vector<int> to_;     // ranks that owned LPs have links to
  int from_count_ = 0;      // ranks with links to owned LPs
  std::vector<LogicalProcess*> owned_, stand_ins_;  // stand-ins with links to owned LPs
  std::vector<Record> batch_;
  Received got_{};
  std::vector<std::pair<int, Record>> held_;  // received this round (from, record), in arrival order
  Time window_ = 0;  // the stand-ins' bound: the last round's T
  bool over_ = false;
};

}  // namespace presto::psim_mpi::detail
