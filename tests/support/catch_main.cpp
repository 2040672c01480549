// Catch2's main, compiled once for every test executable. With PRESTO_TEST_DELAYS=N set, every
// test case of the process runs under random delays at the library's race points, one point in
// N (support/random_delays.hpp), seeded by the process's seed (PRESTO_SEED): a library built
// without race points (-Drace_points=true) makes that an error rather than a run that tests
// nothing more.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "random_delays.hpp"
#include "test_support.hpp"

int main(int argc, char* argv[]) {
  if (const char* env = std::getenv("PRESTO_TEST_DELAYS"); env != nullptr && *env != '\0') {
    // All digits: std::stoull alone would take "5x" for 5 and "-1" for 2^64 - 1.
    std::uint64_t one_in = 0;
    if (std::string_view digits(env); digits.find_first_not_of("0123456789") == std::string_view::npos) {
      try {
        one_in = std::stoull(env);
      } catch (const std::exception&) {  // out of range
      }
    }
    if (one_in == 0) {
      std::fprintf(stderr, "PRESTO_TEST_DELAYS=%s: expected a positive number N (a delay at one race point in N)\n", env);
      return 2;
    }
    if (!presto::test::install_session_delays(presto::test::seed(), one_in)) {
      std::fprintf(stderr,
                   "PRESTO_TEST_DELAYS=%s: this library has no race points (configure it with -Drace_points=true)\n", env);
      return 2;
    }
    std::fprintf(stderr, "random delays at one race point in %llu, seed %llu (replay roughly: PRESTO_SEED=%llu)\n",
                 static_cast<unsigned long long>(one_in), static_cast<unsigned long long>(presto::test::seed()),
                 static_cast<unsigned long long>(presto::test::seed()));
  }
  return Catch::Session().run(argc, argv);
}
