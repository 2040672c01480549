// Guide, chapter 2: loops. presto::parallel_for multiplies two matrices a row per index,
// under each of its schedules, and checks every product against a sequential one.
#include <cstdio>
#include <vector>

#include <presto/presto.hpp>

int main() {
  const int n = 60;
  std::vector<double> a(n * n), b(n * n), expected(n * n);
  for (int i = 0; i < n * n; ++i) {
    a[i] = i % 7 - 3;
    b[i] = i % 5 - 2;
  }
  auto row = [&](std::vector<double>& c, int i) {  // row i of a*b
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += a[i * n + k] * b[k * n + j];
      c[i * n + j] = s;
    }
  };
  for (int i = 0; i < n; ++i) row(expected, i);

  presto::Runtime rt{{.processors = 4}};
  int failures = rt.run([&] {
    int failed = 0;
    for (presto::Schedule s : {presto::Schedule::static_blocks(), presto::Schedule::chunked(4),
                               presto::Schedule::self(), presto::Schedule::guided()}) {
      std::vector<double> c(n * n);
      presto::parallel_for(0, n, [&](int i) { row(c, i); }, s);
      std::printf("%-10s %s\n", s.describe().c_str(), c == expected ? "ok" : "WRONG");
      failed += c == expected ? 0 : 1;
    }
    return failed;
  });
  return failures == 0 ? 0 : 1;
}
