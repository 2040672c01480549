// Guide, chapter 4: checking a pool with PRESTO's conformance harness.
// The harness is installed with the library (<presto/testing/pool_conformance.hpp>); it
// runs real runtimes on 1, 2 and 4 processors and throws PoolConformanceFailure, naming the
// check and the seed, on the first violation of the ThreadPool contract.
#include <cstdio>
#include <memory>

#include <presto/testing/pool_conformance.hpp>

#include "urgent_first_pool.hpp"

int main() {
  presto::testing::PoolConformanceOptions options;
  options.threads = 500;  // smaller than the test suite's defaults, to run in a blink
  options.yields = 8;
  options.pairs = 16;
  options.rounds = 50;
  options.replacements = 20;
  try {
    presto::testing::check_pool_conformance([] { return std::make_unique<UrgentFirstPool>(); }, options);
  } catch (const presto::testing::PoolConformanceFailure& e) {
    std::printf("%s\n", e.what());
    return 1;
  }
  std::printf("UrgentFirstPool passed the pool conformance checks\n");
  return 0;
}
