// Guide, chapter 3: timed waits. Every deadline is on presto::Clock (steady_clock); a
// pending timed wait keeps the system from halting until it expires.
#include <chrono>
#include <cstdio>

#include <presto/presto.hpp>

using namespace std::chrono_literals;

int main() {
  presto::Runtime rt{{.processors = 2}};
  return rt.run([] {
    int failures = 0;
    presto::Monitor m{"mailbox"};
    presto::Condition arrived{m, "arrived"};
    int letters = 0;

    // Nobody sends: the wait gives up after 2 ms and reports the predicate (false).
    {
      presto::Monitor::Entry entry{m};
      const auto start = presto::Clock::now();
      bool got = arrived.wait_for(entry, 2ms, [&] { return letters > 0; });
      const auto waited = std::chrono::duration_cast<std::chrono::microseconds>(presto::Clock::now() - start);
      std::printf("condition: got a letter: %s, after waiting at least 2 ms: %s\n", got ? "yes" : "no",
                  waited >= 2ms ? "yes" : "no");
      failures += got || waited < 2ms;
    }

    // A sender arrives in time: the wait returns true, with the monitor held.
    auto sender = presto::fork([&] {
      presto::Monitor::Entry entry{m};
      ++letters;
      arrived.signal();
    });
    {
      presto::Monitor::Entry entry{m};
      bool got = arrived.wait_for(entry, 10s, [&] { return letters > 0; });
      std::printf("condition: got a letter: %s\n", got ? "yes" : "no");
      failures += !got;
    }
    sender.join();

    // Semaphores time out the same way.
    presto::Semaphore tokens{0, "tokens"};
    bool took = tokens.try_acquire_for(1ms);
    tokens.release();
    bool took_now = tokens.try_acquire_for(1ms);
    std::printf("semaphore: empty: %s; after release: %s\n", took ? "took one" : "timed out",
                took_now ? "took one" : "timed out");
    failures += took || !took_now;
    return failures;
  });
}
