#include "runtime_configurer.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <string_view>
#include <vector>

namespace presto {

namespace {
// The environment variables of tools: presto::instrument's.
constexpr std::string_view kToolVariables[] = {"PRESTO_TRACE", "PRESTO_PROFILE"};
constexpr std::size_t kToolVariableCount = std::size(kToolVariables);

struct ConfigurerRegistry {
  std::mutex mutex;
  std::vector<RuntimeConfigurer> configurers;
  bool served[kToolVariableCount] = {};
};

// A function-local static: configurers register from static initializers of other files,
// whose order relative to this one is unspecified.
ConfigurerRegistry& registry() {
  static ConfigurerRegistry r;
  return r;
}

// Warns about each tool variable that is set while no configurer serves it; only at the first
// Runtime of the process (the environment is read once).
void warn_unserved(const bool (&served)[kToolVariableCount]) {
  static std::atomic<bool> checked{false};
  if (checked.load(std::memory_order_relaxed) || checked.exchange(true)) return;
  for (std::size_t i = 0; i < kToolVariableCount; ++i) {
    const char* value = std::getenv(kToolVariables[i].data());
    if (served[i] || value == nullptr || *value == '\0') continue;
    std::fprintf(stderr,
                 "presto: %s is set but presto::instrument is not in this program: ignored (link it with "
                 "pkg-config presto-instrument, or run with LD_PRELOAD=libpresto-instrument.so; "
                 "docs/guide/understanding-performance.md)\n",
                 kToolVariables[i].data());
  }
}
}  // namespace

void add_runtime_configurer(RuntimeConfigurer configurer, std::initializer_list<const char*> serves) {
  if (configurer == nullptr) throw UsageError("add_runtime_configurer: the configurer is null");
  ConfigurerRegistry& r = registry();
  std::lock_guard lock(r.mutex);
  r.configurers.push_back(configurer);
  for (std::string_view name : serves) {
    for (std::size_t i = 0; i < kToolVariableCount; ++i) r.served[i] = r.served[i] || kToolVariables[i] == name;
  }
}

RuntimeConfig detail::apply_configurers(RuntimeConfig config) {
  std::vector<RuntimeConfigurer> configurers;
  bool served[kToolVariableCount];
  {
    ConfigurerRegistry& r = registry();
    std::lock_guard lock(r.mutex);
    configurers = r.configurers;
    std::copy(std::begin(r.served), std::end(r.served), served);
  }
  warn_unserved(served);
  for (RuntimeConfigurer c : configurers) c(config);
  return config;
}

}  // namespace presto
