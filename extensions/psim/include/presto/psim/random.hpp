#pragma once
// Random: a small, fast, seedable generator (SplitMix64) for models. Each LP owns one, seeded
// from the model's seed and the LP's index, and draws from it only while handling its own
// events, so a model's draws are the same on any number of processors.

#include <cmath>
#include <cstdint>

namespace presto::psim {

class Random {
 public:
  explicit Random(std::uint64_t seed = 0, std::uint64_t stream = 0) noexcept
      : state_(seed ^ (0x9e3779b97f4a7c15ULL * (stream + 1))) {}

  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in the open interval (0, 1).
  double uniform() noexcept { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }
  // Exponential with the given mean; never 0.
  double exponential(double mean) noexcept { return -mean * std::log(uniform()); }
  // Uniform integer in [0, n).
  std::uint64_t below(std::uint64_t n) noexcept { return n == 0 ? 0 : next() % n; }

 private:
  std::uint64_t state_;
};

}  // namespace presto::psim
