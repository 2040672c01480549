#pragma once
// detail::Exchange (private): the RemotePart of a rank's Simulation and what both cross-rank
// protocols share: the outboxes LP threads hand their messages to (send), the wire format (a
// header record, records, a failure's text), posting and completing MPI sends, receiving and
// checking what arrived, the failure texts and the counters. A subclass is one protocol:
//
//  - NullMessageExchange (null_exchange.hpp): a communication thread sends messages and bounds
//    in rounds while the LPs run;
//  - WindowExchange (window_exchange.hpp): the ranks exchange messages and reduce a global
//    lower bound whenever their LPs all stand still, from the runtime's halt().
//
// run() is the frame both run in: begin(), Simulation::run under the protocol's scheduler,
// end() with the local failure; afterwards nothing more can arrive on the communicator.
//
// Faults: a received record that names no link or LP of this model, comes from a rank that
// does not own its sender, or arrives earlier than its link's lookahead allows, fails the run
// here (Simulation::stop) and, through the protocol, on every rank. An MPI call that fails
// while the LPs run cannot be recovered: the protocol prints the error on stderr and calls
// MPI_Abort (abort_all).

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <presto/runtime.hpp>
#include <presto/spinlock.hpp>
#include <presto/psim/remote_part.hpp>
#include <presto/psim/simulation_scheduler.hpp>
#include <presto/psim_mpi/distributed_simulation.hpp>

namespace presto::psim_mpi::detail {

class Exchange : public psim::RemotePart {
 public:
  // The protocol config.protocol names.
  static std::unique_ptr<Exchange> make(Simulation& sim, MPI_Comm comm, int rank, const std::vector<int>& owner,
                                        const DistributedConfig& config);
  ~Exchange() override = default;

  // RemotePart: from an owned LP's thread (see remote_part.hpp).
  void send(const psim::Link& link, const psim::Message& message) final;

  // From the thread running DistributedSimulation::run, in `rt`: runs this rank's LPs and the
  // protocol until every rank is done. The local run's statistics (empty if it failed).
  SimulationStats run(Runtime& rt, std::unique_ptr<ThreadPool> inner);
  // After run(): this rank's failure (its LPs', or found by the protocol), and the first other
  // rank's ("rank R: text"), "" if none.
  const std::string& failure() const noexcept { return failure_; }
  const std::string& remote_failure() const noexcept { return remote_failure_; }
  // After run(): the protocol's counters.
  void add_counters(RankStats& stats) const noexcept;

  // One record on the wire: a message on a link, or an LP's bound.
  struct Record {
    std::uint32_t type;   // kMessage or kBound (kHeader: an MPI message's first record)
    std::uint32_t index;  // the link's index in Simulation::links(), or the LP's (kHeader: flags)
    double time;          // the message's time, or the bound
    double sent_at;
    std::int64_t kind;
    std::int64_t value;
    double real;
    std::uint32_t source;  // kHeader: the bytes of failure text after the records
    std::uint32_t depth;
    std::uint64_t sequence;
  };
  static constexpr std::uint32_t kHeader = 0;
  static constexpr std::uint32_t kMessage = 1;
  static constexpr std::uint32_t kBound = 2;
  // A header's flags:
  static constexpr std::uint32_t kDone = 1;    // the sender's last message (null messages)
  static constexpr std::uint32_t kFailed = 2;  // the same, and the sender failed: text follows
  static constexpr std::uint32_t kMore = 4;    // another part of this batch follows (windows)

 protected:
  Exchange(Simulation& sim, MPI_Comm comm, int rank, const std::vector<int>& owner, const DistributedConfig& config);

  // The protocol's frame (see run()):
  virtual void begin(Runtime& rt) = 0;  // before any LP starts
  virtual std::unique_ptr<psim::SimulationScheduler> scheduler(std::unique_ptr<ThreadPool> inner) = 0;
  virtual void end(const std::string& failure) = 0;  // after Simulation::run returned or threw

  int ranks() const noexcept { return static_cast<int>(out_.size()); }
  // Appends the messages sent to rank `to` since the last call to `into`; how many.
  std::size_t take_messages(int to, std::vector<Record>& into);
  // Sends `records` to `to` in MPI messages of at most config.batch records (MPI_Isend; the
  // buffers live until complete_sends finds them sent): every part but the last flagged kMore,
  // the last `flags` and `text`. An empty batch is one header.
  void post_batch(int to, int tag, const std::vector<Record>& records, std::uint32_t flags, const std::string& text);
  // MPI_Test on every send in progress; true once none is left.
  bool complete_sends();
  // Receives one MPI message on `tag` from any rank, if one has arrived; false if none had.
  struct Received {
    int from;
    std::uint32_t flags;
    std::vector<Record> records;  // in the order sent: apply() them in that order
    std::string text;             // kFailed's
  };
  bool receive_one(int tag, Received& got);
  // Checks a received record and delivers it (Simulation::deliver_remote or advance_remote), or
  // rejects it: fails the run here (Simulation::stop) and, through the protocol, on every rank.
  void apply(const Record& r, int from);
  // The idle policy between unproductive polls: spin `spins` times (yielding), then sleep
  // config.idle_sleep each time. `idle` counts the polls since the last productive one.
  void pause(std::uint32_t& idle, std::uint32_t spins) const;
  // Records a failure of this rank (the first one counts).
  void set_failure(const std::string& what);
  // This rank's failure so far ("" if none), from any thread.
  std::string failure_so_far();
  // Another rank's failure (the first one counts), which stops the run here.
  void remote_failed(int from, const std::string& text);

  Simulation& sim_;
  MPI_Comm comm_;
  int rank_;
  const std::vector<int>& owner_;
  const DistributedConfig& config_;
  std::uint64_t remote_messages_ = 0, remote_bounds_ = 0, mpi_messages_ = 0, rounds_ = 0, idle_rounds_ = 0;
  double window_seconds_ = 0;

 private:
  struct Outbox {
    presto::Spinlock lock;
    std::vector<Record> records;  // guarded by lock
  };
  struct Flight {  // a send in progress
    MPI_Request request;
    std::vector<std::byte> buffer;
  };
  void post(int to, int tag, const Record* records, std::size_t count, std::uint32_t flags, const std::string& text);
  void reject(const std::string& what);

  std::unordered_map<const psim::Link*, std::uint32_t> link_index_;
  std::vector<std::unique_ptr<Outbox>> out_;  // by rank
  std::vector<Flight> flights_;
  std::vector<std::byte> inbound_;
  std::mutex failure_lock_;  // failure_ until run() returns
  std::string failure_;
  std::string remote_failure_;
};

// An MPI failure while the LPs run: prints `what` on stderr and calls MPI_Abort on `comm`.
[[noreturn]] void abort_all(MPI_Comm comm, const char* what);

}  // namespace presto::psim_mpi::detail
