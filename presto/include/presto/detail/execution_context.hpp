#pragma once
// The machine state of a suspended thread or of a processor's own (native) context, and the
// stack a thread runs on. Only presto/src/context_switch.cpp interprets these fields.

#include <cstddef>

namespace presto::detail {

struct Stack {
  void* base = nullptr;       // lowest usable byte; the guard page (or canary) lies just below
  std::size_t size = 0;       // usable bytes
  bool guarded = false;       // false: overflow is caught by a canary check instead of a fault
  bool empty() const noexcept { return base == nullptr; }
};

// The C++ runtime's record of the exceptions being handled, kept per OS thread
// (__cxa_get_globals): the stack of caught exceptions (what `throw;` and
// std::current_exception see) and the number of uncaught ones (std::uncaught_exceptions).
// libstdc++'s and libc++abi's __cxa_eh_globals both begin so. A thread that switches out inside
// a catch handler or during unwinding keeps its own here, not the OS thread's (see
// context_switch.hpp).
struct ExceptionState {
  void* caught = nullptr;
  unsigned int uncaught = 0;
};

struct ExecutionContext {
  void* fctx = nullptr;             // Boost.Context fcontext_t while suspended
  void* stack_bottom = nullptr;     // bounds of the stack the context runs on (sanitizers)
  std::size_t stack_size = 0;
  void* asan_fake_stack = nullptr;  // AddressSanitizer's fake-stack handle while switched out
  void* tsan_fiber = nullptr;       // ThreadSanitizer's fiber for this context
  ExceptionState exceptions;        // the exceptions it is handling, while switched out
};

}  // namespace presto::detail
