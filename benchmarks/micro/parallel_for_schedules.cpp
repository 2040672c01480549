// parallel_for_schedules: presto::parallel_for's schedules compared on an uneven loop.
//
// The loop computes the lower triangle of C = A * B a row per index: row i costs i + 1 dot
// products, so equal blocks of rows (static) carry unequal work, the case self-scheduling was
// invented for. Each schedule runs on 1 and 2 processors (more with --processors); the
// baseline, measured in the same run, is the same loop run sequentially on one presto thread.
// Prints one JSON line per measurement (benchmarks/support/harness.hpp), then a table of the
// median time per loop, the speedup over the sequential loop and the ratio to static_blocks
// on the same processors. No targets: the figures are reported, not checked.
//
//   parallel_for_schedules [--quick] [--size N] [--processors P[,P...]]

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <presto/presto.hpp>

#include "../support/harness.hpp"

namespace {

struct Matrices {
  int n;
  std::vector<double> a, b, c;
  explicit Matrices(int size) : n(size), a(size * size), b(size * size), c(size * size) {
    for (int i = 0; i < n * n; ++i) {
      a[i] = i % 7 - 3;
      b[i] = i % 5 - 2;
    }
  }
  void row(int i) {  // the lower triangle of row i of a*b
    for (int j = 0; j <= i; ++j) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += a[i * n + k] * b[k * n + j];
      c[i * n + j] = s;
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  int size = 400, repetitions = 7;
  std::vector<std::size_t> processors{1, 2};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      size = 120;
      repetitions = 3;
    } else if (std::strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
      size = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--processors") == 0 && i + 1 < argc) {
      processors.clear();
      for (const char* p = argv[++i]; *p != '\0';) {
        char* end = nullptr;
        processors.push_back(std::strtoul(p, &end, 10));
        p = *end == ',' ? end + 1 : end;
      }
    } else {
      std::printf("usage: %s [--quick] [--size N] [--processors P[,P...]]\n", argv[0]);
      return std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  if (size <= 0 || processors.empty()) return 2;

  Matrices m(size);
  using presto::bench::Result;
  Result sequential;
  {
    presto::Runtime rt{{.processors = 1}};
    rt.run([&] {
      sequential = presto::bench::measure("triangular matmul rows", "sequential", 1, 1, repetitions, [&] {
        for (int i = 0; i < size; ++i) m.row(i);
      }, static_cast<std::uint64_t>(size));
    });
  }
  const std::vector<double> expected = m.c;

  struct Row {
    std::string schedule;
    std::size_t processors;
    Result result;
    double static_ns;
  };
  std::vector<Row> rows;
  bool correct = true;
  for (std::size_t p : processors) {
    presto::Runtime rt{{.processors = p}};
    double static_ns = 0;
    rt.run([&] {
      for (presto::Schedule s : {presto::Schedule::static_blocks(), presto::Schedule::chunked(8),
                                 presto::Schedule::self(), presto::Schedule::guided()}) {
        Result r = presto::bench::measure("triangular matmul rows", "presto parallel_for " + s.describe(), p, 1,
                                          repetitions, [&] { presto::parallel_for(0, size, [&](int i) { m.row(i); }, s); },
                                          static_cast<std::uint64_t>(size));
        if (s.kind() == presto::Schedule::Kind::static_blocks) static_ns = r.median_ns;
        rows.push_back({s.describe(), p, r, static_ns});
        correct = correct && m.c == expected;
      }
    });
  }

  std::printf("\n%-12s %10s %14s %22s %16s\n", "schedule", "processors", "ms per loop", "speedup vs sequential",
              "time / static");
  std::printf("%-12s %10d %14.3f %22s %16s\n", "sequential", 1, sequential.median_ns / 1e6, "1.00x", "-");
  for (const Row& r : rows) {
    std::printf("%-12s %10zu %14.3f %21.2fx %15.2fx\n", r.schedule.c_str(), r.processors, r.result.median_ns / 1e6,
                sequential.median_ns / r.result.median_ns, r.result.median_ns / r.static_ns);
  }
  std::printf("products %s\n", correct ? "checked: all equal to the sequential one" : "WRONG");
  return correct ? 0 : 1;
}
