#pragma once
// Link: a one-way channel from one logical process to another: a FIFO of timestamped
// messages and a clock, the sender's promise that no later message on this link will be
// timestamped before it. It is a SynchroObject: a receiver that cannot yet know its next
// message sleeps on the input link that holds it back (the one with the lowest clock), and the
// sender wakes it when a message or a null message moves that clock.
//
// Links are made by Simulation::connect and belong to the simulation. A link's clock starts
// at its lookahead, the least delay of any message sent on it: Simulation::connect's
// `lookahead` is both a promise made by the sender (send() rejects shorter delays) and what
// the null-message protocol adds to the sender's own lower bound.
//
// A link's spinlock (SynchroObject::spin_lock) is its receiver's mutex, which guards the
// link's clock, the receiver's state and its inbox, where the messages of all its input links
// wait to be taken in; a link takes no other (set_spinlock is private here).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <presto/synchro_object.hpp>
#include <presto/psim/message.hpp>

namespace presto::psim {

class LogicalProcess;
class Simulation;

class Link final : public SynchroObject {
 public:
  Link(LogicalProcess& from, LogicalProcess& to, Time lookahead);
  ~Link() noexcept(false) override;

  LogicalProcess& from() const noexcept { return from_; }
  LogicalProcess& to() const noexcept { return to_; }
  Time lookahead() const noexcept { return lookahead_; }
  // The clock, read after (or before) a run: every message sent from now on is at least this.
  Time clock() const noexcept;
  // Messages and null messages sent on it so far.
  std::uint64_t messages() const noexcept { return messages_; }
  std::uint64_t null_messages() const noexcept;

  std::string_view kind() const noexcept override { return "psim link"; }

 private:
  friend class Simulation;
  friend class LogicalProcess;
  class ReceiverLock;  // the spinlock of a link: its receiver's mutex
  using SynchroObject::set_spinlock;  // a link's spinlock is its receiver's mutex, always

  LogicalProcess& from_;
  LogicalProcess& to_;
  Time lookahead_;
  // Guarded by the receiver's mutex (which also guards its clock, kept in to_.in_[slot_]).
  std::uint32_t slot_ = 0;     // its index in to_.inputs_
  std::uint32_t out_slot_ = 0;  // its index in from_.outputs_ (its bit in from_.waited_)
  std::uint64_t messages_ = 0;
};

}  // namespace presto::psim
