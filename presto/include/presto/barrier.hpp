#pragma once
// Barrier: a cyclic barrier for a fixed number of parties. Each arrive_and_wait() sleeps
// until `parties` threads have arrived in the current phase; then they all go on and the next
// phase begins. Exactly one thread per phase (the last to arrive) gets `true`, for work that
// must be done once per phase.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <presto/synchro_object.hpp>

namespace presto {

class Barrier : public SynchroObject {
 public:
  // UsageError if parties == 0.
  explicit Barrier(std::size_t parties, std::string name = {});
  ~Barrier() noexcept(false) override;

  bool arrive_and_wait();

  std::size_t parties() const noexcept { return parties_; }
  std::uint64_t phase() const noexcept;  // phases completed so far (a snapshot)
  std::string_view kind() const noexcept override { return "barrier"; }

 private:
  const std::size_t parties_;
  std::size_t arrived_ = 0;  // guarded by the spinlock
  std::uint64_t phase_ = 0;  // guarded by the spinlock
};

}  // namespace presto
