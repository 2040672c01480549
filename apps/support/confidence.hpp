// presto::apps::confidence_interval: the mean of independent replications' estimates and the
// half-width of its two-sided 99% confidence interval (Student's t), as the apps that
// validate analytic models against PSIM simulations report them.

#pragma once

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace presto::apps {

// Student's t quantile for a two-sided 99% interval with `df` degrees of freedom.
inline double t99(std::size_t df) {
  static const double table[] = {63.66, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169,
                                 3.106, 3.055, 3.012, 2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845};
  return df <= 20 ? table[df - 1] : 2.576 + 2.0 / static_cast<double>(df);
}

struct Interval {
  double mean = 0, half_width = 0;
  bool contains(double x) const { return std::abs(x - mean) <= half_width; }
};

// std::invalid_argument with fewer than two samples.
inline Interval confidence_interval(const std::vector<double>& samples) {
  const std::size_t n = samples.size();
  if (n < 2) throw std::invalid_argument("a confidence interval needs at least two replications");
  double mean = 0, var = 0;
  for (double x : samples) mean += x / static_cast<double>(n);
  for (double x : samples) var += (x - mean) * (x - mean) / static_cast<double>(n - 1);
  return {mean, t99(n - 1) * std::sqrt(var / static_cast<double>(n))};
}

}  // namespace presto::apps
