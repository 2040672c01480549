// presto-matmul: PRESTO's matrix multiplication, decomposed the natural way.
//
// Multiplies two N x N matrices with T threads, each computing a contiguous share of the
// product's elements, for several T: one thread per processor (the decomposition other
// systems force on you), one per row, and one per element (N*N threads: 40,000 for the
// paper's 200 x 200). Every product is checked against a sequential one. The point, as in
// Figure 3 of Bershad, Lazowska and Levy (1988): with cheap threads the natural
// decomposition costs little more than the "optimal" one.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <presto/presto.hpp>

#include "command_line.hpp"

namespace {

struct Options {
  std::size_t size = 200;
  std::size_t processors = 0;  // 0: all hardware threads
  std::vector<std::size_t> threads;  // empty: processors, rows, elements
  int repeat = 5;
};

constexpr const char* usage =
      "usage: %s [--size N] [--processors P] [--threads T[,T...]] [--repeat R]\n"
      "Multiplies two N x N matrices (default 200) with T threads (default: one per processor,\n"
      "one per row, one per element) on P processors (default: all), R times each (default 5),\n"
      "prints the best time of each decomposition and checks every product.\n";

bool parse(int argc, char** argv, Options& o) {
  presto::apps::CommandLine cl{usage};
  cl.option("--size", o.size).processors(o.processors).option("--repeat", o.repeat);
  cl.option("--threads", [&o](const std::string& v) {
    const auto more = presto::apps::parse_list<std::size_t>("--threads", v);
    o.threads.insert(o.threads.end(), more.begin(), more.end());
  });
  if (!cl.parse(argc, argv)) return false;
  if (o.size == 0 || o.repeat <= 0) return cl.error("--size and --repeat must be positive");
  return true;
}

struct Matrix {
  std::size_t n;
  std::vector<double> v;
  explicit Matrix(std::size_t size) : n(size), v(size * size) {}
  double& at(std::size_t i, std::size_t j) { return v[i * n + j]; }
  double at(std::size_t i, std::size_t j) const { return v[i * n + j]; }
};

// The paper's ma_dotproduct: element (i, j) of a*b.
double dot(const Matrix& a, const Matrix& b, std::size_t i, std::size_t j) {
  double s = 0;
  for (std::size_t k = 0; k < a.n; ++k) s += a.at(i, k) * b.at(k, j);
  return s;
}

// Multiplies with `threads` threads; each computes elements [first, last) in row-major order.
void multiply(const Matrix& a, const Matrix& b, Matrix& c, std::size_t threads) {
  const std::size_t elements = a.n * a.n;
  std::vector<presto::JoinHandle<void>> workers;
  workers.reserve(threads);
  for (std::size_t t = 0; t < threads; ++t) {
    const std::size_t first = elements * t / threads, last = elements * (t + 1) / threads;
    workers.push_back(presto::fork([&, first, last] {
      for (std::size_t e = first; e < last; ++e) c.v[e] = dot(a, b, e / a.n, e % a.n);
    }));
  }
  for (auto& w : workers) w.join();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  presto::Runtime rt{{.processors = o.processors}};
  const std::size_t n = o.size;
  if (o.threads.empty()) o.threads = {rt.processors(), n, n * n};

  Matrix a(n), b(n), expected(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      a.at(i, j) = static_cast<double>((i * 7 + j * 3) % 11) - 5;
      b.at(i, j) = static_cast<double>((i * 5 + j * 13) % 17) - 8;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) expected.at(i, j) = dot(a, b, i, j);
  }

  std::printf("PRESTO matrix multiplication: %zu x %zu, %zu processor(s), best of %d runs\n", n, n,
              rt.processors(), o.repeat);
  std::printf("%12s %12s %16s %8s\n", "threads", "time (ms)", "vs 1/processor", "product");
  double baseline = 0;
  bool all_ok = true;
  for (std::size_t threads : o.threads) {
    threads = std::clamp<std::size_t>(threads, 1, n * n);
    double best = 1e300;
    bool ok = true;
    for (int r = 0; r < o.repeat; ++r) {
      Matrix c(n);
      auto start = std::chrono::steady_clock::now();
      rt.run([&] { multiply(a, b, c, threads); });
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      best = std::min(best, ms);
      ok = ok && c.v == expected.v;
    }
    if (baseline == 0) baseline = best;
    all_ok = all_ok && ok;
    std::printf("%12zu %12.2f %15.2fx %8s\n", threads, best, best / baseline, ok ? "correct" : "WRONG");
  }
  presto::RuntimeStats s = rt.stats();
  std::printf("threads created: %llu control blocks, %llu reused; stacks now cached: %zu\n",
              static_cast<unsigned long long>(s.threads_created), static_cast<unsigned long long>(s.threads_recycled),
              s.stacks_cached);
  return all_ok ? 0 : 1;
}
