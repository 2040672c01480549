// A program outside PRESTO's tree, built against PRESTO the three ways users do
// (pkg-config on an installed tree, a Meson subproject, CMake's find_package) by
// consumers_test.py. It uses the core, an extension that links the core (futures) and PSIM,
// and checks the version macro against the project's version given as argv[1].
#include <cstdio>
#include <cstring>

#include <presto/futures/future.hpp>
#include <presto/presto.hpp>
#include <presto/psim/simulation.hpp>
#include <presto/version.hpp>

int main(int argc, char** argv) {
  if (argc != 2 || std::strcmp(argv[1], PRESTO_VERSION) != 0) {
    std::fprintf(stderr, "consumer: built with PRESTO %s, expected %s\n", PRESTO_VERSION, argc == 2 ? argv[1] : "?");
    return 1;
  }
  presto::Runtime rt{{.processors = 2}};
  return rt.run([] {
    presto::psim::Random random{7};  // from <presto/psim/simulation.hpp> alone
    const std::uint64_t n = 10 + random.next() % 10;
    presto::futures::Future<std::uint64_t> sum{[n] {
      std::uint64_t s = 0;
      for (std::uint64_t i = 1; i <= n; ++i) s += i;
      return s;
    }};
    const bool ok = sum.get() == n * (n + 1) / 2;
    std::printf("consumer: PRESTO %s, sum 1..%llu %s\n", PRESTO_VERSION, static_cast<unsigned long long>(n),
                ok ? "right" : "WRONG");
    return ok ? 0 : 1;
  });
}
