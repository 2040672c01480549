// The per-OS-thread word of every predicted-return entry (<presto/predicted_return.hpp>): the
// library's own and those other libraries and programs define with the public macro.

#include <presto/predicted_return.hpp>

#include <cstdint>

#if PRESTO_PREDICTED_RETURN
// The call site recorded by the last predicted-return entry on this OS thread (0: none).
// Exported: the entries outside the library name it. Initial-exec, as the entries' assembly
// reads it (@gottpoff). Used: only that assembly reads it, which link-time optimization does
// not see.
extern "C" {
[[gnu::used]] __thread __attribute__((tls_model("initial-exec"))) std::uintptr_t presto_return_site = 0;
}
#endif
