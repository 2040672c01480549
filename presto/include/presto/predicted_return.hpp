#pragma once
// Predicted returns: an entry point whose call may switch threads returns to its caller by a
// jump the branch predictors can learn, where the return-stack predictor cannot be right.
// For authors of blocking operations (a SynchroObject subclass's wait, a channel's receive):
// the library's own this_thread::yield, Condition::wait and Semaphore::acquire are such
// entries, and so are presto::channels' blocking send and receive.
//
// Why: a switch leaves the processor's return-stack predictor holding the calls of the thread
// that switched out. The resumed thread's first return beyond the switch (out of
// this_thread::yield, into its own loop) is predicted from the other thread's entry: where the
// two called from different places (a producer's loop and a consumer's, the suite's yield
// kernel), every such return is mispredicted, about 8 ns on an AMD EPYC (Zen 4): as much as
// the rest of a yield.
//
// How: PRESTO_PREDICTED_RETURN_ENTRY(symbol, impl) defines `symbol` as a small assembly entry
// that records its own return address (its call site) in a per-OS-thread word, calls `impl`
// (same arguments, same results), then reads and clears the word. If a switch happened, the
// word holds the call site of the entry through which the thread that switched here left:
// the return address on top of the return-stack predictor. Then
//   - the word holds our own site (no switch, or a switch from the same site), or nothing
//     (the switch came another way): `ret`, which the predictor gets right in the first case
//     and which keeps the predictor's stack in step;
//   - otherwise: the entry leaves by one of two `jmp`s, chosen by which of the two sites is
//     the lower. Two threads alternating from two sites take one jmp each, always to the same
//     address (the target buffer predicts it), and the conditional branch between them
//     alternates with the switches, which the history-based predictor learns. Each jmp starts
//     a 64-byte block of its own (the way to the first runs through its padding: a few bytes
//     here, at most a few long no-ops): with both in one block (and the branch before them),
//     a yield between two loops read 12.8-15.8 ns against 12.4-13.8 in 11 of 12 pairs (15.2
//     in one; hot_path, medians of 5, the two builds run at once, one on each core,
//     2026-11-29). The return-stack predictor keeps one entry too many, which only matters to
//     returns below the entry's caller, which were mispredicted anyway (the stack held the
//     other thread's returns).
// Measured (hot_path, 1 processor, least of 5, alternated with the build before): a yield
// between two loops 20.2 -> 14.1 ns, a condition hand-off 30.6 -> 24.6 ns; where the return
// was already predicted (one loop), the entry costs 1.4 ns (12.8 -> 14.2). A single
// `jmp *reg` is not enough: the indirect predictor does not tell the two directions apart
// (22.1 ns, worse than `ret`).
//
// The word is only a hint: both ways return to the same address, so nothing depends on it
// being right. Every entry, in libpresto and in any other library or program, shares the one
// word libpresto defines (`presto_return_site`), so that an entry learns from a switch out of
// another's. Where PRESTO_PREDICTED_RETURN is 0 there are no such entries: x86-64 System V ELF
// only, and not under Intel CET (-fcf-protection), whose shadow stack rejects a return by
// jmp; write the entry point as a plain function calling `impl` there.
//
// Using it, for a member `bool Gate::wait(Ticket&)` (see presto::channels' basic_channel.cpp):
//   class Gate {
//    public:
//     bool wait(Ticket& t);  // the entry, defined by the macro below
//    private:
//     [[gnu::visibility("hidden")]] bool wait_body(Ticket& t);  // the work
//   };
//   #if PRESTO_PREDICTED_RETURN
//   PRESTO_PREDICTED_RETURN_ENTRY("_ZN4Gate4waitER6Ticket", "_ZN4Gate9wait_bodyER6Ticket");
//   #else
//   bool Gate::wait(Ticket& t) { return wait_body(t); }
//   #endif
//   [[gnu::used]] bool Gate::wait_body(Ticket& t) { ... }  // used: only assembly calls it
// The names are the mangled ones (`nm` shows them); a name that mangles standard-library
// types is that library's (libstdc++'s `St6chrono...`, libc++'s `NSt3__16chrono...`): guard
// such an entry with `defined(__GLIBCXX__)` or keep those types out of its signature. `impl`
// must be hidden (the entry calls it directly, not through the PLT). Exceptions pass through
// the entry (it has unwind information). `impl` may take only arguments passed in registers
// (at most six integer and eight floating-point ones, none passed in memory: the entry's push
// moves the stack), and may return whatever System V returns; the entry uses r10 and r11
// before the call, and r10, r11 and rcx after it.

#if defined(__x86_64__) && defined(__ELF__) && !defined(__CET__)
#define PRESTO_PREDICTED_RETURN 1
#else
#define PRESTO_PREDICTED_RETURN 0
#endif

#if PRESTO_PREDICTED_RETURN

// Defines the global function `symbol` (its mangled name, a string literal) as a
// predicted-return entry into `impl` (the mangled or extern "C" name of a hidden function that
// takes the same arguments, `this` included, and returns the same result).
// Scratch registers: r10, r11, rcx (neither arguments nor results of `impl`).
#define PRESTO_PREDICTED_RETURN_ENTRY(symbol, impl)                                           \
  asm(".pushsection .text\n"                                                                  \
      ".p2align 4\n"                                                                          \
      ".globl " symbol "\n"                                                                   \
      ".type " symbol ", @function\n" symbol ":\n"                                            \
      ".cfi_startproc\n"                                                                      \
      "movq presto_return_site@gottpoff(%rip), %r11\n"                                        \
      "movq (%rsp), %r10\n"                                                                   \
      "movq %r10, %fs:(%r11)\n"                                                               \
      "pushq %r10\n" /* aligns the stack for the call, and keeps our site across it */        \
      ".cfi_adjust_cfa_offset 8\n"                                                            \
      "call " impl "\n"                                                                       \
      "popq %r10\n"                                                                           \
      ".cfi_adjust_cfa_offset -8\n"                                                           \
      "movq presto_return_site@gottpoff(%rip), %r11\n"                                        \
      "movq %fs:(%r11), %rcx\n"                                                               \
      "movq $0, %fs:(%r11)\n"                                                                 \
      "cmpq %r10, %rcx\n"                                                                     \
      "jne 1f\n"                                                                              \
      "ret\n" /* our own site: no switch, or one from the same site */                        \
      "1:\n"                                                                                  \
      "testq %rcx, %rcx\n" /* nothing recorded */                                             \
      "je 3f\n"                                                                               \
      "cmpq %rcx, %r10\n" /* carry: our site is the lower */                                  \
      "leaq 8(%rsp), %rsp\n" /* keeps the flags of cmpq */                                    \
      ".cfi_remember_state\n"                                                                 \
      ".cfi_adjust_cfa_offset -8\n"                                                           \
      ".cfi_register %rip, %r10\n"                                                            \
      "jc 2f\n"                                                                               \
      ".p2align 6\n"                                                                          \
      "jmpq *%r10\n"                                                                          \
      ".p2align 6\n"                                                                          \
      "2:\n"                                                                                  \
      "jmpq *%r10\n"                                                                          \
      ".cfi_restore_state\n"                                                                  \
      "3:\n"                                                                                  \
      "ret\n"                                                                                 \
      ".cfi_endproc\n"                                                                        \
      ".size " symbol ", .-" symbol "\n"                                                      \
      ".popsection\n")

#endif
