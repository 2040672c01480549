// presto::apps::confidence_interval: the mean of independent replications' estimates and the
// half-width of its two-sided confidence interval (Student's t) at a given level (default 99%),
// as the apps that validate analytic models against PSIM simulations report them.
// presto::apps::t_quantile: Student's t quantile for any two-sided level in (0, 1) and any
// degrees of freedom >= 1 (within 1e-9 relative; `normal_df` gives the normal limit).
// presto::apps::bonferroni_level: the level at which each of k figures is checked so that all k
// together are a family-wise statement at the given level; percent_text prints such a level.

#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace presto::apps {

// Degrees of freedom that t_quantile reads as infinite: the standard normal quantile.
inline constexpr std::size_t normal_df = std::numeric_limits<std::size_t>::max();

namespace detail {

inline void check_level(double two_sided_level) {
  if (!(two_sided_level > 0 && two_sided_level < 1)) {
    char text[96];
    std::snprintf(text, sizeof text, "a confidence level must lie strictly between 0 and 1 (e.g. 0.99), not %g",
                  two_sided_level);
    throw std::invalid_argument(text);
  }
}

// P(|T| <= t) for Student's t with `df` degrees of freedom, by the finite series for integer
// df (Abramowitz and Stegun 26.7.3 and 26.7.4) in theta = atan(t / sqrt(df)):
//   df odd:  (2 / pi) (theta + sin theta (c + 2/3 c^3 + (2 4)/(3 5) c^5 + ... up to c^(df-2)))
//   df even: sin theta (1 + 1/2 c^2 + (1 3)/(2 4) c^4 + ... up to c^(df-2)),  c = cos theta.
inline double t_two_sided_probability(double t, std::size_t df) {
  const double theta = std::atan(t / std::sqrt(static_cast<double>(df)));
  const double s = std::sin(theta), c = std::cos(theta), c2 = c * c;
  const double pi = 3.14159265358979323846;
  if (df % 2 == 1) {
    if (df == 1) return 2 * theta / pi;
    double term = c, sum = c;  // term k: c^(2k+1) (2 4 ... 2k) / (3 5 ... (2k+1))
    for (std::size_t k = 1; 2 * k + 1 <= df - 2; ++k) {
      term *= c2 * static_cast<double>(2 * k) / static_cast<double>(2 * k + 1);
      sum += term;
    }
    return 2 / pi * (theta + s * sum);
  }
  double term = 1, sum = 1;  // term k: c^(2k) (1 3 ... (2k-1)) / (2 4 ... 2k)
  for (std::size_t k = 1; 2 * k <= df - 2; ++k) {
    term *= c2 * static_cast<double>(2 * k - 1) / static_cast<double>(2 * k);
    sum += term;
  }
  return s * sum;
}

// The point of [lo, hi] where `below` (true left of it, false right of it) changes, by at most
// 200 bisections, to a relative width of `tolerance`.
template <class Below>
double bisect(double lo, double hi, double tolerance, Below below) {
  for (int i = 0; i < 200 && hi - lo > tolerance * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (below(mid) ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// The standard normal quantile z with P(|Z| <= z) = level, by bisection on erfc.
inline double normal_two_sided_quantile(double level) {
  const double tail = 1 - level;  // P(|Z| > z) = erfc(z / sqrt 2)
  return bisect(0, 40, 1e-15, [tail](double z) { return std::erfc(z / std::sqrt(2.0)) > tail; });
}

}  // namespace detail

// Student's t quantile t with P(|T| <= t) = two_sided_level for `df` degrees of freedom (df =
// normal_df: the normal quantile). Up to 1000 degrees of freedom, bisection on the exact
// distribution function; beyond, the Cornish-Fisher expansion in 1/df about the normal
// quantile (Abramowitz and Stegun 26.7.5), whose first omitted term is below 1e-12 there.
// std::invalid_argument unless 0 < two_sided_level < 1 and df >= 1.
inline double t_quantile(double two_sided_level, std::size_t df) {
  detail::check_level(two_sided_level);
  if (df == 0) throw std::invalid_argument("Student's t needs at least one degree of freedom");
  if (df > 1000) {
    const double z = detail::normal_two_sided_quantile(two_sided_level);
    if (df == normal_df) return z;
    const double n = static_cast<double>(df), z2 = z * z;
    const double g1 = z * (z2 + 1) / 4;
    const double g2 = z * ((5 * z2 + 16) * z2 + 3) / 96;
    const double g3 = z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / 384;
    const double g4 = z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) / 92160;
    return z + (g1 + (g2 + (g3 + g4 / n) / n) / n) / n;
  }
  double lo = 0, hi = 1;
  while (detail::t_two_sided_probability(hi, df) < two_sided_level) {
    lo = hi;
    hi *= 2;
    if (hi > 1e300) return hi;  // a level so close to 1 that double cannot tell
  }
  return detail::bisect(lo, hi, 1e-13,
                        [&](double t) { return detail::t_two_sided_probability(t, df) < two_sided_level; });
}

// Student's t quantile for a two-sided 99% interval with `df` degrees of freedom.
inline double t99(std::size_t df) { return t_quantile(0.99, df); }

// The level at which each of `figures` checks is made so that all of them together hold with
// family-wise probability at least `family_level` (Bonferroni): 1 - (1 - family_level) / figures.
inline double bonferroni_level(double family_level, std::size_t figures) {
  detail::check_level(family_level);
  if (figures == 0) throw std::invalid_argument("a family of checks needs at least one figure");
  return 1 - (1 - family_level) / static_cast<double>(figures);
}

// A level as a percentage whose shortfall from 100% keeps two significant figures, without
// trailing zeros: 0.99 "99", 0.995 "99.5", 0.99875 "99.88", 0.9995 "99.95", 1 - 0.01/21 "99.952".
inline std::string percent_text(double level) {
  detail::check_level(level);
  const int decimals = std::max(0, static_cast<int>(std::floor(-std::log10(100 * (1 - level)) + 1e-9)) + 2);
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", decimals, 100 * level);
  std::string s = text;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

struct Interval {
  double mean = 0, half_width = 0;
  bool contains(double x) const { return std::abs(x - mean) <= half_width; }
};

// The mean of `samples` and the half-width of its two-sided interval at `level` (Student's t
// with n - 1 degrees of freedom). std::invalid_argument with fewer than two samples or a level
// outside (0, 1).
inline Interval confidence_interval(const std::vector<double>& samples, double level = 0.99) {
  const std::size_t n = samples.size();
  if (n < 2) throw std::invalid_argument("a confidence interval needs at least two replications");
  double mean = 0, var = 0;
  for (double x : samples) mean += x / static_cast<double>(n);
  for (double x : samples) var += (x - mean) * (x - mean) / static_cast<double>(n - 1);
  return {mean, t_quantile(level, n - 1) * std::sqrt(var / static_cast<double>(n))};
}

}  // namespace presto::apps
