// The per-OS-thread word of the predicted-return entries (predicted_return.hpp).

#include "predicted_return.hpp"

#if PRESTO_PREDICTED_RETURN
namespace presto::detail {
// Used: only the entries' assembly reads it, which link-time optimization does not see.
[[gnu::used]] __thread std::uintptr_t presto_return_site = 0;
}  // namespace presto::detail
#endif
