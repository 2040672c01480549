// Guide, chapter 5: replaying a schedule with ShufflePool.
// ShufflePool hands out a random ready thread from a seeded generator. On one processor a
// seed replays the same schedule exactly, so a failure found with one seed can be studied
// again and again. The seed is ShufflePool's own, or else the runtime's (RuntimeConfig::seed,
// overridden by PRESTO_SEED), which the runtime logs at info level.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <presto/presto.hpp>

namespace {
// Three threads each write their letter three times, yielding in between.
// The pool takes the runtime's seed: RuntimeConfig::seed, or PRESTO_SEED if it is set.
std::string interleaving(std::uint64_t seed) {
  presto::Runtime rt{{.processors = 1, .pool = std::make_unique<presto::ShufflePool>(), .seed = seed}};
  std::string trace;
  rt.run([&] {
    presto::Spinlock lock;
    std::vector<presto::JoinHandle<void>> hs;
    for (char letter : {'a', 'b', 'c'}) {
      hs.push_back(presto::fork([&, letter] {
        for (int i = 0; i < 3; ++i) {
          {
            std::scoped_lock guard{lock};
            trace += letter;
          }
          presto::this_thread::yield();
        }
      }));
    }
    for (auto& h : hs) h.join();
  });
  if (rt.processors() != 1) return "";  // PRESTO_PROCESSORS asked for more: no exact replay
  return trace + " (seed " + std::to_string(rt.seed()) + ")";
}
}  // namespace

int main() {
  const std::string first = interleaving(42), again = interleaving(42), other = interleaving(7);
  std::printf("%s\n%s\n%s\n", first.c_str(), again.c_str(), other.c_str());
  return first == again ? 0 : 1;
}
