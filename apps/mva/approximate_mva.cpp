#include "approximate_mva.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>

namespace presto::apps::mva {

namespace {

using Matrix = std::vector<std::vector<double>>;

void check(const Network& n) {
  const std::size_t K = n.stations.size();
  if (K == 0) throw std::invalid_argument("MVA: the network has no station");
  for (const Station& s : n.stations) {
    if (s.kind == StationKind::load_dependent &&
        (s.rate.empty() || std::any_of(s.rate.begin(), s.rate.end(), [](double r) { return !(r > 0); }))) {
      throw std::invalid_argument("MVA: load-dependent station '" + s.name + "' needs positive rates");
    }
  }
  for (const ClosedClass& c : n.closed) {
    if (c.demand.size() != K || c.population < 0 || c.think < 0 ||
        std::any_of(c.demand.begin(), c.demand.end(), [](double d) { return d < 0; })) {
      throw std::invalid_argument("MVA: closed class '" + c.name + "' needs a non-negative population, think time and "
                                  "one non-negative demand per station");
    }
  }
  for (const OpenClass& o : n.open) {
    if (o.demand.size() != K || o.arrival_rate < 0 ||
        std::any_of(o.demand.begin(), o.demand.end(), [](double d) { return d < 0; })) {
      throw std::invalid_argument("MVA: open class '" + o.name + "' needs a non-negative arrival rate and one "
                                  "non-negative demand per station");
    }
    for (std::size_t k = 0; k < K; ++k) {
      if (o.demand[k] > 0 && n.stations[k].kind == StationKind::load_dependent) {
        throw std::invalid_argument("MVA: open class '" + o.name + "' visits load-dependent station '" +
                                    n.stations[k].name + "' (not supported)");
      }
    }
  }
}

// Rate multiplier of a load-dependent station with x >= 1 customers, linear between integers.
double rate_at(const Station& s, double x) {
  auto at = [&](std::size_t j) { return s.rate[std::min(j, s.rate.size()) - 1]; };
  const double floor_x = std::max(1.0, std::floor(x));
  const auto j = static_cast<std::size_t>(floor_x);
  return at(j) + (x - floor_x) * (at(j + 1) - at(j));
}

// The open classes' utilizations and the closed classes' demands they inflate.
struct Prepared {
  std::vector<double> open_utilization;  // per station (queueing stations only)
  Matrix demand;                         // [closed class][station], inflated
};

Prepared prepare(const Network& n) {
  const std::size_t K = n.stations.size();
  Prepared p{std::vector<double>(K, 0.0), {}};
  for (const OpenClass& o : n.open) {
    for (std::size_t k = 0; k < K; ++k) {
      if (n.stations[k].kind == StationKind::queueing) p.open_utilization[k] += o.arrival_rate * o.demand[k];
    }
  }
  for (std::size_t k = 0; k < K; ++k) {
    if (p.open_utilization[k] >= 1) {
      throw std::invalid_argument("MVA: station '" + n.stations[k].name + "' is saturated by the open classes (U = " +
                                  std::to_string(p.open_utilization[k]) + ")");
    }
  }
  for (const ClosedClass& c : n.closed) {
    p.demand.push_back(c.demand);
    for (std::size_t k = 0; k < K; ++k) p.demand.back()[k] /= 1 - p.open_utilization[k];
  }
  return p;
}

// Residence time of a closed class at station k, given the number A an arrival finds there.
double residence_at(const Station& s, double demand, double arrival_queue) {
  switch (s.kind) {
    case StationKind::delay: return demand;
    case StationKind::queueing: return demand * (1 + arrival_queue);
    case StationKind::load_dependent: return demand * (1 + arrival_queue) / rate_at(s, 1 + arrival_queue);
  }
  return demand;
}

// The open classes' results, from the closed classes' queues.
void finish_open(const Network& n, const Prepared& p, Solution& s) {
  const std::size_t K = n.stations.size();
  for (const OpenClass& o : n.open) {
    s.open_residence.emplace_back(K, 0.0);
    s.open_queue.emplace_back(K, 0.0);
    for (std::size_t k = 0; k < K; ++k) {
      double closed_queue = 0;
      for (const auto& q : s.queue) closed_queue += q[k];
      const double r = n.stations[k].kind == StationKind::delay
                           ? o.demand[k]
                           : o.demand[k] * (1 + closed_queue) / (1 - p.open_utilization[k]);
      s.open_residence.back()[k] = r;
      s.open_queue.back()[k] = o.arrival_rate * r;
    }
  }
}

Solution exact(const Network& n, const Prepared& p) {
  const std::size_t C = n.closed.size(), K = n.stations.size();
  std::vector<std::size_t> stride(C);
  std::size_t points = 1, total = 0;
  for (std::size_t c = 0; c < C; ++c) {
    stride[c] = points;
    points *= static_cast<std::size_t>(n.closed[c].population) + 1;
    total += static_cast<std::size_t>(n.closed[c].population);
  }
  std::vector<std::size_t> load_dependent;
  for (std::size_t k = 0; k < K; ++k) {
    if (n.stations[k].kind == StationKind::load_dependent) load_dependent.push_back(k);
  }
  const std::size_t width = total + 1;  // marginal probabilities p_k(j | n), j = 0..total
  if (static_cast<double>(points) * static_cast<double>(K + width * load_dependent.size()) > 2e8) {
    throw std::invalid_argument("exact MVA: the population lattice is too large (" + std::to_string(points) + " points)");
  }
  std::vector<double> queue(points * K, 0.0);
  std::vector<double> marginal(points * width * load_dependent.size(), 0.0);
  for (std::size_t i = 0; i < load_dependent.size(); ++i) marginal[i * width] = 1;  // empty network: p(0) = 1
  Solution s;
  s.throughput.assign(C, 0.0);
  s.residence.assign(C, std::vector<double>(K, 0.0));
  s.queue.assign(C, std::vector<double>(K, 0.0));
  std::vector<int> pop(C);
  for (std::size_t index = 1; index < points; ++index) {
    std::size_t size = 0;
    for (std::size_t c = 0, rest = index; c < C; ++c) {
      pop[c] = static_cast<int>(rest % (static_cast<std::size_t>(n.closed[c].population) + 1));
      rest /= static_cast<std::size_t>(n.closed[c].population) + 1;
      size += static_cast<std::size_t>(pop[c]);
    }
    for (std::size_t c = 0; c < C; ++c) {
      std::fill(s.residence[c].begin(), s.residence[c].end(), 0.0);
      s.throughput[c] = 0;
      if (pop[c] == 0) continue;
      const std::size_t fewer = index - stride[c];
      double cycle = n.closed[c].think;
      for (std::size_t k = 0, i = 0; k < K; ++k) {
        const Station& st = n.stations[k];
        const double d = p.demand[c][k];
        double r = 0;
        if (st.kind == StationKind::load_dependent) {
          const double* before = &marginal[(fewer * load_dependent.size() + i++) * width];
          for (std::size_t j = 1; j <= size; ++j) r += static_cast<double>(j) * d / rate_at(st, static_cast<double>(j)) * before[j - 1];
        } else {
          r = residence_at(st, d, queue[fewer * K + k]);
        }
        s.residence[c][k] = r;
        cycle += r;
      }
      s.throughput[c] = cycle > 0 ? pop[c] / cycle : 0.0;
    }
    for (std::size_t k = 0; k < K; ++k) {
      double q = 0;
      for (std::size_t c = 0; c < C; ++c) q += (s.queue[c][k] = s.throughput[c] * s.residence[c][k]);
      queue[index * K + k] = q;
    }
    for (std::size_t i = 0; i < load_dependent.size(); ++i) {
      const Station& st = n.stations[load_dependent[i]];
      double* here = &marginal[(index * load_dependent.size() + i) * width];
      double busy = 0;
      for (std::size_t j = 1; j <= size; ++j) {
        for (std::size_t c = 0; c < C; ++c) {
          if (pop[c] == 0) continue;
          const double* before = &marginal[((index - stride[c]) * load_dependent.size() + i) * width];
          here[j] += p.demand[c][load_dependent[i]] / rate_at(st, static_cast<double>(j)) * s.throughput[c] * before[j - 1];
        }
        busy += here[j];
      }
      here[0] = 1 - busy;
    }
  }
  s.iterations = static_cast<long>(points);
  return s;
}

// One approximate solution at populations `pop`, with Linearizer's deviations F[l][k][c]
// (all zero: Bard-Schweitzer), iterated to convergence.
struct Core {
  Matrix queue, residence;
  std::vector<double> throughput;
  long iterations = 0;
  bool converged = false;
};

using Deviations = std::vector<std::vector<std::vector<double>>>;

Core core(const Network& n, const Prepared& p, const std::vector<int>& pop, const Deviations& F, const SolveOptions& o) {
  const std::size_t C = n.closed.size(), K = n.stations.size();
  Core r{Matrix(C, std::vector<double>(K, 0.0)), Matrix(C, std::vector<double>(K, 0.0)), std::vector<double>(C, 0.0)};
  for (std::size_t c = 0; c < C; ++c) {
    const auto visited = std::count_if(p.demand[c].begin(), p.demand[c].end(), [](double d) { return d > 0; });
    for (std::size_t k = 0; k < K; ++k) {
      if (p.demand[c][k] > 0) r.queue[c][k] = static_cast<double>(pop[c]) / static_cast<double>(visited);
    }
  }
  Matrix next = r.queue;
  while (r.iterations < o.max_iterations) {
    ++r.iterations;
    double change = 0;
    for (std::size_t c = 0; c < C; ++c) {
      if (pop[c] == 0) continue;
      double cycle = n.closed[c].think;
      for (std::size_t k = 0; k < K; ++k) {
        double arrival = 0;  // the number a class-c arrival finds at k, at population pop - e_c
        for (std::size_t l = 0; l < C; ++l) {
          if (pop[l] == 0) continue;
          arrival += (pop[l] - (l == c ? 1 : 0)) * (r.queue[l][k] / pop[l] + F[l][k][c]);
        }
        r.residence[c][k] = p.demand[c][k] > 0 ? residence_at(n.stations[k], p.demand[c][k], std::max(0.0, arrival)) : 0;
        cycle += r.residence[c][k];
      }
      r.throughput[c] = cycle > 0 ? pop[c] / cycle : 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        next[c][k] = r.throughput[c] * r.residence[c][k];
        change = std::max(change, std::abs(next[c][k] - r.queue[c][k]));
      }
    }
    std::swap(r.queue, next);
    if (change < o.tolerance) {
      r.converged = true;
      break;
    }
  }
  return r;
}

Solution approximate(const Network& n, const Prepared& p, Method m, const SolveOptions& o) {
  const std::size_t C = n.closed.size(), K = n.stations.size();
  std::vector<int> pop;
  for (const ClosedClass& c : n.closed) pop.push_back(c.population);
  Deviations F(C, std::vector<std::vector<double>>(K, std::vector<double>(C, 0.0)));
  long iterations = 0;
  bool converged = true;
  if (m == Method::linearizer) {
    for (int step = 0; step < 3; ++step) {
      const Core full = core(n, p, pop, F, o);
      iterations += full.iterations;
      converged = converged && full.converged;
      // Every solution of this step uses the same deviations; they change only after all.
      std::vector<Core> fewer(C);
      for (std::size_t c = 0; c < C; ++c) {
        if (pop[c] == 0) continue;
        std::vector<int> fewer_pop = pop;
        --fewer_pop[c];
        fewer[c] = core(n, p, fewer_pop, F, o);
        iterations += fewer[c].iterations;
        converged = converged && fewer[c].converged;
      }
      for (std::size_t c = 0; c < C; ++c) {
        for (std::size_t l = 0; l < C && pop[c] > 0; ++l) {
          const int left = pop[l] - (l == c ? 1 : 0);
          for (std::size_t k = 0; k < K; ++k) {
            F[l][k][c] = left > 0 ? fewer[c].queue[l][k] / left - full.queue[l][k] / pop[l] : 0.0;
          }
        }
      }
    }
  }
  const Core final = core(n, p, pop, F, o);
  Solution s{final.throughput, final.residence, final.queue, {}, {}, iterations + final.iterations,
             converged && final.converged};
  return s;
}

}  // namespace

const char* to_string(Method m) noexcept {
  switch (m) {
    case Method::exact: return "exact";
    case Method::bard_schweitzer: return "Bard-Schweitzer";
    case Method::linearizer: return "Linearizer";
  }
  return "?";
}

double Solution::response(std::size_t c) const {
  double sum = 0;
  for (double r : residence.at(c)) sum += r;
  return sum;
}

Solution solve(const Network& network, Method method, const SolveOptions& options) {
  check(network);
  const Prepared prepared = prepare(network);
  Solution s = method == Method::exact ? exact(network, prepared) : approximate(network, prepared, method, options);
  finish_open(network, prepared, s);
  return s;
}

}  // namespace presto::apps::mva
