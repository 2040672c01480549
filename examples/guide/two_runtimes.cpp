// Guide, chapter 1: several runtimes in one process.
// A runtime keeps no static state, so two can run at the same time, each with its own
// processors and policies. Here each runs on its own OS thread, with its own pool.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <presto/presto.hpp>

namespace {
// Counts the primes below n with one thread per block of 1000 numbers.
long count_primes(long n) {
  std::vector<presto::JoinHandle<long>> blocks;
  for (long lo = 0; lo < n; lo += 1000) {
    blocks.push_back(presto::fork([lo, n] {
      long count = 0;
      for (long k = lo; k < std::min(lo + 1000, n); ++k) {
        bool prime = k >= 2;
        for (long d = 2; d * d <= k && prime; ++d) prime = k % d != 0;
        count += prime;
      }
      return count;
    }));
  }
  long total = 0;
  for (auto& b : blocks) total += b.join();
  return total;
}
}  // namespace

int main() {
  presto::Runtime fifo{{.processors = 1, .pool = std::make_unique<presto::FifoPool>(), .name = "fifo"}};
  presto::Runtime lifo{{.processors = 2, .pool = std::make_unique<presto::LifoPool>(), .name = "lifo"}};

  long a = 0, b = 0;
  std::thread other([&] { b = lifo.run([] { return count_primes(50'000); }); });
  a = fifo.run([] { return count_primes(20'000); });
  other.join();

  std::printf("runtime '%s' (pool '%s'): %ld primes below 20000\n", fifo.name().c_str(),
              std::string(fifo.scheduler().pool().name()).c_str(), a);
  std::printf("runtime '%s' (pool '%s'): %ld primes below 50000\n", lifo.name().c_str(),
              std::string(lifo.scheduler().pool().name()).c_str(), b);
  return a == 2262 && b == 5133 ? 0 : 1;
}
