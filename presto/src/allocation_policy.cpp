#include <presto/allocation_policy.hpp>

namespace presto {

std::size_t FixedAllocation::decide(std::size_t current, std::size_t /*limit*/, AllocationEnvironment& /*env*/) {
  return current;
}

}  // namespace presto
