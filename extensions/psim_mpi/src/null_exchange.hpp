#pragma once
// NullMessageExchange (RankProtocol::null_messages): a rank's communication thread, which does
// every MPI call of the run while the LPs run, in rounds:
//   1. if the local run has ended (end() was called), this is the last round that sends;
//   2. read the published bound of each owned LP with links to other ranks;
//   3. take each rank's outbox (the messages sent so far: every one sent before the bounds of
//      step 2 were published) and send it, then the bounds that grew, in MPI messages of at
//      most config.batch records;
//   4. receive and apply whatever arrived, in arrival order: messages through
//      Simulation::deliver_remote, bounds through advance_remote.
// Step 1's last round carries a done flag, or a failed flag and the failure's text. The thread
// ends once it has sent that, every send is complete and every other rank's done (or failed)
// flag has arrived. It holds a KeepAlive meanwhile: the runtime never halts under it.

#include <atomic>
#include <thread>

#include "exchange.hpp"

namespace presto::psim_mpi::detail {

class NullMessageExchange final : public Exchange {
 public:
  NullMessageExchange(Simulation& sim, MPI_Comm comm, int rank, const std::vector<int>& owner,
                      const DistributedConfig& config);
  ~NullMessageExchange() override;

 protected:
  void begin(Runtime& rt) override;  // starts the thread (none on one rank: nothing to exchange)
  std::unique_ptr<psim::SimulationScheduler> scheduler(std::unique_ptr<ThreadPool> inner) override;
  void end(const std::string& failure) override;  // the last round follows; waits for the thread

 private:
  struct Boundary {  // an owned LP with links to other ranks
    const LogicalProcess* lp;
    std::vector<int> ranks;
    Time reported = 0;
  };

  void loop() noexcept;
  bool round();  // true if it sent or received anything

  std::vector<Boundary> boundary_;
  std::vector<std::vector<Record>> batch_;  // by rank: the round's records (the thread's)
  std::thread thread_;
  KeepAlive keep_;
  std::atomic<bool> ending_{false};  // end() was called
  bool sent_done_ = false;
  int done_from_ = 0;  // other ranks whose last message arrived
};

}  // namespace presto::psim_mpi::detail
