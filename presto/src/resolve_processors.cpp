// presto::resolve_processors (runtime.hpp): what a requested number of processors means.

#include <algorithm>
#include <string>
#include <thread>

#include <presto/runtime.hpp>

namespace presto {

std::size_t resolve_processors(std::size_t requested, std::string_view what) {
  const std::size_t hardware = std::max(1u, std::thread::hardware_concurrency());
  if (requested == 0) return hardware;
  if (requested > kMaxProcessorsPerHardwareThread * hardware) {
    throw UsageError(std::string(what) + " = " + std::to_string(requested) + " is more than " +
                     std::to_string(kMaxProcessorsPerHardwareThread) + " times this machine's " +
                     std::to_string(hardware) + " hardware threads (at most " +
                     std::to_string(kMaxProcessorsPerHardwareThread * hardware) +
                     "; 0 means one per hardware thread)");
  }
  return requested;
}

}  // namespace presto
