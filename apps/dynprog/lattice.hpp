// Lattice: the task graph of a grid-shaped dynamic program, and Costs, what a strategy
// measured about where its time went.
//
// A lattice has one dimension per coordinate, extent[d] points along dimension d; point
// (x_0, ..., x_{D-1}) has the mixed-radix index sum x_d * stride[d], dimension 0 varying
// fastest. Point x depends on x - e_d for every d with x_d > 0, so every predecessor has a
// smaller index (index order is a valid sequential order) and the points of one level
// (sum of coordinates) are independent of each other: the paper's "diagonals".
// Plain data; not synchronized (built once, then read by every worker).

#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace presto::apps::dynprog {

class Lattice {
 public:
  // std::invalid_argument if there is no dimension or an extent is 0.
  explicit Lattice(std::vector<std::size_t> extent) : extent_(std::move(extent)), stride_(extent_.size()) {
    if (extent_.empty()) throw std::invalid_argument("a lattice needs at least one dimension");
    for (std::size_t d = 0; d < extent_.size(); ++d) {
      if (extent_[d] == 0) throw std::invalid_argument("a lattice's extents must be positive");
      stride_[d] = size_;
      size_ *= extent_[d];
    }
    levels_.assign(levels() + 1, 0);
    for (std::size_t t = 0; t < size_; ++t) ++levels_[level(t) + 1];
    std::partial_sum(levels_.begin(), levels_.end(), levels_.begin());
    by_level_.resize(size_);
    std::vector<std::size_t> fill(levels_.begin(), levels_.end() - 1);
    for (std::size_t t = 0; t < size_; ++t) by_level_[fill[level(t)]++] = t;
  }

  std::size_t dimensions() const noexcept { return extent_.size(); }
  std::size_t size() const noexcept { return size_; }
  std::size_t extent(std::size_t d) const noexcept { return extent_[d]; }
  std::size_t stride(std::size_t d) const noexcept { return stride_[d]; }
  // Coordinate d of point t.
  std::size_t coordinate(std::size_t t, std::size_t d) const noexcept { return t / stride_[d] % extent_[d]; }
  // Sum of t's coordinates.
  std::size_t level(std::size_t t) const noexcept {
    std::size_t sum = 0;
    for (std::size_t d = 0; d < extent_.size(); ++d) sum += coordinate(t, d);
    return sum;
  }
  // Number of levels: the top point's level + 1.
  std::size_t levels() const noexcept {
    std::size_t top = 0;
    for (std::size_t e : extent_) top += e - 1;
    return top + 1;
  }
  // The points of level l, in index order: [level_begin(l), level_end(l)) of by_level().
  const std::size_t* level_begin(std::size_t l) const noexcept { return by_level_.data() + levels_[l]; }
  const std::size_t* level_end(std::size_t l) const noexcept { return by_level_.data() + levels_[l + 1]; }
  // How many predecessors t has.
  std::size_t predecessors(std::size_t t) const noexcept {
    std::size_t n = 0;
    for (std::size_t d = 0; d < extent_.size(); ++d) n += coordinate(t, d) > 0;
    return n;
  }

 private:
  std::vector<std::size_t> extent_;
  std::vector<std::size_t> stride_;
  std::size_t size_ = 1;
  std::vector<std::size_t> levels_;    // levels_[l]: where level l starts in by_level_
  std::vector<std::size_t> by_level_;  // every point, sorted by level
};

// Where a parallel solution's time went, summed over its workers. The clocks are read only
// when a worker actually has to wait, so the fast paths stay unmeasured and cheap.
struct Costs {
  double wait_ns = 0;            // blocked on synchronization: barriers, locks, predecessors
  double idle_ns = 0;            // no task to take (task graph: the ready list was empty)
  std::uint64_t waits = 0;       // how many times a worker had to wait
  std::uint64_t evaluations = 0; // tasks evaluated (more than the lattice's size: duplicates)

  Costs& operator+=(const Costs& o) {
    wait_ns += o.wait_ns;
    idle_ns += o.idle_ns;
    waits += o.waits;
    evaluations += o.evaluations;
    return *this;
  }
};

// Runs `block()`, charging its time to `into` (wait_ns or idle_ns of `costs`).
template <class Block>
void charge(Costs& costs, double Costs::*into, Block block) {
  const auto start = std::chrono::steady_clock::now();
  block();
  costs.*into += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  ++costs.waits;
}

// Runs `pause()` until `ready()` is true, charging the time to `into` only if the first test
// failed.
template <class Ready, class Pause>
void wait_until(Costs& costs, double Costs::*into, Ready ready, Pause pause) {
  if (!ready()) {
    charge(costs, into, [&] {
      do pause(); while (!ready());
    });
  }
}

}  // namespace presto::apps::dynprog
