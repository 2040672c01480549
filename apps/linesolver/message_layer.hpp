// A message layer for software pipelines that charges the costs of Van der Wijngaart,
// Sarukkai and Mehra's model ("Analysis and optimization of software pipeline performance on
// MIMD parallel computers", 1995) to the processor that pays them, in virtual time.
//
//   s    send overhead: the sender is busy for s (+ s_per_byte per byte) at each send;
//   r_i  receive interrupt: every message costs its receiver r_i at the moment it arrives,
//        whatever the receiver is doing (the paper's assumption 4; eqs. 7-8 charge it in the
//        pipeline's fill too): a message that arrives while the receiver computes, sends or
//        handles another stretches that work by r_i; one the receiver is waiting for is
//        paid on arrival, before it is handled;
//   r_h  receive handling: the receiver is busy for r_h (+ r_per_byte per byte) when it takes
//        the message in recv();
//   latency  from the end of the send to the arrival (the model's q).
//
// Each Node is a presto thread with its own virtual clock (microseconds). compute(us),
// send() and recv() advance it by the modelled costs; the data really moves and the work is
// really done, so a program's results are real while its times are the model's, the same on
// any machine and under any schedule (the run is deterministic). That is what lets an
// experiment about a 16-node message-passing machine run on a 2-core shared-memory one.
//
// Synchronization is conservative, as in PSIM: a node that must know every arrival before
// time t waits (yielding) until its predecessor's clock, published after every step, has
// passed t. Messages only flow down the pipeline, so nobody waits for a successor and there
// is no deadlock. A Link has one sender node and one receiver node; payloads are vectors of
// doubles; a Link holds at most `capacity` messages (the number of tasks of the run).

#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <vector>

#include <presto/presto.hpp>

namespace presto::apps::linesolver {

struct CostModel {
  double s = 0, r_i = 0, r_h = 0, latency = 0;  // us
  double s_per_byte = 0, r_per_byte = 0;        // us per payload byte
};

// What a node's time went to, in virtual microseconds.
struct NodeStats {
  double completion = 0;    // the clock when the node finished
  double blocked = 0;       // waiting for a message that had not arrived
  double interrupted = 0;   // r_i paid
  double handling = 0;      // r_h (and per-byte receive cost) paid
  std::size_t interrupts = 0;
  std::size_t interrupts_busy = 0;  // of which arrived during work (compute, send, handling)
  std::size_t max_backlog = 0;  // most messages arrived and not yet received, at a recv()
};

// What recv() does once message j is in, for Node here and PsimNode (psim_pipeline.hpp)
// alike: a message later than the clock was waited for (blocked; the clock moves to its
// arrival, then `moved()`); one not charged while the node was busy costs r_i now; the
// backlog is counted (arrival(k) for k < available()); handling costs r_h plus the per-byte
// cost of `bytes`. busy(us) is the node's own.
template <class Arrival, class Available, class Moved, class Busy>
void account_receive(const CostModel& costs, std::size_t j, double bytes, double& clock, std::size_t& uncharged,
                     NodeStats& stats, Arrival arrival, Available available, Moved moved, Busy busy) {
  if (arrival(j) > clock) {  // waiting for it
    stats.blocked += arrival(j) - clock;
    clock = arrival(j);
    moved();
  }
  if (uncharged <= j) {  // it arrived while the node was waiting, not busy: interrupted now
    uncharged = j + 1;
    ++stats.interrupts;
    stats.interrupted += costs.r_i;
    busy(costs.r_i);
  }
  std::size_t backlog = 0;
  for (std::size_t k = j; k < available() && arrival(k) <= clock; ++k) ++backlog;
  stats.max_backlog = std::max(stats.max_backlog, backlog);
  const double handling = costs.r_h + costs.r_per_byte * bytes;
  stats.handling += handling;
  busy(handling);
}

// One-way channel between two neighbouring nodes. The sender appends, then publishes its
// count (release); the receiver reads the count (acquire) and then the messages below it.
class Link {
 public:
  explicit Link(std::size_t capacity) : messages_(capacity) {}

  struct Message {
    double arrival = 0;
    std::vector<double> payload;
  };

 private:
  friend class Node;
  std::vector<Message> messages_;
  std::atomic<std::size_t> sent_{0};
  // No message sent from now on arrives before this (the sender's clock; infinity once the
  // sender has finished).
  std::atomic<double> bound_{0};
};

class Node {
 public:
  // `in`: the link from the predecessor (nullptr for the first node); `out`: to the successor
  // (nullptr for the last). Used by one presto thread only.
  Node(const CostModel& costs, Link* in, Link* out) : costs_(costs), in_(in), out_(out) {}

  // Busy for `us` of work (plus the interrupts that arrive meanwhile).
  void compute(double us) { busy(us); }

  // Sends `payload` to the successor. std::logic_error without one, or past the link's capacity.
  void send(std::vector<double> payload) {
    if (out_ == nullptr) throw std::logic_error("send() on the last node of a pipeline");
    const std::size_t n = out_->sent_.load(std::memory_order_relaxed);
    if (n == out_->messages_.size()) throw std::logic_error("send(): more messages than the link holds");
    busy(costs_.s + costs_.s_per_byte * bytes(payload));
    out_->messages_[n] = Link::Message{clock_ + costs_.latency, std::move(payload)};
    out_->sent_.store(n + 1, std::memory_order_release);
  }

  // The predecessor's next message. std::logic_error without a predecessor, or if it has
  // finished without sending one.
  std::vector<double> recv() {
    if (in_ == nullptr) throw std::logic_error("recv() on the first node of a pipeline");
    const std::size_t j = received_++;
    wait_for([&] { return in_->sent_.load(std::memory_order_acquire) > j; },
             [&] { return in_->bound_.load(std::memory_order_acquire) == infinity; });
    if (in_->sent_.load(std::memory_order_acquire) <= j) throw std::logic_error("recv(): the predecessor sent no more");
    Link::Message& m = in_->messages_[j];
    account_receive(
        costs_, j, bytes(m.payload), clock_, uncharged_, stats_, [&](std::size_t k) { return in_->messages_[k].arrival; },
        [&] { return in_->sent_.load(std::memory_order_acquire); }, [&] { publish(); }, [&](double us) { busy(us); });
    return std::move(m.payload);
  }

  // Ends the node: its successor learns that nothing more will come. Returns its statistics.
  NodeStats finish() {
    stats_.completion = clock_;
    if (out_ != nullptr) out_->bound_.store(infinity, std::memory_order_release);
    return stats_;
  }

  double clock() const noexcept { return clock_; }

 private:
  static constexpr double infinity = std::numeric_limits<double>::infinity();
  static double bytes(const std::vector<double>& p) { return static_cast<double>(p.size() * sizeof(double)); }

  template <class Ready, class Over>
  void wait_for(Ready ready, Over over) {
    while (!ready() && !over()) presto::this_thread::yield();
  }

  // Busy from now for `us`, extended by r_i for every message that arrives meanwhile.
  void busy(double us) {
    double end = clock_ + us;
    if (in_ != nullptr) {
      for (;;) {
        // Every arrival before `end` is known once the predecessor's clock has passed it.
        wait_for([&] { return in_->bound_.load(std::memory_order_acquire) >= end; }, [] { return false; });
        const std::size_t sent = in_->sent_.load(std::memory_order_acquire);
        std::size_t k = uncharged_;
        while (k < sent && in_->messages_[k].arrival < end) ++k;
        if (k == uncharged_) break;
        const double cost = costs_.r_i * static_cast<double>(k - uncharged_);
        stats_.interrupts += k - uncharged_;
        stats_.interrupts_busy += k - uncharged_;
        stats_.interrupted += cost;
        end += cost;
        uncharged_ = k;
      }
    }
    clock_ = end;
    publish();
  }

  void publish() {
    if (out_ != nullptr) out_->bound_.store(clock_, std::memory_order_release);
  }

  const CostModel& costs_;
  Link* in_;
  Link* out_;
  double clock_ = 0;
  std::size_t received_ = 0;   // messages taken by recv()
  std::size_t uncharged_ = 0;  // messages from here on have not been charged an interrupt
  NodeStats stats_;
};

}  // namespace presto::apps::linesolver
