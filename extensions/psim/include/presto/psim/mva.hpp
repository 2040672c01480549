#pragma once
// Mean Value Analysis of closed, multi-class, product-form queueing networks: the analytic
// oracle PSIM's queueing-network simulations are checked against.
//
// exact_mva: Reiser and Lavenberg's recursion over every population vector n <= N (cost
// K * C * prod(N_c + 1)); schweitzer_mva: Schweitzer's fixed-point approximation
// (Q_ck(N - e_c) ~ (N_c - 1)/N_c Q_ck(N)), cost independent of the populations.

#include <cstddef>
#include <vector>

namespace presto::psim {

struct MvaModel {
  std::vector<bool> delay_station;            // per station: infinite server (no queueing)
  std::vector<std::vector<double>> demand;    // [class][station]: visits x mean service time
  std::vector<int> population;                // per class
  std::vector<double> think;                  // per class: pure delay outside the stations (may be empty)
};

struct MvaResult {
  std::vector<double> throughput;             // per class, cycles per unit time
  std::vector<std::vector<double>> queue;     // [class][station]: mean number present
  std::vector<std::vector<double>> residence; // [class][station]: time per cycle
  int iterations = 0;                         // Schweitzer only
};

MvaResult exact_mva(const MvaModel& model);
MvaResult schweitzer_mva(const MvaModel& model, double tolerance = 1e-10);

}  // namespace presto::psim
