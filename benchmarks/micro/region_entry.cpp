// region_entry: what an allocation policy costs at a parallel region's entry when no
// evaluation is due (issue #15: "near one clock read per region"). On one processor, N times:
//   entry   Runtime::begin_parallel_region() alone
//   region  parallel_for over one index (no fork: the smallest region there is)
// under POLICY fixed, asat or load (eval/interval one hour: after the first region, which
// evaluates, none is due). Prints ns per operation; for instruction counts run it under
// callgrind with N and 2N and divide the difference by N (docs/guide/sharing.md shows how).
//
// Usage: region_entry entry|region fixed|asat|load N

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <presto/presto.hpp>

int main(int argc, char** argv) {
  const std::string op = argc == 4 ? argv[1] : "";
  const std::string policy = argc == 4 ? argv[2] : "";
  const long long n = argc == 4 ? std::atoll(argv[3]) : 0;
  if ((op != "entry" && op != "region") || (policy != "fixed" && policy != "asat" && policy != "load") || n <= 0) {
    std::fputs("usage: region_entry entry|region fixed|asat|load N   (N > 0)\n", stderr);
    return 2;
  }
  using namespace std::chrono_literals;
  std::unique_ptr<presto::AllocationPolicy> p;
  if (policy == "fixed") p = std::make_unique<presto::FixedAllocation>();
  if (policy == "asat") p = std::make_unique<presto::AsatAllocation>(presto::AsatParameters{.eval = 1h});
  if (policy == "load") p = std::make_unique<presto::LoadAllocation>(1h);
  presto::Runtime rt{{.processors = 1, .allocation = std::move(p)}};
  volatile long sink = 0;
  const double ns = rt.run([&] {
    presto::parallel_for(0, 1, [&](int i) { sink = sink + i; });  // the one evaluation
    const auto start = std::chrono::steady_clock::now();
    for (long long k = 0; k < n; ++k) {
      if (op == "entry") {
        rt.begin_parallel_region();
      } else {
        presto::parallel_for(0, 1, [&](int i) { sink = sink + i; });
      }
    }
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
           static_cast<double>(n);
  });
  std::printf("%s %s: %.1f ns per operation\n", op.c_str(), policy.c_str(), ns);
  return 0;
}
