#pragma once
// HybridAllocation: the remedy the ASAT thesis proposes for competing ASAT jobs (§4.7,
// ../shared/research/seed-001-asat.md §1.10): the timed barrier decides when to shrink,
// exactly as AsatAllocation, and the OS load decides whether growing is worth a probe. After
// `good_trig` good tests it grows (after a good probe barrier, as ASAT) only if the OS run
// queue leaves a processor free for it: hardware processors - other programs' running threads
// > current. Equal-priority jobs that have shrunk to share the machine then see each other's
// threads and stay put instead of probing into each other.

#include <presto/asat_allocation.hpp>

namespace presto {

class HybridAllocation final : public AsatAllocation {
 public:
  using AsatAllocation::AsatAllocation;
  std::string describe() const override { return describe_as("hybrid"); }

 protected:
  bool may_grow(std::size_t current, AllocationEnvironment& env) override;
};

}  // namespace presto
