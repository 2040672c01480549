#pragma once
// Dispatch: how threads get on and off processors.
//
// A thread gives up its processor on its own stack: it enters the processor's gate, asks the
// scheduler for the next ready thread and switches straight to it (or to the processor's
// native context if there is none). What must happen to the thread that left is done by the
// context that runs next, once the switch has saved its registers (Dispatch::complete):
//   requeue  - it yielded: put it back in the ready pool
//   unlock   - it went to sleep: release the SynchroObject spinlock it held, so a waker
//              can find it only once its context is saved
//   finish   - it terminated: recycle its stack, wake its joiner
// and then the gate is left. The gate is a per-processor spinlock held from the decision to
// the completion of a switch; component replacement takes every gate once to know that no
// processor is still inside the old component.

#include <presto/processor.hpp>
#include <presto/synchro_object.hpp>
#include <presto/thread.hpp>

#include "context_switch.hpp"

namespace presto::detail {

class RuntimeImpl;

class Dispatch {
 public:
  static void enter(Processor& p) noexcept {
    if (p.gate_depth_++ == 0) p.gate_.lock();
  }
  static void leave(Processor& p) noexcept {
    if (--p.gate_depth_ == 0) p.gate_.unlock();
  }

  // On the current thread's own stack:
  static void yield(Thread& self);
  static void block(Thread& self, SynchroObject& so);  // so's spinlock held
  [[noreturn]] static void finish(Thread& self) noexcept;

  // On a processor's native context: runs threads until none is ready; false if none was.
  static bool dispatch_from_native(Processor& p);

  // Puts t (state: ready) into its runtime's scheduler and wakes an idle processor if needed.
  static void make_ready(Thread& t);
  // Threads in the ready pool, read inside the caller's gate.
  static std::size_t ready_count(Processor& p) noexcept;

  // Stack-guard support.
  static const Stack& stack_of(const Thread& t) noexcept { return t.stack_; }
  static bool in_guard_page(const Thread& t, const void* address) noexcept;

 private:
  static Thread* next_for(Processor& p);
  static void switch_to(Processor& p, Thread* from, Thread* to);
  static void complete(Processor& p, void* from_context) noexcept;
  static void bind_stack(Processor& p, Thread& t);
  static void finished(Processor& p, Thread& t) noexcept;
  static void thread_entry(Transfer transfer);
};

}  // namespace presto::detail
