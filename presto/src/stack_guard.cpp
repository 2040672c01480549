#include "stack_guard.hpp"

#include <csignal>
#include <ucontext.h>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <unistd.h>

#include <presto/processor.hpp>
#include <presto/thread.hpp>

#include "sanitizers.hpp"
#include "dispatch.hpp"
#include "stack_allocator.hpp"

namespace presto::detail {

namespace {

constexpr std::size_t kAltStackSize = 64 * 1024;

// Signal handlers are process-wide by nature: the previous handlers are the one piece of
// static state in PRESTO, written once under std::call_once.
struct sigaction previous_segv;
struct sigaction previous_bus;

// async-signal-safe formatting into a fixed buffer
struct Line {
  char text[512];
  std::size_t used = 0;
  void add(const char* s, std::size_t n) {
    for (std::size_t i = 0; i < n && used < sizeof text; ++i) text[used++] = s[i];
  }
  void add(const char* s) { add(s, std::strlen(s)); }
  void add(std::uint64_t v) {
    char digits[24];
    std::size_t n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n > 0) add(&digits[--n], 1);
  }
};

[[noreturn]] void print_overflow_and_abort(const Thread& t) noexcept {
  Line line;
  line.add("presto: thread '");
  line.add(t.name().data(), t.name().size());
  line.add("' (id ");
  line.add(t.id());
  line.add(") overflowed its ");
  line.add(static_cast<std::uint64_t>(Dispatch::stack_of(t).size / 1024));
  line.add(" KiB stack\n");
  ssize_t ignored = write(STDERR_FILENO, line.text, line.used);
  (void)ignored;
  std::abort();
}

const void* stack_pointer(void* context) noexcept {
  auto* uc = static_cast<ucontext_t*>(context);
#if defined(__x86_64__)
  return reinterpret_cast<const void*>(uc->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
  return reinterpret_cast<const void*>(uc->uc_mcontext.sp);
#else
  (void)uc;
  return nullptr;
#endif
}

[[maybe_unused]] void on_fault(int sig, siginfo_t* info, void* context) {
  if (Processor* p = Processor::current()) {
    if (Thread* t = Dispatch::thread_on_stack(*p)) {
      // A fault in the guard page, or anywhere while the stack pointer is below the stack (an
      // unguarded stack overflows into memory below it before faulting).
      if (Dispatch::in_guard_page(*t, info->si_addr) || Dispatch::below_stack(*t, stack_pointer(context))) {
        print_overflow_and_abort(*t);
      }
    }
  }
  // Not a guard page of ours: hand the fault to whoever handled it before.
  const struct sigaction& prev = sig == SIGSEGV ? previous_segv : previous_bus;
  if (prev.sa_flags & SA_SIGINFO) {
    prev.sa_sigaction(sig, info, context);
  } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
  } else {
    signal(sig, SIG_DFL);  // returning re-executes the fault, which now kills the process
  }
}

}  // namespace

void install_overflow_handler() {
#if !PRESTO_ASAN
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_sigaction = &on_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &previous_segv);
    sigaction(SIGBUS, &action, &previous_bus);
  });
#endif
}

AltStack::AltStack() {
#if !PRESTO_ASAN
  memory_ = std::malloc(kAltStackSize);
  if (memory_ == nullptr) return;
  stack_t ss{};
  ss.ss_sp = memory_;
  ss.ss_size = kAltStackSize;
  installed_ = sigaltstack(&ss, nullptr) == 0;
#endif
}

AltStack::~AltStack() {
  if (installed_) {
    stack_t ss{};
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, nullptr);
  }
  std::free(memory_);
}

void report_overflow(const Thread& t) noexcept { print_overflow_and_abort(t); }

}  // namespace presto::detail
