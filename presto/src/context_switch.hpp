#pragma once
// The one wrapper around Boost.Context. Every switch between a thread and another thread or a
// processor's native context goes through switch_context(), which also tells the sanitizers
// about it, so their reports stay meaningful with thousands of stacks.

#include <cstddef>

#include <presto/detail/execution_context.hpp>

namespace presto::detail {

struct Transfer {
  void* from;  // the context that switched to us, as it must be saved by its owner
  void* data;  // what it passed: the Processor that now runs us
};

using ContextEntry = void (*)(Transfer);

// Prepares `ctx` to run `entry` on [stack_bottom, stack_bottom + size) when first switched to.
void make_context(ExecutionContext& ctx, void* stack_bottom, std::size_t size, ContextEntry entry);
// Records the native context of the calling OS thread (sanitizer bookkeeping).
void init_native_context(ExecutionContext& ctx);
// Switches from the running context `from` to the suspended context `to`, passing `data`.
// Returns when some context switches back to `from`. If `from_exits`, `from` never runs again.
Transfer switch_context(ExecutionContext& from, ExecutionContext& to, void* data, bool from_exits);
// The first thing a new context does (sanitizer bookkeeping).
void context_started() noexcept;
// Releases sanitizer state of a context that exited.
void destroy_context(ExecutionContext& ctx) noexcept;

}  // namespace presto::detail
