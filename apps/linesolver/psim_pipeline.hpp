// The software pipeline of pipeline.hpp with its nodes as PSIM logical processes, so that it
// runs on PSIM in one process or, with presto::psim_mpi, with its nodes on MPI ranks (#16: "the
// same solver over the distributed PSIM/MPI transport").
//
// PsimNode offers the message layer's Node interface (compute, send, recv, finish, clock) and
// charges the same costs (message_layer.hpp: s, r_i at arrival, r_h at the receive), but its
// virtual clock is PSIM's simulated time and its messages are PSIM messages on a link whose
// lookahead is the model's latency (positive: distributed PSIM needs lookahead). What the
// shared-memory layer learns by watching its predecessor's published clock, a PsimNode learns
// from PSIM: to be busy until t it schedules itself a timer at t and receives, in time order,
// every arrival before it (each one stretching t by r_i and rescheduling the timer; the
// earlier timer is recognized as stale by its epoch). A payload of n doubles travels as n + 1
// PSIM messages at one time (a header with n, then one double each), delivered in order.
// The first node, which receives nothing, needs no timer: its clock runs ahead of PSIM's and
// its sends carry the difference in their delay.
//
// run_psim_pipeline builds node k as LP k, linked k -> k + 1, runs the Simulation through
// `run` (which returns every node's statistics: NodeStats of the LPs it owns, combined across
// ranks when distributed) and returns them. Every node's statistics equal the shared-memory
// layer's (up to the rounding of summing r_i one interrupt at a time).

#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <presto/psim/logical_process.hpp>
#include <presto/psim/simulation.hpp>

#include "message_layer.hpp"

namespace presto::apps::linesolver {

class PsimNode final : public presto::psim::LogicalProcess {
 public:
  PsimNode(std::string name, const CostModel& costs, std::function<void(PsimNode&)> program)
      : LogicalProcess(std::move(name)), costs_(costs), program_(std::move(program)) {}

  void compute(double us) { busy(us); }

  void send(std::vector<double> payload) {
    if (outputs().empty()) throw std::logic_error("send() on the last node of a pipeline");
    busy(costs_.s + costs_.s_per_byte * bytes(payload));
    presto::psim::Link& out = *outputs().front();
    const double delay = clock_ - now() + costs_.latency;
    LogicalProcess::send(out, {.kind = static_cast<std::int64_t>(payload.size()), .value = -1}, delay);
    for (std::size_t i = 0; i < payload.size(); ++i) {
      LogicalProcess::send(out, {.kind = static_cast<std::int64_t>(payload.size()), .value = static_cast<std::int64_t>(i),
                                 .real = payload[i]},
                           delay);
    }
  }

  std::vector<double> recv() {
    if (inputs().empty()) throw std::logic_error("recv() on the first node of a pipeline");
    const std::size_t j = received_++;
    while (arrived_.size() <= j) next();  // only stale timers and message j can come first
    // (arrived_ grows while the node is busy: index it, never hold a reference.)
    account_receive(
        costs_, j, bytes(arrived_[j].payload), clock_, uncharged_, stats_, [&](std::size_t k) { return arrived_[k].arrival; },
        [&] { return arrived_.size(); }, [] {}, [&](double us) { busy(us); });
    return std::move(arrived_[j].payload);
  }

  NodeStats finish() {
    stats_.completion = clock_;
    return stats_;
  }

  double clock() const noexcept { return clock_; }
  const NodeStats& stats() const noexcept { return stats_; }

 protected:
  void body() override { program_(*this); }

 private:
  struct Arrived {
    double arrival;
    std::vector<double> payload;
  };
  static double bytes(const std::vector<double>& p) { return static_cast<double>(p.size() * sizeof(double)); }

  // Takes PSIM's next message: a timer (returns its epoch) or a fragment (returns -1; a
  // completed payload is appended to arrived_).
  double next() {
    auto m = receive();
    if (!m) throw std::logic_error("pipeline node '" + name() + "': the simulation ended before the pipeline");
    if (m->link == nullptr) return m->real;
    if (m->value < 0) {
      partial_ = Arrived{m->time, {}};
      partial_.payload.reserve(static_cast<std::size_t>(m->kind));
    } else {
      partial_.payload.push_back(m->real);
    }
    if (partial_.payload.size() == static_cast<std::size_t>(m->kind)) arrived_.push_back(std::move(partial_));
    return -1;
  }

  // Busy from the node's clock for `us`, stretched by r_i for every message that arrives
  // before the end (and any not yet charged that arrived exactly at the end of the last).
  void busy(double us) {
    double end = clock_ + us;
    for (; uncharged_ < arrived_.size() && arrived_[uncharged_].arrival < end; ++uncharged_) end += charge();
    if (inputs().empty() || end == clock_) {
      clock_ = end;
      return;
    }
    presto::psim::Message timer{.real = ++epoch_};
    schedule(timer, end - now());
    for (;;) {
      const std::size_t before = arrived_.size();
      const double epoch = next();
      if (epoch == epoch_) break;
      if (arrived_.size() > before && arrived_.back().arrival < end) {
        ++uncharged_;
        end += charge();
        schedule(presto::psim::Message{.real = ++epoch_}, end - now());
      }
    }
    clock_ = end;
  }

  double charge() {
    ++stats_.interrupts;
    ++stats_.interrupts_busy;
    stats_.interrupted += costs_.r_i;
    return costs_.r_i;
  }

  const CostModel& costs_;
  std::function<void(PsimNode&)> program_;
  double clock_ = 0;
  double epoch_ = 0;
  std::vector<Arrived> arrived_;  // every payload taken in, by number
  Arrived partial_{0, {}};
  std::size_t received_ = 0;   // payloads taken by recv()
  std::size_t uncharged_ = 0;  // payloads from here on have not been charged an interrupt
  NodeStats stats_;
};

// See the top of the file. `run(sim, nodes)` runs the built simulation and returns every
// node's statistics; it is called from a presto thread.
template <class Stage, class Run>
std::vector<NodeStats> run_psim_pipeline(const CostModel& costs, std::size_t nodes, std::size_t messages, double padding,
                                         Stage stage, Run run) {
  if (!(costs.latency > 0)) throw std::invalid_argument("a PSIM pipeline needs a positive latency (the links' lookahead)");
  presto::psim::Simulation sim{{.protocol = presto::psim::Protocol::null_messages, .end_time = 1e300}};
  std::vector<PsimNode*> lps;
  for (std::size_t k = 0; k < nodes; ++k) {
    lps.push_back(&sim.add<PsimNode>("pipeline node " + std::to_string(k + 1), costs, [&, k](PsimNode& node) {
      for (std::size_t step = 0; step < messages; ++step) {
        std::vector<double> in = k > 0 ? node.recv() : std::vector<double>{};
        std::vector<double> out = stage(k, step, node, std::move(in));
        if (k + 1 < nodes) node.send(std::move(out));
        if (k == 0 && padding > 0) node.compute(padding);
      }
      node.finish();
    }));
  }
  for (std::size_t k = 0; k + 1 < nodes; ++k) sim.connect(*lps[k], *lps[k + 1], costs.latency);
  return run(sim, lps);
}

}  // namespace presto::apps::linesolver
