#include "dispatch.hpp"

#include <spdlog/spdlog.h>

#include <presto/local_queue_pool.hpp>
#include <presto/runtime.hpp>
#include <presto/scheduler.hpp>

#include <csignal>

#include <presto/detail/preempt_count.hpp>

#include "context_switch.hpp"
#include "current.hpp"
#include "owned_queue_owner.hpp"
#include "quantum_timer.hpp"
#include "race_point.hpp"
#include "runtime_impl.hpp"
#if PRESTO_ASAN
#include <sanitizer/asan_interface.h>
#endif
#include "stack_allocator.hpp"
#include "stack_guard.hpp"

// The functions of this file are the hot path of every yield, sleep and wakeup: the small ones
// are forced inline so that a yield is one function deep between the pool calls and the jump.
#define PRESTO_INLINE inline __attribute__((always_inline))

namespace presto::detail {

namespace {
PRESTO_INLINE RuntimeImpl& impl_of(const Processor& p) noexcept { return RuntimeImpl::of(p.runtime()); }

// A dead thread's outermost frames (thread_entry down to the final switch) never return, so
// AddressSanitizer's redzones stay poisoned on its stack; clear them before the stack is reused.
inline void unpoison([[maybe_unused]] const Stack& s) noexcept {
#if PRESTO_ASAN
  if (!s.empty()) __asan_unpoison_memory_region(s.base, s.size);
#endif
}
}  // namespace

// A thread's affinity as a number (Thread::kAnyProcessor: none), without an optional.
PRESTO_INLINE std::size_t Dispatch::pinned_to(const Thread& t) noexcept { return t.affinity_.load(std::memory_order_relaxed); }

PRESTO_INLINE Thread* Dispatch::next_for(Processor& p) {
  if (must_leave(p)) [[unlikely]] return nullptr;  // the run ends, or p is being removed (Runtime::set_processors)
  return scheduler_next(impl_of(p), p);
}

// A plain Scheduler's next and ready are its pool's get and put; a waker-placement
// LocalQueuePool's get and put on the calling processor p, when p's own queue serves (no thread
// pinned to p waiting, a thread that is not pinned), are one queue operation. p.own_queue_ says
// whether that is the case for p (see Processor::own_queue_): then the calls below go straight
// to that queue and its pool (a final class: no virtual call). Everything else goes through
// the virtual calls, so a subclass of either sees every call.
PRESTO_INLINE Thread* Dispatch::scheduler_next(RuntimeImpl& r, Processor& p) {
  if (LocalQueuePool::Queue* q = own_queue_of(p); q != nullptr) [[likely]] {
    if (q->pinned->size() == 0) [[likely]] {
      if (Thread* t = q->owner_pop_front(); t != nullptr) [[likely]] {
        if (is_record(t)) [[unlikely]] return &take_to_run(p, *as_record(t));
        return t;
      }
    }
    return q->pool->get(p);
  }
  Scheduler& s = *r.scheduler.load(std::memory_order_acquire);
  return s.plain_ ? s.pool().get(p) : s.next(p);
}

PRESTO_INLINE void Dispatch::scheduler_ready(RuntimeImpl& r, Processor& p, Thread& t) {
  if (LocalQueuePool::Queue* q = own_queue_of(p); q != nullptr) [[likely]] {
    LocalQueuePool& local = *q->pool;
    if (pinned_to(t) == Thread::kAnyProcessor) [[likely]] {
      q->owner_push(t, local.order_ == LocalQueuePool::Order::lifo);
    } else {
      local.put(t);
    }
    return;
  }
  Scheduler& s = *r.scheduler.load(std::memory_order_acquire);
  if (s.plain_) {
    s.pool().put(t);
  } else {
    s.ready(t);
  }
}

PRESTO_INLINE bool Dispatch::scheduler_withdraw(RuntimeImpl& r, Processor& p, Thread& t) {
  if (LocalQueuePool::Queue* q = own_queue_of(p); q != nullptr) [[likely]] {
    return q->owner_withdraw(t) || q->pool->withdraw_elsewhere(t, p.index_);
  }
  Scheduler& s = *r.scheduler.load(std::memory_order_acquire);
  return s.plain_ ? s.pool().withdraw(t) : s.withdraw(t);
}

OwnedQueue* Dispatch::own_queue(const Scheduler& s, const Processor& p) noexcept {
  LocalQueuePool* local = s.plain_ ? s.pool().local_ : nullptr;
  return local != nullptr && p.index_ < local->count_ ? &local->queues_[p.index_] : nullptr;
}

std::size_t Dispatch::ready_count(Processor& p) noexcept {
  enter(p);
  std::size_t n = impl_of(p).scheduler.load(std::memory_order_acquire)->pool().size();
  leave(p);
  return n;
}

std::size_t Dispatch::ready_here(Processor& p) noexcept {
  enter(p);
  const LocalQueuePool::Queue* own = own_queue_of(p);
  const std::size_t n =
      own != nullptr ? own->size() + own->pinned->size() : impl_of(p).scheduler.load(std::memory_order_acquire)->pool().size();
  leave(p);
  return n;
}

bool Dispatch::has_work_for(Processor& p) noexcept {
  enter(p);
  bool work = impl_of(p).scheduler.load(std::memory_order_acquire)->pool().has_work_for(p);
  leave(p);
  return work;
}

// A yield with a plain Scheduler over a waker-placement LocalQueuePool, where p's own queue
// serves (no thread pinned to p waiting, self not pinned) and its first thread has run
// before: that thread and self change places in the queue under one owner's hold
// (OwnedQueue: no locked instruction while no other processor uses the queue), which is kept
// across the switch and released by the next context once self's context is saved
// (After::release_queue), so no thief or joiner takes self half-saved. Instead of a pop and a
// push under two holds, with the scheduler looked up again on the far side. The queue's size
// does not change. Anything else (an empty own queue, where the pool would steal; a thread
// that needs a stack; a run that is ending; a check or log the switch must make; a waiter
// self left deferred, which goes first) takes the general path.
PRESTO_INLINE bool Dispatch::yield_in_place(RuntimeImpl& r, Processor& p, Thread& self) {
  LocalQueuePool::Queue* own = own_queue_of(p);
  if (own == nullptr || own->pinned->size() != 0 || pinned_to(self) != Thread::kAnyProcessor || must_leave(p) ||
      !self.stack_.guarded || self.deferred_wake_ != nullptr || r.debug_logging) [[unlikely]] {
    return false;
  }
  LocalQueuePool::Queue& q = *own;
  if (q.size() == 0) return false;
  q.owner_acquire();
  Thread* next = q.front();
  if (next == nullptr || is_record(next) || next->context_.fctx == nullptr) [[unlikely]] {
    q.owner_release();
    return false;
  }
  q.exchange_front(self, q.pool->order_ == LocalQueuePool::Order::lifo);
  p.after_ = Processor::After::release_queue;
  p.release_ = &q;
  switch_to(p, &self, self.context_, next, true);
  return true;
}

// A yield of a thread that left a waiter it signalled deferred (Thread::release_deferred): the
// waiter runs next, or is made ready first. Out of line: the yield keeps its registers.
[[gnu::noinline]] void Dispatch::yield_to_heir(Processor& p, Thread& self) {
  Thread* next = heir_or_next(p, self);
  if (next == nullptr && !must_leave(p)) {
    leave(p);
    return;
  }
  p.after_ = Processor::After::requeue;
  switch_to(p, &self, self.context_, next);
}

void Dispatch::yield(Processor& p, Thread& self) {
  enter(p);
  if (yield_in_place(impl_of(p), p, self)) [[likely]] return;
  if (self.deferred_wake_ != nullptr) [[unlikely]] {
    yield_to_heir(p, self);
    return;
  }
  Thread* next = next_for(p);
  if (next == nullptr && !must_leave(p)) {
    leave(p);  // nothing else is ready: keep running
    return;
  }
  p.after_ = Processor::After::requeue;
  switch_to(p, &self, self.context_, next);
}

PRESTO_INLINE bool Dispatch::may_join_inline(RuntimeImpl& r, Processor& p, const Thread& self, const Thread& child) noexcept {
  // Only threads of class Thread itself, or of a subclass that allows it (Thread::
  // allow_inline_join: a subclass may depend on its own stack or its dispatch), joined by a
  // thread of class Thread (whose sleep the inline run stands for), on a default-size stack,
  // that may run here. (Whether it has ever run is known only once it is withdrawn: its
  // context is written by the processor that runs it, without child's lock.)
  if (!r.inline_joins || !self.plain_ || !(child.plain_ || child.inline_joinable_) || child.stack_size_ != 0 ||
      child.runtime_ != self.runtime_) {
    return false;
  }
  if (const std::size_t pinned = pinned_to(child); pinned != Thread::kAnyProcessor && pinned != p.index_) return false;
  return has_inline_room(r, self);
}

bool Dispatch::join_inline(Thread& self, Thread& child) {
  if (self.external_) return false;  // an OS thread has no presto stack to lend
  Processor& p = *self.processor_;
  RuntimeImpl& r = impl_of(p);
  if (!may_join_inline(r, p, self, child)) return false;
  enter(p);
  bool taken = false;
  try {
    taken = !must_leave(p) && scheduler_withdraw(r, p, child);
  } catch (...) {
    leave(p);
    throw;
  }
  if (taken && child.context_.fctx != nullptr) [[unlikely]] {
    // It ran before and is ready again (it yielded, or was woken): it has a stack and a
    // context of its own. Put it back where it was going.
    try {
      scheduler_ready(r, p, child);
    } catch (...) {
      r.request_stop(std::current_exception());  // as in complete(): the pool broke its contract
    }
    taken = false;
  }
  if (!taken) {
    leave(p);
    return false;
  }
  if (!run_inline(p, self, child)) child.spin_lock();
  return true;
}

bool Dispatch::run_inline(Processor& p, Thread& self, Thread& child) {
  // child is ours alone: in no pool and never run. self waits on it as a blocked joiner would,
  // so that a second joiner, a deadlock report and the debugger see the join, while self's
  // stack runs child as a call. Inside the gate, so no preemption sees the change of identity.
  child.remember(self);
  self.set_state(ThreadState::blocked);
  child.spin_unlock();
  child.host_ = &self;
  child.stack_ = self.stack_;
  child.context_ = self.context_;  // the sanitizers' view of the stack; fctx is set if it switches out
  self.context_.fctx = nullptr;    // nothing of self is saved apart from child (the debugger says so)
  child.processor_ = &p;
  child.set_state(ThreadState::running);
  p.current_ = &child;
  p.dispatches_.store(p.dispatches_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // p only
  std::atomic<std::uint64_t>& count = p.state_->inline_joins;
  count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // p only
  if (impl_of(p).debug_logging) [[unlikely]] impl_of(p).logger->debug("processor {} runs {} inline in its joiner {}", p.index_, child.describe(), self.describe());
  leave(p);

  child.run_body();
  return end_inline(self, child);
}

bool Dispatch::end_inline(Thread& self, Thread& child) noexcept {
  // If child blocked, it may have ended on another processor.
  Processor& q = *child.processor_;
  enter(q);
  if (!StackAllocator::canary_intact(child.stack_)) report_overflow(child);
  self.context_ = std::exchange(child.context_, ExecutionContext{});
  child.stack_ = Stack{};
  child.host_ = nullptr;
  self.processor_ = &q;
  q.current_ = &self;
  const bool locked = end_thread(q, child, &self);  // recalls self from child's waiters, without waking it
  self.waiting_on_ = nullptr;
  self.set_state(ThreadState::running);
  leave(q);
  return locked;
}

void Dispatch::preempt(Processor& p, Thread& self) noexcept {
  enter(p);
  Thread* next = self.deferred_wake_ == nullptr ? next_or_stop(p) : heir_or_next(p, self);
  if (next == nullptr && !must_leave(p)) {
    leave(p);  // nothing else is ready: keep running
    return;
  }
  p.preemptions_.store(p.preemptions_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // p only
  p.after_ = Processor::After::requeue;
  switch_to(p, &self, self.context_, next);
}

void Dispatch::quantum_expired(Processor& p, ucontext_t& context) noexcept {
  Thread* self = p.current_;
  const std::uint64_t dispatches = p.dispatches_.load(std::memory_order_relaxed);
  if (self == nullptr || dispatches != p.quantum_dispatches_) {
    // Idle, or another thread was dispatched during this quantum: it gets a whole one.
    p.quantum_dispatches_ = dispatches;
    tl_preempt_pending = false;
    return;
  }
  // Inside the runtime, or in code of a shared object (libc's malloc may hold its lock): the
  // next quantum tries again. Holding a spinlock or in a NonPreemptable region: preempted when
  // the last one is released.
  if (p.gate_depth_ != 0 || !QuantumTimer::in_application(reinterpret_cast<const void*>(context.uc_mcontext.gregs[REG_RIP]))) {
    return;
  }
  if (tl_preempt_disabled != 0) {
    tl_preempt_pending = true;
    return;
  }
  preempt(p, *self);
  // Resumed, perhaps on another processor's OS thread: the signal frame must give back this
  // OS thread's own alternate stack and signal mask, not those of the thread it was taken on.
  sigaltstack(nullptr, &context.uc_stack);
  pthread_sigmask(SIG_SETMASK, nullptr, &context.uc_sigmask);
}

void preempt_pending() noexcept {
  tl_preempt_pending = false;
  Processor* p = Processor::current();
  if (p != nullptr && tl_preempt_disabled == 0) Dispatch::preempt_if_running(*p);
}

void Dispatch::preempt_if_running(Processor& p) noexcept {
  if (p.current_ != nullptr && p.gate_depth_ == 0) preempt(p, *p.current_);
}

// For a thread that must leave its processor (it sleeps or finishes): the next thread, or
// nullptr. A pool that throws here has broken its contract: the run is stopped with its
// exception rather than losing the leaving thread.
PRESTO_INLINE Thread* Dispatch::next_or_stop(Processor& p) noexcept {
  try {
    return next_for(p);
  } catch (...) {
    impl_of(p).request_stop(std::current_exception());
    return nullptr;
  }
}

// The thread that runs next on p as self goes to sleep there, inside p's gate, when self
// signalled `self.deferred_wake_` and has not woken it (Thread::may_hand_off_to holds:
// Thread::sleep_as_current woke it otherwise). If p's own ready queue is where the heir would
// go and is empty, the heir is what p would run next anyway: it runs now, without a trip
// through the queue (a monitor's ping-pong: signal, then wait). Otherwise it is made ready the
// usual way.
PRESTO_INLINE Thread* Dispatch::heir_or_next(Processor& p, Thread& self) noexcept {
  Thread& heir = *std::exchange(self.deferred_wake_, nullptr);
  self.heir_lingers_ = false;
  const LocalQueuePool::Queue* own = own_queue_of(p);
  const std::size_t pinned = pinned_to(heir);
  if (own != nullptr && own->size() == 0 && own->pinned->size() == 0 &&
      (pinned == Thread::kAnyProcessor || pinned == p.index_) && !must_leave(p)) [[likely]] {
    heir.waiting_on_ = nullptr;  // what Thread::wakeup does before it queues the thread
    heir.set_state(ThreadState::ready);
    return &heir;
  }
  try {
    heir.Thread::wakeup(*heir.waiting_on_);  // a plain thread: the base wakeup
  } catch (...) {
    impl_of(p).request_stop(std::current_exception());  // as in complete(): the pool broke its contract
  }
  return next_or_stop(p);
}

bool Dispatch::may_defer_past_release(const Thread& self, const Thread& heir) noexcept {
  // No lock held (one still held may be the one the heir needs next), threads of class Thread
  // (a subclass sees every wake-up when it happens). (Outside the gate own_queue_ may be about
  // to change: a scheduler or pool installed after the release sees the waiter's wake-up when
  // self leaves its processor.)
  const Processor& p = *self.processor_;
  return self.locks_held_ == 0 && self.may_hand_off_to(heir) && p.own_queue_.load(std::memory_order_relaxed) != nullptr &&
         impl_of(p).processors.active() == 1;
}

bool Dispatch::defer_wakeup(SynchroObject& so, Thread& t) {
  Processor* const p = current_processor();
  if (p == nullptr) return false;
  Thread* const me = p->current_;  // a fork run as a call is not made a thread for this
  if (me == nullptr || is_record(me)) return false;
  if (!t.recalled_asleep_on(so)) return false;  // t.wakeup(so) reports it
  if (me->heir_lingers_) [[unlikely]] me->wake_deferred();  // handed off before: woken first
  if (me->deferred_wake_ != nullptr || !me->may_defer_wake_of(t) || !may_defer_past_release(*me, t)) return false;
  me->deferred_wake_ = &t;
  me->heir_lingers_ = true;
  return true;
}

void Dispatch::wake_deferred_now(Thread& t) noexcept {
  try {
    t.wake_deferred();
  } catch (...) {
    impl_of(*t.processor_).request_stop(std::current_exception());  // as in heir_or_next
  }
}

void Dispatch::block(Thread& self, SynchroObject& so) {
  Processor& p = *self.processor_;
  enter(p);
  Thread* next = self.deferred_wake_ == nullptr ? next_or_stop(p) : heir_or_next(p, self);
  p.after_ = Processor::After::unlock;
  p.unlock_ = &so;
  switch_to(p, &self, self.context_, next);
}

Thread& Dispatch::finish(Thread& self) noexcept {
  Processor& p = *self.processor_;
  retire(p, self);  // from here on, `self` may belong to someone else; its stack is p.dead_stack_
  enter(p);
  Thread* next = next_or_stop(p);
  // A stack from the cache, whose frames below the body's unwind normally from here, may go
  // straight to a thread that has never run and wants such a stack (it would take one from the
  // cache): that thread starts here, on this stack, without a switch (thread_entry's loop).
  // Saved: a switch, a context's making and unmaking, and the cache's take and keep; the stack
  // stays warm. A thread that ran before, or one that wants a stack of its own size, gets the
  // switch, as does every thread while dispatches are logged.
  const RuntimeImpl& r = impl_of(p);
  if (next != nullptr && next->context_.fctx == nullptr && next->stack_size_ == 0 && p.dead_stack_.guarded &&
      p.dead_stack_.size == r.stack_reserve && !r.debug_logging) [[likely]] {
    next->stack_ = std::exchange(p.dead_stack_, Stack{});
    next->context_ = std::exchange(p.dead_context_, ExecutionContext{});  // this context, running
    next->preempt_disabled_ = 0;
    if constexpr (kCountPreemption) tl_preempt_disabled = 0;
    make_current(p, *next);
    leave(p);
    return *next;
  }
  p.after_ = Processor::After::finish;
  switch_to(p, nullptr, p.dead_context_, next);
  __builtin_unreachable();
}

bool Dispatch::dispatch_from_native(Processor& p) {
  enter(p);
  Thread* next = nullptr;
  try {
    next = next_for(p);
  } catch (...) {
    leave(p);
    throw;
  }
  if (next == nullptr) {
    leave(p);
    return false;
  }
  // Found work: if more is waiting, pass the word on to a parked processor now, not once this
  // thread gives the processor back. A waker that saw this processor spinning counted on it to
  // take its thread; it may have taken another (one pinned here, or one that never yields).
  if (ready_count(p) != 0 && !impl_of(p).stopping()) impl_of(p).wake_if_needed();
  p.after_ = Processor::After::nothing;
  switch_to(p, nullptr, p.native_, next);
  return true;
}

void Dispatch::bind_stack(Processor& p, Thread& t) {
  RuntimeImpl& r = impl_of(p);
  ProcessorState& ps = *p.state_;
  std::size_t size = t.stack_size_ != 0 ? StackAllocator::round_size(t.stack_size_) : r.stack_reserve;
  Stack s;
  if (size != r.stack_reserve || !r.free_lists->take_stack(ps.free, s)) s = r.stacks.allocate(size);
  t.stack_ = s;
  t.preempt_disabled_ = 0;
  // Colour the top of the stack: stacks lie a whole number of pages apart, so without an
  // offset every context is saved at the same offset within a page and a switch's restores
  // alias its saves (4K aliasing), costing up to 40% of a yield.
  const std::size_t colour = (reinterpret_cast<std::uintptr_t>(s.base) >> 12) % 32 * 128;
  make_context(t.context_, s.base, s.size - colour, &thread_entry);
}

// The rare cases of a switch: an unguarded stack to check, a first dispatch needing a stack,
// dispatch logging.
__attribute__((noinline)) void Dispatch::switch_slow_checks(Processor& p, Thread* from, Thread*& to) {
  if (from != nullptr && !StackAllocator::canary_intact(from->stack_)) report_overflow(*from);
  if (to != nullptr && to->context_.fctx == nullptr) {
    try {
      bind_stack(p, *to);
    } catch (...) {
      // No memory for a stack: the thread cannot run. Stop the run with the error rather
      // than lose it; it stays in the pool and is abandoned with the others.
      RuntimeImpl& r = impl_of(p);
      r.scheduler.load(std::memory_order_acquire)->ready(*to);
      r.request_stop(std::current_exception());
      to = nullptr;
    }
  }
  RuntimeImpl& r = impl_of(p);
  if (to != nullptr && r.logger->should_log(spdlog::level::debug)) {
    r.logger->debug("processor {} runs {}{}", p.index_, to->describe(),
                    from != nullptr ? " after " + from->describe() : std::string(" (from idle)"));
  }
}

PRESTO_INLINE void Dispatch::make_current(Processor& p, Thread& t) noexcept {
  t.processor_ = &p;
  t.set_state(ThreadState::running);
  p.current_ = &t;
  p.dispatches_.store(p.dispatches_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // p only
}

PRESTO_INLINE void Dispatch::switch_to(Processor& p, Thread* from, ExecutionContext& here, Thread* to, bool checked) {
  // Precondition: inside p's gate; p.after_ (and p.unlock_ or p.release_) say what the next
  // context does.
  // `here` is from's context, the native one, or a dead thread's.
  if (!checked && ((from != nullptr && !from->stack_.guarded) || (to != nullptr && to->context_.fctx == nullptr) ||
                    impl_of(p).debug_logging)) [[unlikely]] {
    switch_slow_checks(p, from, to);
  }
  p.from_ = from;
  // Preemption is disabled per running thread: save the leaver's count and restore the next
  // one's. A sleeper's SynchroObject spinlock goes with the switch (the next context unlocks it).
  if constexpr (kCountPreemption) {
    const unsigned handed = p.after_ == Processor::After::unlock ? 1 : 0;  // an owner's queue hold does not count
    if (from != nullptr) from->preempt_disabled_ = tl_preempt_disabled - handed;
    tl_preempt_disabled = (to != nullptr ? to->preempt_disabled_ : 0) + handed;
  }
  ExecutionContext* there = &p.native_;
  if (to != nullptr) {
    make_current(p, *to);
    there = &to->context_;
  } else {
    p.current_ = nullptr;
  }
  Transfer t = switch_context(here, *there, &p, p.after_ == Processor::After::finish, *p.exceptions_);
  // Resumed, perhaps on another processor: finish the switch that brought us here.
  complete(*static_cast<Processor*>(t.data), t.from);
}

// The common ends of a switch inline (a block's unlock, an in-place yield's release); the
// others out of line, so that every switch site keeps its registers to itself.
PRESTO_INLINE void Dispatch::complete(Processor& p, void* from_context) noexcept {
  Thread* from = p.from_;
  const Processor::After after = p.after_;
  p.after_ = Processor::After::nothing;
  if (after == Processor::After::unlock) [[likely]] {
    from->context_.fctx = from_context;
    PRESTO_RACE_POINT("Dispatch::complete: a blocked thread switched out, its object's spinlock still held");
    p.unlock_->spin_unlock();
    p.unlock_ = nullptr;
  } else if (after == Processor::After::release_queue) [[likely]] {
    from->context_.fctx = from_context;
    from->set_state(ThreadState::ready);
    p.release_->owner_release();
    p.release_ = nullptr;
  } else {
    complete_other(p, from, after, from_context);
  }
  leave(p);
}

void Dispatch::complete_other(Processor& p, Thread* from, Processor::After after, void* from_context) noexcept {
  switch (after) {
    case Processor::After::nothing:
      (from != nullptr ? from->context_ : p.native_).fctx = from_context;
      break;
    case Processor::After::requeue:
      from->context_.fctx = from_context;
      from->set_state(ThreadState::ready);
      try {
        const std::size_t pinned = pinned_to(*from);  // read while from is ours
        scheduler_ready(impl_of(p), p, *from);
        if (pinned != Thread::kAnyProcessor && pinned != p.index()) [[unlikely]] {
          impl_of(p).wake_processor(pinned);
        } else if (p.current_ != nullptr && pinned_to(*p.current_) != Thread::kAnyProcessor) [[unlikely]] {
          // p took a pinned thread, whose wake-up may have gone to a processor that could not
          // run it and parked again: wake one for the thread that yielded in its place.
          impl_of(p).wake_if_needed();
        }
      } catch (...) {
        impl_of(p).request_stop(std::current_exception());
      }
      break;
    case Processor::After::finish:
      release_dead_stack(p);
      break;
    case Processor::After::unlock:
    case Processor::After::release_queue:
      break;  // complete's own
  }
}

void Dispatch::thread_entry(Transfer transfer) {
  context_started();
  Processor& p = *static_cast<Processor*>(transfer.data);
  Thread* self = p.current_;  // nothing runs on p between its switch to us and this line
  complete(p, transfer.from);
  for (;;) {
    self->run_body();
    self = &finish(*self);  // returns only with a thread that starts on this stack
  }
}

void Dispatch::retire(Processor& p, Thread& t) noexcept {
  // On t's own stack, which stays in use until the switch away: hand it and the context to the
  // processor, then publish the termination (waking the joiner) so that the switch can go
  // straight to the joiner.
  if (!StackAllocator::canary_intact(t.stack_)) report_overflow(t);
  p.dead_stack_ = std::exchange(t.stack_, Stack{});
  p.dead_context_ = std::exchange(t.context_, ExecutionContext{});
  end_thread(p, t, nullptr);
}

bool Dispatch::end_thread(Processor& p, Thread& t, const Thread* running_joiner) noexcept {
  RuntimeImpl& r = impl_of(p);
  t.registry_->remove(t, t.registry_ == &p.state_->registry);
  const bool is_main = &t == r.main_thread;
  const bool holds_locks = t.locks_held_ != 0;
  if (holds_locks) [[unlikely]] r.finished_holding_locks(t);

  const bool failed_main = is_main && t.exception_ != nullptr;
  const bool forked = t.forked_;
  t.set_state(ThreadState::terminated);
  // The end is published by setting kEnded in t's end word. Nobody waits (the common case): one
  // compare-exchange on a line this processor holds, and no spinlock. A joiner that waits, or
  // may, set kJoinerWaits under the spinlock: then under the spinlock too, to take it back.
  // Every other writer of the word holds the spinlock, so there a plain store will do.
  std::uint32_t word = t.end_.load(std::memory_order_relaxed);
  bool locked = false;
  for (;;) {
    if (running_joiner != nullptr || (word & Thread::kJoinerWaits) != 0) {
      t.spin_lock();
      locked = true;
      word = t.end_.load(std::memory_order_relaxed);
      t.end_.store(word | Thread::kEnded, std::memory_order_release);
      break;
    }
    if (t.end_.compare_exchange_weak(word, word | Thread::kEnded, std::memory_order_acq_rel, std::memory_order_relaxed)) break;
  }
  // Unless t was forked and its handle is gone (kDetached, then t is ours), from here on a
  // joiner (or the owner of a user thread) may reuse or destroy t once the spinlock is free.
  const bool unjoinable = forked && (word & Thread::kDetached) != 0;
  std::exception_ptr orphan = unjoinable ? t.exception_ : nullptr;
  Thread* joiner = locked ? t.recall() : nullptr;
  // Run inline, t's only waiter is its joiner, t is joinable and not main: nothing is left to
  // do but the joiner's check of the end, under the lock it keeps (one exchange fewer a join).
  if (running_joiner != nullptr && joiner == running_joiner && !unjoinable && !failed_main) return true;
  if (locked) t.spin_unlock();

  if (joiner != nullptr && joiner != running_joiner) joiner->wakeup(t);
  if (failed_main) r.request_stop(nullptr);
  if (orphan) r.note_orphan_exception(t.describe(), orphan);
  if (unjoinable && !holds_locks) r.recycle(t);  // else kept until the runtime dies (see above)
  return false;
}

void Dispatch::release_dead_stack(Processor& p) noexcept {
  // On the next context: the dead thread's stack is no longer in use.
  RuntimeImpl& r = impl_of(p);
  ProcessorState& ps = *p.state_;
  destroy_context(p.dead_context_);
  Stack s = std::exchange(p.dead_stack_, Stack{});
  unpoison(s);
  if (s.size != r.stack_reserve || !r.free_lists->keep_stack(ps.free, s)) r.stacks.deallocate(s);
}

void Dispatch::make_ready(Thread& t) {
  RuntimeImpl& r = RuntimeImpl::of(*t.runtime_);
  if (r.halting.load(std::memory_order_relaxed)) [[unlikely]] r.revived.store(true, std::memory_order_release);
  const std::optional<std::size_t> pinned = t.affinity();  // read before t can run and finish
  Processor* p = current_processor();  // read once, before anything that may switch
  if (p != nullptr && &p->runtime() == t.runtime_) [[likely]] {
    enter(*p);
    try {
      scheduler_ready(r, *p, t);
    } catch (...) {
      leave(*p);
      throw;
    }
    leave(*p);
    if (r.processors.active() == 1) return;  // the only processor is the one running this code
  } else {
    std::lock_guard gate(r.external_gate);
    r.scheduler.load(std::memory_order_acquire)->ready(t);
  }
  if (pinned) [[unlikely]] r.wake_processor(*pinned);  // only that processor may take it
  r.wake_if_needed();
}

void Dispatch::start_processor(Processor& p) {
  init_native_context(p.native_);
  p.exceptions_ = exception_state_of_this_os_thread();
}

void Dispatch::discard_stack(Thread& t, StackAllocator& stacks) noexcept {
  if (t.host_ != nullptr) {  // borrowed from its joiner, which is discarded in turn
    t.stack_ = Stack{};
    t.context_ = ExecutionContext{};
    t.host_ = nullptr;
    return;
  }
  unpoison(t.stack_);
  destroy_context(t.context_);
  stacks.deallocate(t.stack_);
  t.stack_ = Stack{};
}

bool Dispatch::in_guard_page(const Thread& t, const void* address) noexcept {
  const auto* base = static_cast<const char*>(t.stack_.base);
  const auto* a = static_cast<const char*>(address);
  return t.stack_.guarded && base != nullptr && a < base && a >= base - StackAllocator::page_size();
}

bool Dispatch::below_stack(const Thread& t, const void* stack_pointer) noexcept {
  const auto* base = static_cast<const char*>(t.stack_.base);
  const auto* sp = static_cast<const char*>(stack_pointer);
  return base != nullptr && sp != nullptr && sp < base && base - sp < 64 * 1024 * 1024;
}

}  // namespace presto::detail
