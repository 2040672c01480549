#pragma once
// AsatAllocation: Severance's Automatic Self-Allocating Threads, version 2 (thesis §3;
// ../shared/research/seed-001-asat.md §1.6). At a region entry, once `eval` has passed since
// the last evaluation, it runs a timed barrier over the current processors:
// - passage > `bad` counts a bad test (the good count restarts), else a good one (the bad
//   count restarts);
// - `bad_trig` bad tests in a row drop one processor (never below 1);
// - `good_trig` good tests in a row run one probe barrier with one processor more (never above
//   the limit); if the probe passes within `bad`, the processor is added ("dip a toe in the
//   water").
// Shrinking is quicker than growing: the thesis's hysteresis. After acting, the count that
// triggered it restarts (the thesis leaves this open). The first region evaluates at once.
//
// The thesis's preconditions hold here too: it works when this job is the one that should
// give way (run it at a lower priority: `nice`), and equal-priority ASAT jobs thrash: each
// probe sometimes passes, the job grows, and a second later shrinks. HybridAllocation fixes it.

#include <chrono>
#include <cstddef>
#include <string>

#include <presto/allocation_policy.hpp>

namespace presto {

struct AsatParameters {
  std::chrono::nanoseconds eval = std::chrono::milliseconds(500);  // ASAT_EVAL_TIME
  std::chrono::nanoseconds bad = std::chrono::milliseconds(1);     // ASAT_BAD_TIME
  std::size_t bad_trig = 2;                                        // ASAT_BAD_TRIG
  std::size_t good_trig = 15;                                      // ASAT_GOOD_TRIG

  // The settings of the thesis's final experiments (Table 3, KAI Guide's Flow(ASAT) run-time:
  // KMP_ASAT_DEC, KMP_ASAT_INC): eval 1 s, bad 1 ms, bad_trig 1, good_trig 10.
  static AsatParameters kai_guide() {
    return {.eval = std::chrono::seconds(1), .bad = std::chrono::milliseconds(1), .bad_trig = 1, .good_trig = 10};
  }
};

class AsatAllocation : public AllocationPolicy {
 public:
  // UsageError naming the parameter if eval or bad is not positive, or a trigger is 0.
  explicit AsatAllocation(AsatParameters parameters = {});

  std::size_t decide(std::size_t current, std::size_t limit, AllocationEnvironment& env) override;
  std::string describe() const override;

  const AsatParameters& parameters() const noexcept { return parameters_; }
  // Consecutive bad and good tests so far (for tests and logs).
  std::size_t bad_count() const noexcept { return bad_; }
  std::size_t good_count() const noexcept { return good_; }

 protected:
  // Asked after `good_trig` good tests, before the probe barrier: may the job try one
  // processor more than `current`? ASAT: always. HybridAllocation: only if the OS has room.
  virtual bool may_grow(std::size_t current, AllocationEnvironment& env);
  // "asat(eval 0.5 s, ...)" with another name.
  std::string describe_as(const char* name) const;

 private:
  AsatParameters parameters_;
  bool evaluated_ = false;
  std::chrono::nanoseconds last_{};
  std::size_t bad_ = 0;
  std::size_t good_ = 0;
};

}  // namespace presto
