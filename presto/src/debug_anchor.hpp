#pragma once
// The debugger's way into a process: every live runtime is on one intrusive list headed by the
// global `presto::detail::debug_runtimes`, which the gdb extension (tools/gdb/presto.py, see
// docs/guide/05-debugging.md) reads to find the runtimes and, through them, every thread.
//
// Contract with the gdb extension: it reads these fields by name from the debug information
// (rename one and presto.py must follow) and nothing else:
//   debug_runtimes.head, DebugAnchor::{runtime, next};
//   RuntimeImpl::{name, processors (ProcessorSet::{slots_, made_, active_}), external_registry, retained}; Processor::{index_, state_};
//   ProcessorState::registry; Registry::head_ (Chunk::{size, slots, next}: a slot holds a Thread* or null);
//   Thread::{id_, state_, processor_, waiting_on_, context_.fctx, stack_.{base, size}} and
//   Thread::external_, SynchroObject::name_ (of threads and of the objects they wait on),
//   Lock::word_ (the holder's address, its low bit a flag);
//   presto::ThreadState's enumerators.
// A suspended thread's context_.fctx is Boost.Context's saved stack pointer (its layout on
// x86-64 is in presto.py). The list changes only when a runtime is made or destroyed.

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
