// MvaLattice: exact multi-class Mean Value Analysis (Reiser and Lavenberg) as a lattice
// problem: task n (a population vector, class c along dimension c) computes the mean queue
// length Q_k(n) at every station from Q_k(n - e_c) of its predecessors:
//   R_ck(n) = D_ck (delay station) or D_ck (1 + Q_k(n - e_c)),
//   X_c(n) = n_c / (Z_c + sum_k R_ck(n)),   Q_k(n) = sum_c X_c(n) R_ck(n).
// The queue lengths start at -1 and are never negative once computed, so "solved" is the
// paper's "spin until non-negative": station 0's value is stored last, with release order,
// and read with acquire order. A task solved twice at once stores the same values twice
// (the Synchronization-Free method's duplicates), which is harmless: they are atomics.

#pragma once

#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include <presto/psim/mva.hpp>

#include "lattice.hpp"

namespace presto::apps::dynprog {

class MvaLattice {
 public:
  static constexpr std::size_t max_stations = 64;

  // std::invalid_argument if the model has no class, no station or more than max_stations,
  // a negative population, or demands and think times that are not one per class (and
  // station).
  explicit MvaLattice(psim::MvaModel model)
      : model_(std::move(model)), stations_(model_.delay_station.size()), tasks_(extents(model_)),
        queue_(tasks_.size() * stations_) {
    if (stations_ == 0 || stations_ > max_stations) throw std::invalid_argument("MVA needs 1 to 64 stations");
    bool shaped = model_.demand.size() == tasks_.dimensions() &&
                  (model_.think.empty() || model_.think.size() == tasks_.dimensions());
    for (const auto& d : model_.demand) shaped = shaped && d.size() == stations_;
    if (!shaped) throw std::invalid_argument("MVA: demands and think times must be given per class and station");
    reset();
  }

  const Lattice& tasks() const { return tasks_; }

  // Forgets every solution but the empty network's.
  void reset() {
    for (auto& q : queue_) q.store(-1.0, std::memory_order_relaxed);
    for (std::size_t k = stations_; k-- > 0;) queue_[k].store(0.0, std::memory_order_release);
  }

  bool solved(std::size_t t) const { return queue_[t * stations_].load(std::memory_order_acquire) >= 0; }

  void solve(std::size_t t) {
    double total[max_stations] = {};
    double residence[max_stations];
    for (std::size_t c = 0; c < tasks_.dimensions(); ++c) {
      const std::size_t n = tasks_.coordinate(t, c);
      if (n == 0) continue;
      const std::atomic<double>* fewer = &queue_[(t - tasks_.stride(c)) * stations_];
      double cycle = model_.think.empty() ? 0.0 : model_.think[c];
      for (std::size_t k = 0; k < stations_; ++k) {
        const double d = model_.demand[c][k];
        residence[k] = model_.delay_station[k] ? d : d * (1.0 + fewer[k].load(std::memory_order_relaxed));
        cycle += residence[k];
      }
      const double throughput = cycle > 0 ? static_cast<double>(n) / cycle : 0.0;
      for (std::size_t k = 0; k < stations_; ++k) total[k] += throughput * residence[k];
    }
    std::atomic<double>* out = &queue_[t * stations_];
    for (std::size_t k = stations_; k-- > 1;) out[k].store(total[k], std::memory_order_relaxed);
    out[0].store(total[0], std::memory_order_release);
  }

  // Q_k at population vector t (after it is solved).
  double queue(std::size_t t, std::size_t k) const { return queue_[t * stations_ + k].load(std::memory_order_acquire); }
  std::size_t stations() const { return stations_; }
  const psim::MvaModel& model() const { return model_; }

 private:
  static Lattice extents(const psim::MvaModel& m) {
    std::vector<std::size_t> e;
    for (int n : m.population) {
      if (n < 0) throw std::invalid_argument("MVA: negative population");
      e.push_back(static_cast<std::size_t>(n) + 1);
    }
    return Lattice(std::move(e));
  }

  psim::MvaModel model_;
  std::size_t stations_;
  Lattice tasks_;
  std::vector<std::atomic<double>> queue_;  // [task][station]
};

}  // namespace presto::apps::dynprog
