#pragma once
// The one wrapper around Boost.Context, included by dispatch.cpp only. Every switch between a
// thread and another thread or a processor's native context goes through switch_context(),
// which also tells the sanitizers about it from the switching frame itself, so their reports
// stay meaningful with thousands of stacks, and swaps the C++ runtime's per-OS-thread record of
// the exceptions being handled, so that a thread that blocks or is preempted inside a catch
// handler or a destructor run by unwinding finds its own again wherever it resumes (without
// it, `throw;`, std::current_exception and std::uncaught_exceptions would see another thread's
// exceptions, and the runtime would free a caught exception twice or never). It uses the
// fcontext primitives directly (make_fcontext, and jump_context.hpp's jump in Boost's layout):
// one jump per switch, no allocation; the context that left is handed to the one that runs
// next, which saves it (see Dispatch::complete).

#include <cstddef>

#include <pthread.h>

#include <cxxabi.h>

#include <boost/context/detail/fcontext.hpp>

#include <presto/detail/execution_context.hpp>

#include "jump_context.hpp"
#include "sanitizers.hpp"

#if PRESTO_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#if PRESTO_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace presto::detail {

namespace fctx = boost::context::detail;

struct Transfer {
  void* from;  // the context that switched to us, as it must be saved by its owner
  void* data;  // what it passed: the Processor that now runs us
};
// Transfer is transfer_t under another name, so an entry taking one can be given to Boost.
static_assert(sizeof(Transfer) == sizeof(fctx::transfer_t) && alignof(Transfer) == alignof(fctx::transfer_t));

using ContextEntry = void (*)(Transfer);

// Prepares `ctx` to run `entry` on [stack_bottom, stack_bottom + size) when first switched to.
inline void make_context(ExecutionContext& ctx, void* stack_bottom, std::size_t size, ContextEntry entry) {
  void* top = static_cast<char*>(stack_bottom) + size;
  auto boost_entry = reinterpret_cast<void (*)(fctx::transfer_t)>(reinterpret_cast<void (*)()>(entry));
  ctx.fctx = fctx::make_fcontext(top, size, boost_entry);
  ctx.stack_bottom = stack_bottom;
  ctx.stack_size = size;
  ctx.asan_fake_stack = nullptr;
  ctx.exceptions = ExceptionState{};
#if PRESTO_TSAN
  ctx.tsan_fiber = __tsan_create_fiber(0);
#endif
}

// The calling OS thread's record of the exceptions being handled (its __cxa_eh_globals, whose
// layout begins as ExceptionState). Fixed for the OS thread's life: a processor reads it once.
inline ExceptionState* exception_state_of_this_os_thread() noexcept {
  return reinterpret_cast<ExceptionState*>(abi::__cxa_get_globals());
}

// Records the native context of the calling OS thread (sanitizer bookkeeping). Only
// AddressSanitizer needs the stack's bounds (a switch back to the native context names them);
// they cost a read of /proc/self/maps on a process's main thread, tens of microseconds a run.
inline void init_native_context([[maybe_unused]] ExecutionContext& ctx) {
#if PRESTO_ASAN
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* addr = nullptr;
    std::size_t size = 0;
    pthread_attr_getstack(&attr, &addr, &size);
    ctx.stack_bottom = addr;
    ctx.stack_size = size;
    pthread_attr_destroy(&attr);
  }
#endif
#if PRESTO_TSAN
  ctx.tsan_fiber = __tsan_get_current_fiber();
#endif
}

// Switches from the running context `from` to the suspended context `to`, passing `data`.
// Returns when some context switches back to `from`. If `from_exits`, `from` never runs again.
// `exceptions` is the calling OS thread's record of the exceptions being handled: from's are
// saved and to's put in their place (the context that switches back to `from` does the same
// for it, on whichever OS thread that is).
inline Transfer switch_context(ExecutionContext& from, ExecutionContext& to, void* data, bool from_exits,
                               ExceptionState& exceptions) {
  from.exceptions = exceptions;
  exceptions = to.exceptions;
#if PRESTO_ASAN
  __sanitizer_start_switch_fiber(from_exits ? nullptr : &from.asan_fake_stack, to.stack_bottom, to.stack_size);
#else
  (void)from;
  (void)from_exits;
#endif
#if PRESTO_TSAN
  __tsan_switch_to_fiber(to.tsan_fiber, 0);
#endif
  fctx::transfer_t t = jump_context(to.fctx, data);
#if PRESTO_ASAN
  __sanitizer_finish_switch_fiber(from.asan_fake_stack, nullptr, nullptr);
#endif
  return Transfer{t.fctx, t.data};
}

// The first thing a new context does (sanitizer bookkeeping).
inline void context_started() noexcept {
#if PRESTO_ASAN
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
}

// Releases the sanitizer state of a context that exited.
inline void destroy_context(ExecutionContext& ctx) noexcept {
#if PRESTO_TSAN
  if (ctx.tsan_fiber != nullptr) __tsan_destroy_fiber(ctx.tsan_fiber);
#endif
  ctx = ExecutionContext{};
}

}  // namespace presto::detail
