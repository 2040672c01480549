#pragma once
// A closed, multi-class queueing network as a PSIM event-style model: one LP per station;
// customers are messages. A station is a single FCFS server with exponential service of a
// class-independent mean, or a delay (infinite-server) station. Each class has a fixed
// population and a cyclic route through distinct stations; moving between stations takes
// `transit` (the links' lookahead, which exact MVA sees as think time). Customers start at
// their route's first station. This is a product-form (BCMP) network, so exact MVA
// (mva.hpp, mva_model()) gives its true means: the oracle the PSIM tests check against.
//
// Statistics are kept from `warmup` to the simulation's end: time-average number of each
// class present at each station, and completions (throughput).

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include <presto/psim/logical_process.hpp>
#include <presto/psim/mva.hpp>
#include <presto/psim/phold.hpp>
#include <presto/psim/random.hpp>
#include <presto/psim/simulation.hpp>

namespace presto::psim {

struct StationSpec {
  std::string name;
  double mean_service = 1.0;
  bool delay = false;  // infinite server
};

struct ClassSpec {
  std::string name;
  int population = 1;
  std::vector<std::uint32_t> route;  // distinct station indices, visited cyclically
};

struct QueueingNetworkConfig {
  std::vector<StationSpec> stations;
  std::vector<ClassSpec> classes;
  Time transit = 0.1;
  Time warmup = 100;
  std::uint64_t seed = 1;
  bool record = false;  // keep every station's history (for tests)
};

class Station final : public LogicalProcess {
 public:
  Station(const QueueingNetworkConfig& config, std::uint32_t index);
  // Mean number of class c present over [warmup, end) and completions of class c in it.
  double mean_number(std::size_t c, Time end) const;
  std::uint64_t completions(std::size_t c) const { return completions_.at(c); }
  const std::vector<HistoryEntry>& history() const noexcept { return history_; }

 private:
  friend void build_queueing_network(Simulation&, const QueueingNetworkConfig&, std::vector<Station*>&);
  void initialize() override;
  void handle(const Message& m) override;
  void arrive(std::int64_t c, std::int64_t customer);
  void account();

  const QueueingNetworkConfig& config_;
  const StationSpec& spec_;
  Random random_;
  std::vector<Link*> next_;  // per class: the link to its next station (nullptr: not visited)
  std::deque<std::pair<std::int64_t, std::int64_t>> queue_;  // FCFS: (class, customer)
  std::vector<int> present_;
  std::vector<double> area_;
  std::vector<std::uint64_t> completions_;
  Time last_ = 0;
  std::vector<HistoryEntry> history_;
};

// Adds the network's stations (in order) and links to `sim`; `stations` receives them.
// `config` must outlive the simulation. UsageError for an invalid route.
void build_queueing_network(Simulation& sim, const QueueingNetworkConfig& config, std::vector<Station*>& stations);

// The network as MVA sees it.
MvaModel mva_model(const QueueingNetworkConfig& config);

// Per-class throughput and [class][station] mean numbers measured by a finished simulation.
struct NetworkMeasures {
  std::vector<double> throughput;
  std::vector<std::vector<double>> queue;
};
NetworkMeasures measure(const QueueingNetworkConfig& config, const std::vector<Station*>& stations, Time end);

}  // namespace presto::psim
