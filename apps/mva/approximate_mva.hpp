// Mean Value Analysis of mixed queueing networks, exact and approximate, in one un-layered
// solver (Zahorjan, Lazowska and Sevcik, "The use of approximations in production
// performance evaluation software": layered approximations interact badly; keep them few and
// in one routine).
//
// A Network has stations (queueing: one server; delay: infinite servers; load-dependent:
// service rate multiplied by rate[j-1] with j customers present, the last entry holding for
// more), closed classes (population, think time, demand per station) and open classes
// (arrival rate, demand per station). Open classes are solved the way the paper requires,
// R = D / (1 - U) (its eq. 2), not as closed classes of infinite population (eq. 1, which
// converges about one customer per iteration near saturation): they take U_k of each
// queueing station, the closed classes see their demands there inflated by 1 / (1 - U_k), and
// an open class's residence is D (1 + Q_k(closed)) / (1 - U_k). Open classes may not visit a
// load-dependent station.
//
// Methods:
//   exact           Reiser and Lavenberg's recursion over every population vector n <= N,
//                   with the marginal queue-length probabilities at load-dependent stations;
//                   cost (and memory) grow as prod(N_c + 1).
//   bard_schweitzer the fixed point Q_ck(N - e_c) ~ (N_c - 1)/N_c Q_ck(N); cost independent
//                   of the populations.
//   linearizer      Chandy and Neuse's Linearizer: Bard-Schweitzer corrected by the
//                   fractional deviations F_lkc, estimated from solutions at N and N - e_c
//                   (three outer steps, each inner solution iterated to convergence: the
//                   paper's lesson that one inner step per outer step fails to converge
//                   in about a quarter of the cases).
// The approximations treat a load-dependent station as Neuse and Chandy do: a single server
// at the rate for the number an arrival finds plus itself, linearly interpolated between
// integer populations.
//
// solve() throws std::invalid_argument for a malformed network (sizes, negative values, a
// saturated station: open utilization >= 1, an open class at a load-dependent station). Pure
// functions; any thread.

#pragma once

#include <string>
#include <vector>

namespace presto::apps::mva {

enum class StationKind { queueing, delay, load_dependent };

struct Station {
  std::string name;
  StationKind kind = StationKind::queueing;
  std::vector<double> rate{};  // load_dependent: rate multiplier with 1, 2, ... customers (positive)
};

struct ClosedClass {
  std::string name;
  int population = 0;
  double think = 0;            // delay outside the stations, per cycle
  std::vector<double> demand;  // per station: visits x mean service time at rate 1
};

struct OpenClass {
  std::string name;
  double arrival_rate = 0;
  std::vector<double> demand;
};

struct Network {
  std::vector<Station> stations;
  std::vector<ClosedClass> closed;
  std::vector<OpenClass> open;
};

enum class Method { exact, bard_schweitzer, linearizer };

const char* to_string(Method m) noexcept;

struct Solution {
  std::vector<double> throughput;              // per closed class
  std::vector<std::vector<double>> residence;  // [closed class][station], per cycle
  std::vector<std::vector<double>> queue;      // [closed class][station], mean number present
  std::vector<std::vector<double>> open_residence;  // [open class][station]
  std::vector<std::vector<double>> open_queue;      // [open class][station]
  long iterations = 0;  // approximations: fixed-point sweeps in all; exact: population vectors solved
  bool converged = true;

  double response(std::size_t c) const;  // closed class c: sum of its residences
};

struct SolveOptions {
  double tolerance = 1e-10;     // largest change of a queue length between sweeps
  long max_iterations = 100000; // per inner solution
};

Solution solve(const Network& network, Method method, const SolveOptions& options = {});

}  // namespace presto::apps::mva
