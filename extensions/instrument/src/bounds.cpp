#include <presto/instrument/bounds.hpp>

#include <algorithm>
#include <string>

#include <presto/errors.hpp>

namespace presto::instrument {

Bounds bounds(double n, double a) {
  if (!(n >= 1) || !(a >= 1)) {
    throw UsageError("instrument::bounds needs n >= 1 processors and average parallelism A >= 1 (got n = " +
                     std::to_string(n) + ", A = " + std::to_string(a) + ")");
  }
  return Bounds{
      .speedup_lower = n * a / (n + a - 1),
      .speedup_upper = std::min(n, a),
      .efficiency_lower = a / (n + a - 1),
      .efficiency_upper = std::min(1.0, a / n),
  };
}

}  // namespace presto::instrument
