#pragma once
// DistributedSimulation: runs one PSIM model over the ranks of an MPI communicator, one presto
// Runtime per rank, each rank running its share of the LPs on its own processors. The model
// code does not change: every rank builds the same Simulation (same LPs and links, in the
// same order), and run() takes the place of Simulation::run:
//
//   presto::psim_mpi::Environment mpi{argc, argv};          // once per process (environment.hpp)
//   presto::Runtime rt{{.processors = 2}};
//   rt.run([&] {
//     Simulation sim{{.protocol = Protocol::null_messages, .end_time = 1000}};
//     build_phold(sim, model);                               // the same on every rank
//     DistributedSimulation dist{sim};                       // block partition over the ranks
//     DistributedStats s = dist.run();                       // collective: every rank calls it
//   });
//
// Protocols. Within a rank, PSIM's own engine with null messages on demand (simulation.hpp).
// Across ranks, a link whose receiver runs elsewhere carries its messages through MPI, and the
// ranks keep each other's LPs' clocks by one of two protocols (DistributedConfig::protocol):
//
//  - RankProtocol::null_messages: each LP with such links reports the bound it publishes (its
//    null messages) to the ranks it sends to; the receiving rank's stand-in for the LP takes
//    the bound, so the LPs waiting on it there pull their null messages from it as from a
//    local LP (remote_part.hpp). One communication thread per rank (an OS thread, outside the
//    runtime, holding a KeepAlive) does all the MPI of a run: each round it reads the bounds,
//    takes the messages sent since the last round, and sends them and then the bounds to each
//    rank, one MPI message per rank (split at DistributedConfig::batch records), and delivers
//    what arrived. Messages and bounds from one rank arrive in the order they were sent (MPI's
//    non-overtaking rule on one tag), so a message never arrives below a clock its sender's
//    bound already raised.
//  - RankProtocol::windows (YAWNS, Nicol 1993): the ranks run in windows. When every LP of a
//    rank is blocked or finished (its runtime would halt), the rank sends what its LPs sent to
//    other ranks (one MPI message per neighbour rank per window) and joins an MPI_Iallreduce
//    of the least bound its LPs published and of those messages' times: the global lower bound
//    T on every future event. Every stand-in's bound becomes T, so each rank runs every event
//    before T plus its cross-rank links' lookahead, and halts again. No communication thread.
//
// docs/guide/psim.md ("Across machines") gives the measurements that chose the default
// (null messages) and what distribution costs.
//
// Requirements, checked: Protocol::null_messages and a positive lookahead on every link
// (UsageError from the constructor); the same model on every rank (run() exchanges a hash
// of the LP count, names, links, lookaheads, end time, partition and rank protocol first, and throws
// DistributedError on every rank, listing each rank's counts, if they differ).
//
// Results. Each LP's history is the sequential simulator's, on any number of ranks and
// processors per rank. An LP's state lives on its own rank: read the owned LPs' results
// there (owned(lp)), or gather them. Failures end the run on every rank: see mpi_error.hpp.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include <presto/thread_pool.hpp>
#include <presto/psim/simulation.hpp>
#include <presto/psim_mpi/mpi_error.hpp>

namespace presto::psim_mpi {

namespace detail {
class Exchange;  // the protocol's communication (src/exchange.hpp)
}  // namespace detail

using psim::LogicalProcess;
using psim::Simulation;
using psim::SimulationStats;
using psim::Time;

// How the ranks keep each other's clocks (see above). Within a rank, always PSIM's null messages.
enum class RankProtocol { null_messages, windows };
std::string_view to_string(RankProtocol protocol) noexcept;

struct DistributedConfig {
  // LP index -> rank. Empty: the block partition (LP i on rank i * ranks / LPs, so
  // consecutive LPs share a rank). UsageError unless it has one rank, in [0, ranks), per LP.
  std::vector<int> partition;
  // Across ranks (see above). Null messages by default: measured on PHOLD (docs/guide/psim.md,
  // "Null messages or windows"), with 10 us of work per event, the one case where distributing
  // beat one rank, they ran 1.4-2.4x the windows' events/s on 2 ranks; windows won only where
  // distributing lost anyway (no work per event: 1.1-1.3x on 2 ranks, 3-11x on 4 sharing 2
  // cores), though nearly always at less CPU per event. A window ends only when the rank's runtime
  // would halt: another presto thread of the rank that runs, or a KeepAlive held, during run()
  // holds it back.
  RankProtocol protocol = RankProtocol::null_messages;
  // Most records (messages and bounds) in one MPI message; a round's traffic to a rank is
  // split into messages of at most this many (the batching knob; 1 sends each alone).
  std::size_t batch = 4096;
  // Null messages: the communication thread, finding nothing to do, spins this many rounds
  // (yielding the core) before it sleeps `idle_sleep` per round: latency against a core's
  // worth of polling. Measured with presto-phold-mpi on 2 ranks of a 2-core machine
  // (docs/guide/psim.md): spinning took the cores the LPs needed (200 spins, 20 us: 3x slower
  // than 0 spins, 5 us). Where each rank has a core to spare, spinning (e.g. 1000) lowers the
  // latency.
  std::uint32_t idle_spins = 0;
  std::chrono::microseconds idle_sleep{5};
  // Windows: a rank waiting for a window's MPI to complete polls this many times (yielding the
  // core) before it sleeps `idle_sleep` per poll. Its own LPs are idle meanwhile, so spinning
  // costs only what else shares its cores; a sleep costs a wake-up, which on a loaded machine
  // waits for the core (measured on 2 ranks under load: 0 spins ran at a third of 1000's rate).
  std::uint32_t window_spins = 1000;
};

// What one rank did (DistributedStats::ranks, gathered on every rank).
struct RankStats {
  std::uint64_t lps = 0;              // owned
  std::uint64_t events = 0;
  std::uint64_t local_null_messages = 0;  // taken by owned LPs (pulled or pushed), from any sender
  std::uint64_t remote_messages = 0;  // events sent to other ranks
  std::uint64_t remote_bounds = 0;    // bounds (null messages) sent to other ranks
  std::uint64_t mpi_messages = 0;     // MPI messages (batches) sent
  std::uint64_t rounds = 0;           // communication rounds (windows: one per window)
  std::uint64_t idle_rounds = 0;      // rounds that found nothing to send or receive
  std::uint64_t blocks = 0;
  double blocked_seconds = 0;         // owned LPs' time asleep in receive(), summed (measure_blocked_time)
  double seconds = 0;                 // this rank's wall time of the run
  double cpu_seconds = 0;             // CPU time of this rank's process over the run (every thread):
                                      // what the run cost, on a machine shared with other work
  double window_seconds = 0;          // windows: wall time between windows (every LP idle while the
                                      // rank exchanges and reduces); 0 under null messages
};

struct DistributedStats {
  SimulationStats local;       // this rank's Simulation::run (stand-ins count nothing)
  std::vector<RankStats> ranks;  // by rank
  double seconds = 0;            // the slowest rank's wall time
  std::uint64_t events() const noexcept;
  std::uint64_t remote_messages() const noexcept;
  std::uint64_t remote_bounds() const noexcept;
  double events_per_second() const noexcept { return seconds > 0 ? static_cast<double>(events()) / seconds : 0; }
};

class DistributedSimulation {
 public:
  // `sim` (built, not run) is run over `comm` (duplicated; MPI_COMM_WORLD by default), whose
  // every rank must make a DistributedSimulation of the same model. MPI must be initialized
  // (Environment). UsageError as stated above.
  explicit DistributedSimulation(Simulation& sim, DistributedConfig config = {}, MPI_Comm comm = MPI_COMM_WORLD);
  DistributedSimulation(const DistributedSimulation&) = delete;
  DistributedSimulation& operator=(const DistributedSimulation&) = delete;
  ~DistributedSimulation();

  int rank() const noexcept { return rank_; }
  int ranks() const noexcept { return ranks_; }
  // The rank that runs LP `index`.
  int owner(std::uint32_t index) const { return owner_.at(index); }
  bool owned(const LogicalProcess& lp) const noexcept { return sim_.owned(lp); }

  // Collective, from a presto thread on every rank: checks that the ranks hold the same model,
  // runs this rank's LPs under a SimulationScheduler (windows: one that runs the windows from
  // its halt()) over `inner` (nullptr: LocalQueuePool),
  // and returns once every rank's LPs have ended. Throws DistributedError on every rank if any
  // failed, MpiError if MPI did before or after the run.
  DistributedStats run(std::unique_ptr<ThreadPool> inner = nullptr);

 private:
  void setup();  // the constructor's work after duplicating the communicator

  Simulation& sim_;
  DistributedConfig config_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int ranks_ = 1;
  std::vector<int> owner_;
  std::unique_ptr<detail::Exchange> exchange_;
};

}  // namespace presto::psim_mpi
