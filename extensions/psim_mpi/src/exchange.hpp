#pragma once
// DistributedSimulation::Exchange (private): a rank's communication thread and the RemotePart
// of its Simulation. LP threads hand it the messages they send to other ranks (send); its OS
// thread does every MPI call of the run, in rounds:
//   1. if the local run has ended (finish() was called), this is the last round that sends;
//   2. read the published bound of each owned LP with links to other ranks;
//   3. take each rank's outbox (the messages sent so far: every one sent before the bounds of
//      step 2 were published) and send it, then the bounds that grew, in MPI messages of at
//      most config.batch records (MPI_Isend; the buffers live until MPI_Test says done);
//   4. receive and apply whatever arrived (MPI_Iprobe + MPI_Recv, one tag): messages through
//      Simulation::deliver_remote, bounds through advance_remote, in arrival order.
// Step 1's last round carries a done flag, or a failed flag and the failure's text. The thread
// ends once it has sent that, every send is complete and every other rank's done (or failed)
// flag has arrived: after it, nothing more can arrive on the communicator.
//
// Faults: a received record that names no link or LP of this model, comes from a rank that
// does not own its sender, or arrives earlier than its link's lookahead allows, fails the run
// here (Simulation::stop) and on every rank (the failed flag). An MPI call that fails cannot
// be recovered: the thread prints the error on stderr and calls MPI_Abort.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <presto/spinlock.hpp>
#include <presto/psim/remote_part.hpp>
#include <presto/psim_mpi/distributed_simulation.hpp>

namespace presto::psim_mpi {

class DistributedSimulation::Exchange final : public psim::RemotePart {
 public:
  Exchange(Simulation& sim, MPI_Comm comm, int rank, const std::vector<int>& owner, const DistributedConfig& config);
  ~Exchange() override;

  // RemotePart: from an owned LP's thread (see remote_part.hpp).
  void send(const psim::Link& link, const psim::Message& message) override;

  // From the thread running DistributedSimulation::run (on one rank there is nothing to
  // exchange, and no thread: finish() and join() then do nothing):
  void start();
  // The local run ended; `failure` is its error ("" if none). The last round follows.
  void finish(const std::string& failure);
  // Waits for the thread to end (see above).
  void join();
  // After join(): this rank's failure (from finish() or found by the thread), and the first
  // other rank's ("rank R: text"), "" if none.
  const std::string& failure() const noexcept { return failure_; }
  const std::string& remote_failure() const noexcept { return remote_failure_; }
  // After join(): the thread's counters.
  void add_counters(RankStats& stats) const noexcept;

  // One record on the wire: a message on a link, or an LP's bound.
  struct Record {
    std::uint32_t type;   // kMessage or kBound
    std::uint32_t index;  // the link's index in Simulation::links(), or the LP's
    double time;          // the message's time, or the bound
    double sent_at;
    std::int64_t kind;
    std::int64_t value;
    double real;
    std::uint32_t source;
    std::uint32_t depth;
    std::uint64_t sequence;
  };
  static constexpr std::uint32_t kMessage = 1;
  static constexpr std::uint32_t kBound = 2;

 private:
  struct Outbox {
    presto::Spinlock lock;
    std::vector<Record> records;  // guarded by lock
  };
  struct Boundary {  // an owned LP with links to other ranks
    const LogicalProcess* lp;
    std::vector<int> ranks;
    Time reported = 0;
  };
  struct Flight {  // a send in progress
    MPI_Request request;
    std::vector<std::byte> buffer;
  };

  void loop() noexcept;
  bool round();  // true if it sent or received anything
  void post(int to, const Record* records, std::size_t count, std::uint32_t flags, const std::string& text);
  void complete_sends();
  bool receive();
  void apply(const Record& r, int from);
  // A received record is bad: fails the run here and on every rank.
  void reject(const std::string& what);
  void set_failure(const std::string& what);

  Simulation& sim_;
  MPI_Comm comm_;
  int rank_;
  const std::vector<int>& owner_;
  const DistributedConfig& config_;
  std::unordered_map<const psim::Link*, std::uint32_t> link_index_;
  std::vector<std::unique_ptr<Outbox>> out_;  // by rank
  std::vector<Boundary> boundary_;
  std::vector<std::vector<Record>> batch_;  // by rank: the round's records (the thread's)
  std::vector<Flight> flights_;
  std::vector<std::byte> inbound_;
  std::thread thread_;

  std::atomic<bool> ending_{false};  // finish() was called
  std::mutex failure_lock_;          // failure_ until join()
  std::string failure_;
  std::string remote_failure_;
  bool sent_done_ = false;
  int done_from_ = 0;  // other ranks whose last message arrived

  std::uint64_t remote_messages_ = 0, remote_bounds_ = 0, mpi_messages_ = 0, rounds_ = 0, idle_rounds_ = 0;
};

}  // namespace presto::psim_mpi
