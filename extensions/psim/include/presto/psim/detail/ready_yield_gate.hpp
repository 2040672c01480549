#pragma once
// ReadyYieldGate: whether an LP held back by a sender that waits in the ready pool yields to
// it (Simulation::yields_instead), learned from the LP's own last such yields. A pool that
// runs the other ready LPs before the yielder comes round (FIFO order, PSIM's LocalQueuePool)
// lets the sender move meanwhile; one that gives the yielder back first (lowest timestamp
// first, where the held-back LP's timestamp is often the least) does not, and each such yield
// is a wasted switch out and back. After kMisses yields in a row that found the sender's bound
// unmoved on return, the gate stays shut for kSkips asks, then lets one through to try again;
// a yield that saw the sender move opens it at once. An LP's own, used under its mutex.

#include <cstdint>

namespace presto::psim::detail {

class ReadyYieldGate {
 public:
  static constexpr std::uint8_t kMisses = 4;
  static constexpr std::uint8_t kSkips = 64;

  // Whether the LP may yield to a ready sender now (an ask while shut counts as a skip).
  bool open() noexcept {
    if (misses_ < kMisses) return true;
    if (++misses_ == kMisses + kSkips) misses_ = kMisses - 1;  // the next ask is let through
    return false;
  }
  // After a yield that open() allowed: whether the sender's bound had moved when it returned.
  void note(bool moved) noexcept { misses_ = moved ? 0 : static_cast<std::uint8_t>(misses_ + 1); }

 private:
  std::uint8_t misses_ = 0;  // below kMisses: misses in a row; from it: shut, counting skips
};

}  // namespace presto::psim::detail
