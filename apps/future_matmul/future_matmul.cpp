// presto-future-matmul: matrix multiplication with a future per row (open-environment paper,
// §5.2: "a future is represented by an instance of a class derived from the class Future").
//
// Multiplies two N x N matrices: row i of the product is the value of a Future that computes
// it on its own thread; when_all gathers the rows in order. The product is checked against a
// sequential one, element by element (same summation order, so exactly equal).

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include <presto/futures/future.hpp>
#include <presto/futures/when_all.hpp>
#include <presto/runtime.hpp>

#include "command_line.hpp"

namespace {

struct Options {
  std::size_t size = 200;
  std::size_t processors = 0;  // 0: all hardware threads
  int repeat = 3;
};

constexpr const char* usage =
      "usage: %s [--size N] [--processors P] [--repeat R]\n"
      "Multiplies two N x N matrices (default 200) with one future per row of the product, on P\n"
      "processors (default: all), R times (default 3); prints the best time and checks the product\n"
      "against a sequential one.\n";

bool parse(int argc, char** argv, Options& o) {
  presto::apps::CommandLine cl{usage};
  cl.option("--size", o.size).processors(o.processors).option("--repeat", o.repeat);
  if (!cl.parse(argc, argv)) return false;
  if (o.size == 0 || o.repeat <= 0) return cl.error("--size and --repeat must be positive");
  return true;
}

using Row = std::vector<double>;
using Matrix = std::vector<Row>;

Row row_of_product(const Matrix& a, const Matrix& b, std::size_t i) {
  const std::size_t n = a.size();
  Row r(n, 0.0);
  for (std::size_t j = 0; j < n; ++j) {
    double s = 0;
    for (std::size_t k = 0; k < n; ++k) s += a[i][k] * b[k][j];
    r[j] = s;
  }
  return r;
}

Matrix multiply_with_futures(const Matrix& a, const Matrix& b) {
  std::deque<presto::futures::Future<Row>> rows;  // futures do not move: a deque keeps them put
  for (std::size_t i = 0; i < a.size(); ++i) rows.emplace_back(row_of_product, std::cref(a), std::cref(b), i);
  return presto::futures::when_all(rows).get();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  const std::size_t n = o.size;
  Matrix a(n, Row(n)), b(n, Row(n)), expected(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      a[i][j] = static_cast<double>((i * 7 + j * 3) % 11) - 5;
      b[i][j] = static_cast<double>((i * 5 + j * 13) % 17) - 8;
    }
  }
  for (std::size_t i = 0; i < n; ++i) expected[i] = row_of_product(a, b, i);

  presto::Runtime rt{{.processors = o.processors}};
  std::printf("PRESTO matrix multiplication, one future per row: %zu x %zu, %zu processor(s), best of %d\n", n, n,
              rt.processors(), o.repeat);
  double best = 1e300;
  bool ok = true;
  for (int r = 0; r < o.repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    Matrix c = rt.run([&] { return multiply_with_futures(a, b); });
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    ok = ok && c == expected;
  }
  std::printf("%zu futures per product, best time %.2f ms\n", n, best);
  std::printf("check: product %s the sequential product\n", ok ? "equals" : "DIFFERS FROM");
  return ok ? 0 : 1;
}
