#pragma once
// PHOLD, the standard benchmark of parallel discrete-event simulation (Fujimoto), as a PSIM
// event-style model: `processes` LPs, fully connected by links with the given lookahead, each
// starting with `population` events. An event spins `work` iterations (work_iterations()
// converts a duration), then sends one event to a uniformly chosen other LP with probability
// `remote`, or else schedules it for itself, `lookahead + Exp(mean)` later.

#include <chrono>
#include <cstdint>
#include <vector>

#include <presto/psim/logical_process.hpp>
#include <presto/psim/random.hpp>
#include <presto/psim/simulation.hpp>

namespace presto::psim {

struct PholdConfig {
  std::uint32_t processes = 16;
  std::uint32_t population = 4;  // initial events per LP
  Time lookahead = 1.0;
  double mean = 1.0;             // of the exponential part of each delay
  double remote = 0.25;          // fraction of events sent to another LP
  std::uint64_t work = 0;        // spin iterations per event
  std::uint64_t seed = 1;
  bool record = false;           // keep every LP's history (for tests)
};

// One history entry: what an LP received, in order.
struct HistoryEntry {
  Time time;
  std::uint32_t source;
  std::int64_t value;
  bool operator==(const HistoryEntry&) const = default;
};

class PholdProcess final : public LogicalProcess {
 public:
  PholdProcess(std::string name, const PholdConfig& config, std::uint32_t index);
  const std::vector<HistoryEntry>& history() const noexcept { return history_; }
  std::uint64_t checksum() const noexcept { return checksum_; }

 protected:
  void initialize() override;
  void handle(const Message& m) override;

 private:
  Time delay() noexcept { return config_.lookahead + random_.exponential(config_.mean); }

  const PholdConfig config_;
  Random random_;
  std::vector<HistoryEntry> history_;
  std::uint64_t checksum_ = 0;
};

// Adds the PHOLD model to `sim` (which should have no LPs yet).
void build_phold(Simulation& sim, const PholdConfig& config);

// Spins `iterations` rounds of integer arithmetic; returns a value the caller must use.
std::uint64_t spin(std::uint64_t iterations) noexcept;
// Iterations of spin() that take about `duration` of CPU time on this machine (measured once,
// in thread CPU time).
std::uint64_t work_iterations(std::chrono::nanoseconds duration);

}  // namespace presto::psim
