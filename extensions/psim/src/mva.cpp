#include <presto/psim/mva.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <presto/errors.hpp>

namespace presto::psim {

namespace {

void check(const MvaModel& m) {
  const std::size_t classes = m.population.size();
  if (m.demand.size() != classes || (!m.think.empty() && m.think.size() != classes)) {
    throw UsageError("MVA: demand, population and think must have one entry per class");
  }
  for (const auto& d : m.demand) {
    if (d.size() != m.delay_station.size()) throw UsageError("MVA: demand needs one entry per station");
  }
  for (int n : m.population) {
    if (n < 0) throw UsageError("MVA: negative population");
  }
}

double think_of(const MvaModel& m, std::size_t c) { return m.think.empty() ? 0.0 : m.think[c]; }

MvaResult empty_result(std::size_t classes, std::size_t stations) {
  MvaResult r;
  r.throughput.assign(classes, 0.0);
  r.queue.assign(classes, std::vector<double>(stations, 0.0));
  r.residence.assign(classes, std::vector<double>(stations, 0.0));
  return r;
}

}  // namespace

MvaResult exact_mva(const MvaModel& m) {
  check(m);
  const std::size_t C = m.population.size(), K = m.delay_station.size();
  // Mixed-radix index of population vectors; n - e_c has a smaller index than n.
  std::vector<std::size_t> stride(C);
  std::size_t points = 1;
  for (std::size_t c = 0; c < C; ++c) {
    stride[c] = points;
    points *= static_cast<std::size_t>(m.population[c]) + 1;
  }
  std::vector<double> total_queue(points * K, 0.0);  // Q_k(n), summed over classes
  std::vector<int> n(C, 0);
  MvaResult r = empty_result(C, K);
  for (std::size_t index = 0; index < points; ++index) {
    // n is the population vector of `index`.
    for (std::size_t c = 0, rest = index; c < C; ++c) {
      n[c] = static_cast<int>(rest % (static_cast<std::size_t>(m.population[c]) + 1));
      rest /= static_cast<std::size_t>(m.population[c]) + 1;
    }
    MvaResult here = empty_result(C, K);
    for (std::size_t c = 0; c < C; ++c) {
      if (n[c] == 0) continue;
      const std::size_t fewer = index - stride[c];
      double cycle = think_of(m, c);
      for (std::size_t k = 0; k < K; ++k) {
        double d = m.demand[c][k];
        here.residence[c][k] = m.delay_station[k] ? d : d * (1.0 + total_queue[fewer * K + k]);
        cycle += here.residence[c][k];
      }
      here.throughput[c] = cycle > 0 ? n[c] / cycle : 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        here.queue[c][k] = here.throughput[c] * here.residence[c][k];
        total_queue[index * K + k] += here.queue[c][k];
      }
    }
    if (index + 1 == points) r = std::move(here);
  }
  return r;
}

MvaResult schweitzer_mva(const MvaModel& m, double tolerance) {
  check(m);
  const std::size_t C = m.population.size(), K = m.delay_station.size();
  MvaResult r = empty_result(C, K);
  for (std::size_t c = 0; c < C; ++c) {
    for (std::size_t k = 0; k < K; ++k) r.queue[c][k] = static_cast<double>(m.population[c]) / static_cast<double>(K);
  }
  for (r.iterations = 1; r.iterations <= 100000; ++r.iterations) {
    std::vector<double> total(K, 0.0);
    for (std::size_t k = 0; k < K; ++k) {
      for (std::size_t c = 0; c < C; ++c) total[k] += r.queue[c][k];
    }
    double change = 0;
    for (std::size_t c = 0; c < C; ++c) {
      if (m.population[c] == 0) continue;
      const double nc = m.population[c];
      double cycle = think_of(m, c);
      for (std::size_t k = 0; k < K; ++k) {
        double seen = total[k] - r.queue[c][k] / nc;  // the queue an arrival finds
        r.residence[c][k] = m.delay_station[k] ? m.demand[c][k] : m.demand[c][k] * (1.0 + seen);
        cycle += r.residence[c][k];
      }
      r.throughput[c] = cycle > 0 ? nc / cycle : 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        double q = r.throughput[c] * r.residence[c][k];
        change = std::max(change, std::abs(q - r.queue[c][k]));
        r.queue[c][k] = q;
      }
    }
    if (change < tolerance) break;
  }
  return r;
}

}  // namespace presto::psim
