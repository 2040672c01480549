// A program outside PRESTO's tree, built against PRESTO the three ways users do
// (pkg-config on an installed tree, a Meson subproject, CMake's find_package) by
// consumers_test.py. It uses the core, an extension that links the core (futures) and PSIM,
// defines a predicted-return entry of its own with the public macro (which names a word the
// installed libpresto exports), and checks the version macro against the project's version
// given as argv[1].
#include <cstdio>
#include <cstring>

#include <presto/futures/future.hpp>
#include <presto/predicted_return.hpp>
#include <presto/presto.hpp>
#include <presto/psim/simulation.hpp>
#include <presto/version.hpp>

// A blocking operation of the program's own, as an author of one writes it: take a unit of
// `s`, then return `v + 1`.
extern "C" int consumer_take(presto::Semaphore* s, int v);
// Used: only the entry's assembly calls it.
extern "C" [[gnu::visibility("hidden"), gnu::used]] int consumer_take_body(presto::Semaphore* s, int v) {
  s->acquire();
  return v + 1;
}
#if PRESTO_PREDICTED_RETURN
PRESTO_PREDICTED_RETURN_ENTRY("consumer_take", "consumer_take_body");
#else
extern "C" int consumer_take(presto::Semaphore* s, int v) { return consumer_take_body(s, v); }
#endif

// Two threads take turns through consumer_take, each from its own call site, so that its
// returns after a switch go where the other's did not; true if every count came out right.
bool take_turns(int rounds) {
  presto::Semaphore ping{0, "ping"}, pong{0, "pong"};
  ping.set_wait_policy({.mode = presto::WaitMode::block});
  pong.set_wait_policy({.mode = presto::WaitMode::block});
  auto other = presto::fork([&] {
    int n = 0;
    for (int r = 0; r < rounds; ++r) {
      n = consumer_take(&ping, n);
      pong.release();
    }
    return n;
  });
  int n = 0;
  for (int r = 0; r < rounds; ++r) {
    ping.release();
    n = consumer_take(&pong, n);
  }
  return n == rounds && other.join() == rounds;
}

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
    const bool summed = sum.get() == n * (n + 1) / 2;
    const bool took = take_turns(1000);
    const bool ok = summed && took;
    std::printf("consumer: PRESTO %s, sum 1..%llu %s, turns %s\n", PRESTO_VERSION, static_cast<unsigned long long>(n),
                summed ? "right" : "WRONG", took ? "right" : "WRONG");
    return ok ? 0 : 1;
  });
}
