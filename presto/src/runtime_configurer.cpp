#include "runtime_configurer.hpp"

#include <mutex>
#include <vector>

namespace presto {

namespace {
// Function-local statics: configurers register from static initializers of other files, whose
// order relative to this one is unspecified.
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::vector<RuntimeConfigurer>& registry() {
  static std::vector<RuntimeConfigurer> configurers;
  return configurers;
}
}  // namespace

void add_runtime_configurer(RuntimeConfigurer configurer) {
  if (configurer == nullptr) throw UsageError("add_runtime_configurer: the configurer is null");
  std::lock_guard lock(registry_mutex());
  registry().push_back(configurer);
}

RuntimeConfig detail::apply_configurers(RuntimeConfig config) {
  std::vector<RuntimeConfigurer> configurers;
  {
    std::lock_guard lock(registry_mutex());
    configurers = registry();
  }
  for (RuntimeConfigurer c : configurers) c(config);
  return config;
}

}  // namespace presto
