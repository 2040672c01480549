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
//   release_queue - it yielded and is already back in its processor's ready queue, which it
//              held across the switch (the common yield; OwnedQueue): release that hold
//   finish   - it terminated: recycle its stack (its joiner was woken before the switch, so
//              that the switch can go straight to it)
// and then the gate is left. The gate is a per-processor spinlock held from the decision to
// the completion of a switch; component replacement waits for every processor to be out of its
// gate once to know that no processor is still inside the old component.

#include <atomic>

#include <ucontext.h>

#include <presto/local_queue_pool.hpp>
#include <presto/processor.hpp>
#include <presto/synchro_object.hpp>
#include <presto/thread.hpp>

#include "asymmetric_fence.hpp"
#include "current.hpp"
#include "runtime_impl.hpp"

namespace presto::detail {

class RuntimeImpl;
class StackAllocator;
struct ForkRecord;
struct Transfer;

class Dispatch {
 public:
  // Entering announces the processor with a plain store; RuntimeImpl::quiesce() pairs the
  // light fence here with a heavy one, so a processor either is seen inside or sees the new
  // component.
  // The processor's quantum handler reads gate_depth_ on the same OS thread: the signal
  // fences keep the compiler from moving the gate's work outside the count.
  [[gnu::always_inline]] static void enter(Processor& p) noexcept {
    if (p.gate_depth_++ == 0) [[likely]] {  // a thread's own entry; nested ones are rarer
      p.in_gate_.store(true, std::memory_order_relaxed);
      light_fence();
    }
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  [[gnu::always_inline]] static void leave(Processor& p) noexcept {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (--p.gate_depth_ == 0) [[likely]] p.in_gate_.store(false, std::memory_order_release);
  }

  // What p.own_queue_ is under scheduler s (see Processor::own_queue_).
  static OwnedQueue* own_queue(const Scheduler& s, const Processor& p) noexcept;

  // Whether the caller runs on p's OS thread inside p's gate: there it may work on p's own
  // ready queue as its owner (detail::OwnedQueue).
  static bool owns(const Processor& p) noexcept { return current_processor() == &p && p.gate_depth_ != 0; }

  // On the current thread's own stack; p is self's processor (self.processor_, which the
  // caller has at hand: one dependent load less before the switch):
  static void yield(Processor& p, Thread& self);
  // this_thread::yield() for `self`, the thread running on p: Thread::yield, which is this
  // yield for a plain Thread, or the subclass's override.
  static void yield_running(Processor& p, Thread& self) {
    if (self.plain_) [[likely]] {
      yield(p, self);
    } else {
      self.yield();
    }
  }
  static void block(Thread& self, SynchroObject& so);  // so's spinlock held
  // self's body has returned (on its own stack, in thread_entry): ends self and gives p to the
  // next thread. Returns only when that thread has never run and starts on self's stack, with
  // no switch: it is then p's current thread, and thread_entry runs its body.
  static Thread& finish(Thread& self) noexcept;
  // Thread::await_termination: `self`, the running thread, joins `child`, which is ready;
  // child's spinlock is held. If child has never run and the scheduler gives it back
  // (Scheduler::withdraw), runs it here, on self's stack, to its end (RuntimeConfig::inline_joins)
  // and returns true with the spinlock held again; otherwise false, with nothing changed.
  static bool join_inline(Thread& self, Thread& child);
  // Preemption: as yield, for a thread that did not ask (quantum handler, pending preemption).
  static void preempt(Processor& p, Thread& self) noexcept;
  // In the quantum signal handler on p's OS thread, `context` the interrupted one: preempts
  // the running thread if it ran a whole quantum and may be preempted (see quantum_timer.hpp).
  static void quantum_expired(Processor& p, ucontext_t& context) noexcept;
  // A pending preemption: preempts p's thread unless p is inside the runtime.
  static void preempt_if_running(Processor& p) noexcept;

  // On a processor's native context: runs threads until none is ready; false if none was.
  static bool dispatch_from_native(Processor& p);

  // Puts t (state: ready) into its runtime's scheduler and wakes an idle processor if needed.
  static void make_ready(Thread& t);
  // Threads in the ready pool, read inside the caller's gate.
  static std::size_t ready_count(Processor& p) noexcept;
  // Threads ready for p alone, likewise: its own queue's under a waker-placement
  // LocalQueuePool (with those pinned to p), otherwise the pool's.
  static std::size_t ready_here(Processor& p) noexcept;
  // Whether the ready pool has a thread `p` may run (ThreadPool::has_work_for), likewise.
  static bool has_work_for(Processor& p) noexcept;

  // The processor's OS thread starts animating it: record its native context.
  static void start_processor(Processor& p);
  // Drops the context and stack of a thread that will never run again (abandoned).
  static void discard_stack(Thread& t, StackAllocator& stacks) noexcept;

  // Lazy forks (presto/detail/fork_record.hpp; their code is in fork_records.cpp).
  static ForkRecord* new_record(Processor& p) noexcept;  // for a fork on p, the calling processor
  static void launch_record(ForkRecord& rec);
  // JoinHandle's join (token: join(token), which never runs the record here): see fork_record.hpp.
  static bool join_record(ForkRecord& rec, const std::stop_token* token);
  // A record that becomes a thread now: in its queue's place (materialize_queued and _all), as
  // a drain takes it, or at its fork under components replaced since new_record.
  static Thread& materialize_taken(ForkRecord& rec) noexcept;
  // A record that p took out of a queue to run (its dispatch, its steal): a runner that will
  // run it, made now, with its processor's next records after it (run_records); or, if p is not
  // the calling processor (a drain), its thread. Inside p's gate.
  static Thread& take_to_run(Processor& p, ForkRecord& rec) noexcept;
  // A record a runner held, ended, whose handle is gone: freed (an exception in it is an orphan).
  static void free_dropped(RuntimeImpl& r, ForkRecord& rec) noexcept;
  // JoinHandle::thread() of a record that ended on a runner without a thread: a terminated one.
  static Thread& ended_thread(ForkRecord& rec) noexcept;
  // A record still queued made a thread in its place (under the runtime's replace_mutex);
  // false if it is not in a queue just now (a thief moves it, or a processor makes it a
  // thread: try again).
  static bool materialize_queued(ForkRecord& rec);
  // Every record queued in the pool in force made a thread in its place (a walk of the
  // threads, a new prototype, the end of a run). Records on their way between queues or run
  // by their joiners stay as they are.
  static void materialize_all_queued(RuntimeImpl& r) noexcept;
  static Thread* materialize_current(Processor& p) noexcept;

  // Stack-guard support.
  // The thread whose stack p runs on (a record run inline runs on its joiner's): for the fault
  // handler, which must not make a record a thread.
  static Thread* thread_on_stack(const Processor& p) noexcept {
    Thread* t = p.current_;
    return is_record(t) ? as_record(t)->host : t;
  }
  static const Stack& stack_of(const Thread& t) noexcept { return t.stack_; }
  static bool in_guard_page(const Thread& t, const void* address) noexcept;
  static bool below_stack(const Thread& t, const void* stack_pointer) noexcept;

  // Whether self may leave `heir`, a waiter it woke, deferred until it leaves its processor
  // (Thread::release_deferred past a monitor's release, defer_wakeup for a hand-off): self
  // holds no lock, both are threads of class Thread, one processor, the built-in scheduler
  // and pool.
  static bool may_defer_past_release(const Thread& self, const Thread& heir) noexcept;
  // SynchroObject::wakeup_handoff: leaves t, recalled from so, deferred on the running thread
  // (deferred_wake_, heir_lingers_) where that changes nothing but the hand-off; false where
  // t must be woken now. A partner handed off before is woken first.
  static bool defer_wakeup(SynchroObject& so, Thread& t);
  // Wakes the waiter t left deferred (Thread::deferred_wake_, set) as its body ends, or as it
  // becomes a joiner that waits; a pool that throws stops the run with its exception.
  static void wake_deferred_now(Thread& t) noexcept;

 private:
  // p.own_queue_, as the LocalQueuePool::Queue it is (see Processor::own_queue_).
  [[gnu::always_inline]] static LocalQueuePool::Queue* own_queue_of(const Processor& p) noexcept {
    return static_cast<LocalQueuePool::Queue*>(p.own_queue_.load(std::memory_order_acquire));
  }
  // The run ends or p is being removed: its thread goes to the pool even if none is ready.
  [[gnu::always_inline]] static bool must_leave(Processor& p) noexcept {
    return RuntimeImpl::of(p.runtime()).stopping() || p.phase_.load(std::memory_order_relaxed) != Processor::Phase::active;
  }
  static Thread* next_for(Processor& p);
  // Scheduler::next(p) and Scheduler::ready(t) on p, inline for the default components.
  static Thread* scheduler_next(RuntimeImpl& r, Processor& p);
  static void scheduler_ready(RuntimeImpl& r, Processor& p, Thread& t);
  static bool scheduler_withdraw(RuntimeImpl& r, Processor& p, Thread& t);
  // The common yield, inside p's gate: self and the first thread of p's own queue change places
  // under one hold of the queue's lock. False (nothing done) where it does not apply.
  static bool yield_in_place(RuntimeImpl& r, Processor& p, Thread& self);
  // Whether self may run child inline (everything but the withdrawal).
  static bool may_join_inline(RuntimeImpl& r, Processor& p, const Thread& self, const Thread& child) noexcept;
  // Whether the stack of `host`, which the caller runs on, has room for an inline child: the
  // stack_size it is promised, and kInlineMargin for the frames of join_inline, run_inline and
  // run_body (or of a record's call), and a signal frame (preemption).
  static constexpr std::size_t kInlineMargin = 8 * 1024;
  [[gnu::always_inline]] static bool has_inline_room(const RuntimeImpl& r, const Thread& host) noexcept {
    const auto* frame = static_cast<const char*>(__builtin_frame_address(0));
    const auto* base = static_cast<const char*>(host.stack_.base);
    return base != nullptr && frame > base && static_cast<std::size_t>(frame - base) >= r.stack_size + kInlineMargin;
  }
  // Runs child, withdrawn from the scheduler, on self's stack; inside p's gate on entry.
  // Returns whether child's spinlock is held (end_thread kept it); the caller needs it held.
  static bool run_inline(Processor& p, Thread& self, Thread& child);
  // The end of `child`, run inline by `self` (a thread's inline join, or a record's that became
  // a thread): self is p's current thread again, wherever child ended. Returns whether child's
  // spinlock is held (as end_thread).
  static bool end_inline(Thread& self, Thread& child) noexcept;
  // A record taken back out of its queue by its joiner on p (inside p's gate): from p's own
  // queue `own`, or, stolen, from the queue q of another processor. False if it is not there.
  static bool withdraw_record(Processor& p, LocalQueuePool::Queue& own, ForkRecord& rec) noexcept;
  static bool withdraw_stolen(Processor& p, OwnedQueue* q, ForkRecord& rec) noexcept;
  // The join's own run of a record it withdrew from a queue of the pool in force (ran); else
  // whether it is not in one just now (elsewhere) or may not run here (cannot).
  enum class Here { ran, elsewhere, cannot };
  static Here run_here(ForkRecord& rec);
  // join_record's other cases: a record with a thread (false), one a runner holds, one on its
  // way between queues, one not to be run here.
  static bool join_elsewhere(ForkRecord& rec, const std::stop_token* token);
  static void run_record(Processor& p, ForkRecord& rec, Thread* self, Thread& host);
  // Runs rec as a call on host's stack, self (host, or a record it runs) current again after;
  // p's gate entered on entry, left here.
  static void call_record(Processor& p, ForkRecord& rec, Thread* self, Thread& host) noexcept;
  // A runner's body, its next record (in p's gate), and a record's end there.
  static void run_records(ForkRecord& first) noexcept;
  static ForkRecord* next_to_run(Processor& p) noexcept;
  static void end_on_runner(ForkRecord& rec) noexcept;
  // The join of a record a runner holds: until it ends (token: or a stop is requested).
  static void await_runner(ForkRecord& rec, const std::stop_token* token);
  static Thread& make_running_thread(Processor& p, ForkRecord& rec) noexcept;
  static LocalQueuePool* pool_in_force(const RuntimeImpl& r) noexcept;
  // q if it is one of the queues of the pool in force, else nullptr: q, a record's last queue,
  // may be one freed since (a replaced pool's, or one set_processors made again).
  static OwnedQueue* queue_of_pool_in_force(const RuntimeImpl& r, OwnedQueue* q) noexcept;
  // t's affinity as a number (Thread::kAnyProcessor: none).
  static std::size_t pinned_to(const Thread& t) noexcept;
  static Thread* next_or_stop(Processor& p) noexcept;
  // t becomes p's running thread (its context is switched to, or it takes over p's stack).
  static void make_current(Processor& p, Thread& t) noexcept;
  static Thread* heir_or_next(Processor& p, Thread& self) noexcept;
  static void yield_to_heir(Processor& p, Thread& self);
  // checked: the caller has seen that switch_slow_checks has nothing to do (from's stack is
  // guarded, to has a context, no debug logging), as yield_in_place does.
  static void switch_to(Processor& p, Thread* from, ExecutionContext& here, Thread* to, bool checked = false);
  static void complete(Processor& p, void* from_context) noexcept;
  static void complete_other(Processor& p, Thread* from, Processor::After after, void* from_context) noexcept;
  static void switch_slow_checks(Processor& p, Thread* from, Thread*& to);
  static void bind_stack(Processor& p, Thread& t);
  static void retire(Processor& p, Thread& t) noexcept;
  // The end of t, whose body returned, on p: it leaves the registry, becomes terminated and its
  // joiner is woken (unless that is `running_joiner`, which runs it inline). From then on t may
  // be reused or destroyed by its joiner or owner. Returns true, with t's spinlock still held,
  // when running_joiner is t's joiner and nothing else is owed: the joiner unlocks it.
  static bool end_thread(Processor& p, Thread& t, const Thread* running_joiner) noexcept;
  static void release_dead_stack(Processor& p) noexcept;
  static void thread_entry(Transfer transfer);
};

}  // namespace presto::detail
