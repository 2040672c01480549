#include <presto/hybrid_allocation.hpp>

#include <presto/load_allocation.hpp>

namespace presto {

bool HybridAllocation::may_grow(std::size_t current, AllocationEnvironment& env) {
  return processors_left(current + 1, env) > current;
}

}  // namespace presto
