#pragma once
// The debugger's way into a process: every live runtime is on one intrusive list headed by the
// global `presto::detail::debug_runtimes`, which the gdb extension (tools/gdb/presto.py, see
// docs/guide/05-debugging.md) reads to find the runtimes and, through them, every thread.
//
// Contract with the gdb extension (it reads these names from the debug information, so keep
// them or update presto.py with them): debug_runtimes.head -> DebugAnchor{runtime, next};
// RuntimeImpl::processors[i]->state_->registry, RuntimeImpl::external_registry and
// RuntimeImpl::retained hold the live threads; a suspended Thread's context_.fctx is Boost.
// Context's saved stack pointer. The list changes only when a runtime is made or destroyed.

#include <mutex>

namespace presto::detail {

class RuntimeImpl;

// A member of RuntimeImpl: links its runtime into debug_runtimes for the runtime's lifetime.
struct DebugAnchor {
  explicit DebugAnchor(RuntimeImpl& runtime) noexcept;
  ~DebugAnchor();
  DebugAnchor(const DebugAnchor&) = delete;
  DebugAnchor& operator=(const DebugAnchor&) = delete;

  RuntimeImpl* runtime;
  DebugAnchor* prev = nullptr;
  DebugAnchor* next = nullptr;
};

struct DebugRuntimes {
  std::mutex mutex;
  DebugAnchor* head = nullptr;  // the runtime made last comes first
};

extern DebugRuntimes debug_runtimes;

}  // namespace presto::detail
