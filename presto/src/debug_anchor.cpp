#include "debug_anchor.hpp"

// The gdb extension, embedded as an inline script of the .debug_gdb_scripts section: gdb runs
// it when it loads any program linked with this object (every program that makes a Runtime),
// once the program's directory is in gdb's auto-load safe-path. The section is not loaded at
// run time and strip removes it.
#include "presto_gdb_script.h"

namespace presto::detail {

constinit DebugRuntimes debug_runtimes;  // constant-initialized: usable by any static Runtime

DebugAnchor::DebugAnchor(RuntimeImpl& r) noexcept : runtime(&r) {
  std::lock_guard guard{debug_runtimes.mutex};
  next = debug_runtimes.head;
  if (next != nullptr) next->prev = this;
  debug_runtimes.head = this;
}

DebugAnchor::~DebugAnchor() {
  std::lock_guard guard{debug_runtimes.mutex};
  if (prev != nullptr) {
    prev->next = next;
  } else {
    debug_runtimes.head = next;
  }
  if (next != nullptr) next->prev = prev;
}

}  // namespace presto::detail
