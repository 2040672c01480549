#pragma once
// Stack overflow reporting. A thread that runs into the guard page below its stack faults;
// the SIGSEGV handler (run on a per-processor alternate signal stack) recognises the guard
// page of the current presto thread, prints
//   presto: thread 'NAME' (id N) overflowed its K KiB stack
// and aborts. Faults it does not recognise go to the handler that was installed before.
// Unguarded stacks are checked through their canary instead (report_overflow).

#include <cstddef>

namespace presto {
class Thread;
}

namespace presto::detail {

// Installs the process-wide SIGSEGV/SIGBUS handler once (not under AddressSanitizer, which
// reports overflows itself).
void install_overflow_handler();

// Gives the calling OS thread an alternate signal stack while it is a processor.
class AltStack {
 public:
  AltStack();
  AltStack(const AltStack&) = delete;
  AltStack& operator=(const AltStack&) = delete;
  ~AltStack();

 private:
  void* memory_ = nullptr;
  bool installed_ = false;
};

// Prints the overflow message for `t` and aborts.
[[noreturn]] void report_overflow(const Thread& t) noexcept;

}  // namespace presto::detail
