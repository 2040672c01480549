// presto_jump_context: the one instruction sequence of every switch between two contexts on
// x86-64 System V ELF (Linux, the BSDs); elsewhere switch_context uses Boost.Context's
// jump_fcontext and this file is empty. See jump_context.hpp for the contract.
//
// Why not Boost's own jump_fcontext, whose contexts this one shares: jump_fcontext enters by a
// call and leaves by `jmp *%r8`. The call pushes an entry on the processor's return-stack
// predictor that no `ret` pops, so every `ret` after a switch that unwinds below it (out of the
// switch's caller, and out of its callers in turn) is predicted from the wrong entry: one per
// yield (its frames return to the user's loop by a tail call), about 8 ns on an AMD EPYC, as
// much as the rest of the yield. This one
// leaves by `ret`, which pops the entry its own call pushed: the switch's return is predicted
// right when the context resumed switched out at the same call site (two threads yielding to
// each other), and the rets after it find the predictor's stack as their own calls left it.
// (Where it switched out at another call site, predicted_return.hpp's entries cover the return
// into it.)
//
// It also reloads the SSE control and status register and the x87 control word only where
// they differ from the leaving context's (ldmxcsr and fldcw cost tens of cycles each, and the
// threads of one program nearly always share them): the state each context finds is the same
// as with jump_fcontext, which always reloads them.
//
// It starts on a cache line (.p2align 6): its 121 bytes then span two lines, where 16-byte
// alignment let them span three and moved with every change elsewhere in the library. The
// yield measured 12.88 -> 12.38 ns (medians of 10 rounds alternated, 2026-11-28, a host where
// one build's layout had cost it 4%).

#include "jump_context.hpp"

#if PRESTO_OWN_JUMP

// The saved context, at the stack pointer the switch leaves in `fctx` (Boost.Context's layout
// for x86-64 System V, which make_fcontext writes for a new context):
//   0x00 MXCSR (4 bytes)   0x04 x87 control word (2 bytes)
//   0x08 r12   0x10 r13   0x18 r14   0x20 r15   0x28 rbx   0x30 rbp
//   0x38 the address to resume at (for a new context, Boost's trampoline)
asm(R"(
  .pushsection .text
  .p2align 6
  .globl presto_jump_context
  .hidden presto_jump_context
  .type presto_jump_context, @function
presto_jump_context:
  .cfi_startproc
  leaq   -0x38(%rsp), %rsp
  .cfi_adjust_cfa_offset 0x38
  stmxcsr (%rsp)
  fnstcw 0x4(%rsp)
  movq   %r12, 0x8(%rsp)
  movq   %r13, 0x10(%rsp)
  movq   %r14, 0x18(%rsp)
  movq   %r15, 0x20(%rsp)
  movq   %rbx, 0x28(%rsp)
  movq   %rbp, 0x30(%rsp)
  movq   %rsp, %rax
  movq   %rdi, %rsp
  movl   (%rsp), %ecx
  cmpl   (%rax), %ecx
  jne    3f
1:
  movzwl 0x4(%rsp), %ecx
  cmpw   0x4(%rax), %cx
  jne    4f
2:
  movq   0x8(%rsp), %r12
  movq   0x10(%rsp), %r13
  movq   0x18(%rsp), %r14
  movq   0x20(%rsp), %r15
  movq   0x28(%rsp), %rbx
  movq   0x30(%rsp), %rbp
  leaq   0x38(%rsp), %rsp
  .cfi_remember_state
  .cfi_adjust_cfa_offset -0x38
  movq   %rsi, %rdx
  movq   %rax, %rdi
  ret
  .cfi_restore_state
3:
  ldmxcsr (%rsp)
  jmp    1b
4:
  fldcw  0x4(%rsp)
  jmp    2b
  .cfi_endproc
  .size presto_jump_context, .-presto_jump_context
  .popsection
)");

#endif
