// apps/support/confidence.hpp: Student's t quantile against the published table (Abramowitz and
// Stegun, table 26.10, to its four significant figures) at 90, 95, 99 and 99.9%, the normal limit,
// the old 99% table's values, Bonferroni levels and their printing, intervals at a chosen level,
// and the errors.

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

#include "confidence.hpp"

using presto::apps::bonferroni_level;
using presto::apps::confidence_interval;
using presto::apps::normal_df;
using presto::apps::t_quantile;

TEST_CASE("t_quantile reproduces the published t table", "[apps][confidence]") {
  struct Row {
    std::size_t df;
    double t90, t95, t99, t999;
  };
  const Row table[] = {
      {1, 6.314, 12.706, 63.657, 636.619}, {2, 2.920, 4.303, 9.925, 31.599}, {5, 2.015, 2.571, 4.032, 6.869},
      {10, 1.812, 2.228, 3.169, 4.587},    {30, 1.697, 2.042, 2.750, 3.646}, {120, 1.658, 1.980, 2.617, 3.373},
      {normal_df, 1.645, 1.960, 2.576, 3.291}};
  for (const Row& r : table) {
    INFO("df " << r.df);
    CHECK(t_quantile(0.90, r.df) == Approx(r.t90).epsilon(3e-4));
    CHECK(t_quantile(0.95, r.df) == Approx(r.t95).epsilon(3e-4));
    CHECK(t_quantile(0.99, r.df) == Approx(r.t99).epsilon(3e-4));
    CHECK(t_quantile(0.999, r.df) == Approx(r.t999).epsilon(3e-4));
  }
  // Closed forms: df 1 is Cauchy, t = tan(pi level / 2); df 2, t = sqrt(2 / (1 - level^2) - 2).
  for (double level : {0.9, 0.99, 0.9995, 0.99999}) {
    CHECK(t_quantile(level, 1) == Approx(std::tan(3.14159265358979323846 * level / 2)).epsilon(1e-9));
    CHECK(t_quantile(level, 2) == Approx(std::sqrt(2 / (1 - level * level) - 2)).epsilon(1e-9));
  }
}

TEST_CASE("t_quantile is continuous where it changes method, and tends to the normal", "[apps][confidence]") {
  for (double level : {0.9, 0.99, 0.99999}) {
    // Up to 1000 degrees of freedom the exact distribution, beyond it the Cornish-Fisher series.
    CHECK(t_quantile(level, 1001) == Approx(t_quantile(level, 1000)).epsilon(1e-5));
    CHECK(t_quantile(level, 1001) < t_quantile(level, 1000));
    CHECK(t_quantile(level, 10000000) == Approx(t_quantile(level, normal_df)).epsilon(1e-6));
    for (std::size_t df = 1; df < 60; ++df) CHECK(t_quantile(level, df + 1) < t_quantile(level, df));
  }
  CHECK(t_quantile(0.99999, normal_df) == Approx(4.4172).epsilon(1e-4));
}

TEST_CASE("the 99% table the apps used is kept to its rounding", "[apps][confidence]") {
  const double old_table[] = {63.66, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169,
                              3.106, 3.055, 3.012, 2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845};
  for (std::size_t df = 1; df <= 20; ++df) CHECK(presto::apps::t99(df) == Approx(old_table[df - 1]).epsilon(2e-4));
}

TEST_CASE("Bonferroni levels and intervals at a chosen level", "[apps][confidence]") {
  CHECK(bonferroni_level(0.99, 1) == Approx(0.99));
  CHECK(bonferroni_level(0.99, 20) == Approx(0.9995));
  CHECK(bonferroni_level(0.95, 5) == Approx(0.99));
  CHECK(presto::apps::percent_text(0.99) == "99");
  CHECK(presto::apps::percent_text(0.95) == "95");
  CHECK(presto::apps::percent_text(0.995) == "99.5");
  CHECK(presto::apps::percent_text(bonferroni_level(0.99, 8)) == "99.88");
  CHECK(presto::apps::percent_text(bonferroni_level(0.99, 20)) == "99.95");
  CHECK(presto::apps::percent_text(bonferroni_level(0.99, 21)) == "99.952");
  CHECK(presto::apps::percent_text(0.99995) == "99.995");
  CHECK(presto::apps::percent_text(0.9) == "90");
  const std::vector<double> samples{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};  // mean 5.5, standard error sqrt(55/6 / 10)
  const double se = std::sqrt(55.0 / 6 / 10);
  CHECK(confidence_interval(samples).mean == Approx(5.5));
  CHECK(confidence_interval(samples).half_width == Approx(3.250 * se).epsilon(2e-4));
  CHECK(confidence_interval(samples, 0.95).half_width == Approx(2.262 * se).epsilon(2e-4));
  CHECK(confidence_interval(samples, 0.9995).half_width == Approx(t_quantile(0.9995, 9) * se));
  CHECK(confidence_interval(samples, 0.9995).half_width > confidence_interval(samples).half_width);
}

TEST_CASE("invalid levels, degrees of freedom and samples are refused", "[apps][confidence]") {
  for (double level : {0.0, 1.0, -0.5, 1.5, std::nan("")}) {
    CHECK_THROWS_AS(t_quantile(level, 5), std::invalid_argument);
    CHECK_THROWS_AS(bonferroni_level(level, 5), std::invalid_argument);
    CHECK_THROWS_AS(confidence_interval({1.0, 2.0}, level), std::invalid_argument);
  }
  CHECK_THROWS_WITH(t_quantile(1.5, 5), Catch::Contains("strictly between 0 and 1"));
  CHECK_THROWS_WITH(t_quantile(0.99, 0), Catch::Contains("at least one degree of freedom"));
  CHECK_THROWS_AS(bonferroni_level(0.99, 0), std::invalid_argument);
  CHECK_THROWS_WITH(confidence_interval({1.0}), Catch::Contains("at least two replications"));
}
