#pragma once
// The calling OS thread's processor and presto thread, read inline: a load from thread-local
// storage instead of a call to Processor::current() or Thread::current().
//
// Those two are out of line on purpose. A presto thread may resume on another OS thread after
// any context switch, and a compiler may keep the address of a thread-local variable across a
// call it cannot see into, so a second inline read after a switch could read the old OS
// thread's value. Use these only in a function that reads once, before anything that may
// switch, and keeps the result (a Thread is the same object on whichever OS thread it resumes).

#include <presto/processor.hpp>
#include <presto/thread.hpp>

namespace presto::detail {

// Defined in processor.cpp. Constant-initialized, so no other translation unit calls an
// initialization wrapper to read it.
extern constinit thread_local __attribute__((tls_model("initial-exec"))) Processor* tl_processor;

[[gnu::always_inline]] inline Processor* current_processor() noexcept { return tl_processor; }

// The presto thread running on this OS thread, or nullptr on an OS thread outside a runtime
// (or on a processor's native context). Thread::current() is this plus the stand-in.
[[gnu::always_inline]] inline Thread* running_thread() noexcept {
  Processor* p = tl_processor;
  return p != nullptr ? p->current_thread() : nullptr;
}

[[gnu::always_inline]] inline Thread& current_thread() noexcept {
  if (Thread* t = running_thread()) [[likely]] return *t;
  return Thread::current();  // an OS thread's stand-in
}

}  // namespace presto::detail
