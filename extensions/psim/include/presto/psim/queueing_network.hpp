#pragma once
// A mixed, multi-class queueing network as a PSIM event-style model: one LP per station;
// customers are messages. A station serves FCFS with exponential service of a
// class-independent mean: a single server; or a load-dependent server, whose service rate with
// j customers present is rate[j-1] / mean_service (the last entry holding for more: rates
// 1, 2, ..., c make an M/M/c station); or a delay (infinite-server) station. A station may
// instead serve by preemptive-resume priority (one server; the highest-priority class
// present, FCFS within a class; an arrival of higher priority than the customer in service
// preempts it, and it resumes first among its class), the discipline of MAP's priority
// examples; such a network is not product form.
//
// A class's service time at a station is the station's mean unless the class gives its own
// (`service`, one mean per station of its route; class-dependent means at a FCFS station also
// leave product form).
//
// A closed class has a fixed population and a cyclic route through distinct stations; its
// customers start at the route's first station. An open class (arrival_rate > 0, population
// 0) has a Poisson source at its route's first station and a sink after its last: its
// customers arrive at that rate, visit the route's distinct stations once each and leave.
// Moving between stations takes `transit` (the links' lookahead, which MVA sees as think
// time of a closed class). Every random draw is made by the station whose event it serves,
// from its own generator, so a network's histories are the same for a seed on any number of
// processors. This is a product-form (BCMP) network, so exact MVA gives its true means: the
// oracle the PSIM tests check against (mva_model() for the closed networks of single-server
// and delay stations that psim::exact_mva solves; presto-mva's solver for the rest).
//
// Statistics are kept from `warmup` to the simulation's end: time-average number of each
// class present at each station, completions (throughput), and for open classes the time in
// the network of the customers that left it (transits included).

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
  bool delay = false;       // infinite server
  std::vector<double> rate{};  // non-empty: load-dependent, rate multiplier with 1, 2, ... present
  bool priority = false;       // preemptive-resume priority by ClassSpec::priority (one server)
};

struct ClassSpec {
  std::string name;
  int population = 1;                // closed class; 0 for an open class
  std::vector<std::uint32_t> route;  // distinct station indices: visited cyclically (closed), once (open)
  double arrival_rate = 0;           // > 0: an open class (Poisson arrivals)
  int priority = 0;                  // at priority stations: higher is served first
  std::vector<double> service{};     // non-empty: mean service at each station of the route
  bool open() const noexcept { return arrival_rate > 0; }
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
  // Open class c: customers that left the network here since warmup, and their total time in it.
  std::uint64_t departures(std::size_t c) const { return departures_.at(c); }
  double time_in_network(std::size_t c) const { return time_in_network_.at(c); }
  const std::vector<HistoryEntry>& history() const noexcept { return history_; }

 private:
  friend void build_queueing_network(Simulation&, const QueueingNetworkConfig&, std::vector<Station*>&);
  struct Customer {
    std::int64_t c, id;
    Time entered;  // when it entered the network (open classes)
  };
  void initialize() override;
  void handle(const Message& m) override;
  void arrive(const Customer& customer);
  void depart(const Customer& customer);
  void start_service();  // the customer chosen to serve (re)starts service at the current rate
  std::size_t chosen() const;  // the customer to serve: the head, or the first of the highest priority
  void account();

  const QueueingNetworkConfig& config_;
  const StationSpec& spec_;
  Random random_;
  std::vector<Link*> next_;       // per class: the link to its next station (nullptr: not visited)
  std::vector<bool> sink_;        // per class: open class leaving the network after this station
  std::vector<std::int64_t> arrivals_;  // per open class whose source is here: customers generated
  std::deque<Customer> queue_;    // FCFS
  std::vector<int> present_;
  std::vector<double> area_;
  std::vector<std::uint64_t> completions_, departures_;
  std::vector<double> time_in_network_;
  std::vector<double> mean_;  // per class: its mean service here
  std::size_t serving_ = 0;   // the position in queue_ of the customer in service
  double service_epoch_ = 0;  // the one service end still valid carries this (a restart or a preemption stales it)
  Time last_ = 0;
  std::vector<HistoryEntry> history_;
};

// Adds the network's stations (in order) and links to `sim`; `stations` receives them.
// `config` must outlive the simulation. UsageError for an invalid route.
void build_queueing_network(Simulation& sim, const QueueingNetworkConfig& config, std::vector<Station*>& stations);

// The network as psim::exact_mva sees it. UsageError for an open class or a load-dependent
// station (exact_mva solves closed networks of single-server and delay stations).
MvaModel mva_model(const QueueingNetworkConfig& config);

// Per-class throughput, [class][station] mean numbers and, for open classes, mean time in the
// network (0 for closed classes), measured by a finished simulation.
struct NetworkMeasures {
  std::vector<double> throughput;
  std::vector<std::vector<double>> queue;
  std::vector<double> response;
};
NetworkMeasures measure(const QueueingNetworkConfig& config, const std::vector<Station*>& stations, Time end);

}  // namespace presto::psim
