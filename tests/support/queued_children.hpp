#pragma once
// Workloads that change the runtime under children still queued as lazy-fork records, shared by
// core's lazy-fork tests and the races suite's delays (which runs them with random delays at
// the race points).

#include <cstddef>
#include <cstdint>
#include <vector>

#include <presto/presto.hpp>

#include "test_support.hpp"

namespace presto::test {

// A runtime of `processors` with lazy forks on, seeded with the test process's seed.
inline RuntimeConfig lazy_config(std::size_t processors) {
  return RuntimeConfig{.processors = processors, .lazy_forks = true, .seed = seed()};
}

// In a run of rt (whose processor count is `first`): `rounds` times, n forks, set_processors
// to `other`, a few yields, n more forks, set_processors back to `first`, then every join.
// Returns the sum of the children's results, rounds * n * (n - 1) if none was lost.
inline std::uint64_t forks_across_set_processors(Runtime& rt, std::size_t first, std::size_t other,
                                                 std::uint64_t rounds, std::uint64_t n) {
  std::uint64_t s = 0;
  for (std::uint64_t r = 0; r < rounds; ++r) {
    std::vector<JoinHandle<std::uint64_t>> hs;
    for (std::uint64_t i = 0; i < n; ++i) hs.push_back(fork([i] { return i; }));
    rt.set_processors(other);
    for (int k = 0; k < 5; ++k) this_thread::yield();
    for (std::uint64_t i = 0; i < n; ++i) hs.push_back(fork([i] { return i; }));
    rt.set_processors(first);
    for (auto& h : hs) s += h.join();
  }
  return s;
}

}  // namespace presto::test
