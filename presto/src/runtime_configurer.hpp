#pragma once
// The registry behind presto::add_runtime_configurer (runtime.hpp).

#include <presto/runtime.hpp>

namespace presto::detail {

// `config` after every registered configurer has changed it, in registration order.
RuntimeConfig apply_configurers(RuntimeConfig config);

}  // namespace presto::detail
