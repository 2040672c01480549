#pragma once
// RemotePart: the hook that makes a Simulation one part of a simulation distributed over
// several processes (extensions/psim_mpi carries it over MPI). Every process builds the whole
// model, with the same LPs and links in the same order; each runs only the LPs it owns. The
// others are *stand-ins*: never started, they stand for an LP that runs elsewhere.
//
//  - A message an owned LP sends on a link to a stand-in is handed to RemotePart::send (on the
//    sending LP's own presto thread, no PSIM lock held, in the order the LP sent its messages)
//    instead of being delivered here; the part carries it to the process that owns the
//    receiver, which calls Simulation::deliver_remote there.
//  - A stand-in's lower bound (what the null-message protocol reads of a sender) is what its
//    owner last reported: the part calls Simulation::advance_remote with the owned LP's
//    Simulation::published_bound. A bound must be reported after every message the LP sent
//    before publishing it (read the bound first, then take the messages sent so far, and
//    deliver them first at the other end): then no message arrives below a clock already raised.
//
// Only Protocol::null_messages can be distributed: deadlock recovery needs one consistent view
// of every LP, which no process has. Simulation::distribute refuses the other protocol, and a
// link of zero lookahead (null messages cannot pass ties, and the total-deadlock safety net
// of SimulationScheduler::halt sees only this process; the part holds a KeepAlive while the
// simulation runs, so the runtime never halts under it).

#include <presto/psim/message.hpp>

namespace presto::psim {

class Link;

class RemotePart {
 public:
  virtual ~RemotePart() = default;
  // A message on `link`, whose receiver is a stand-in, from the sending LP's presto thread
  // while Simulation::run runs, with no PSIM lock held. It must not block for long (an LP's
  // thread waits in it) nor call into the simulation; it may throw, which fails the sending LP
  // (and so the run).
  virtual void send(const Link& link, const Message& message) = 0;
};

}  // namespace presto::psim
