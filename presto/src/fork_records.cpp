// Lazy forks: records of forks that become threads only when something needs one
// (presto/detail/fork_record.hpp; docs/design/runtime.md, "Lazy forks").

#include <presto/detail/fork_record.hpp>

#include <new>
#include <typeinfo>

#include <spdlog/spdlog.h>

#include <presto/detail/cpu.hpp>
#include <presto/local_queue_pool.hpp>
#include <presto/stop_token.hpp>
#include <presto/this_thread.hpp>

#include "current.hpp"
#include "dispatch.hpp"
#include "owned_queue_owner.hpp"
#include "race_point.hpp"
#include "runtime_impl.hpp"

namespace presto::detail {

namespace {

RuntimeImpl& impl_of(const ForkRecord& r) noexcept { return RuntimeImpl::of(*r.runtime); }
RuntimeImpl& impl_of(const Processor& p) noexcept { return RuntimeImpl::of(p.runtime()); }

// The calling OS thread's processor if it belongs to `r`'s runtime, else nullptr.
Processor* own_processor(const RuntimeImpl& r) noexcept {
  Processor* p = current_processor();
  return p != nullptr && &p->runtime() == &r.rt ? p : nullptr;
}

[[noreturn, gnu::cold]] void no_block_for(RuntimeImpl& r, const ForkRecord& rec) noexcept {
  r.logger->critical("no memory for the control block of thread {}, a lazy fork that must become a thread now: {}",
                     rec.id, exception_text(std::current_exception()));
  std::terminate();
}

// A control block for `rec`, which must become a thread now: without one the process ends.
Thread& block_for(RuntimeImpl& r, const ForkRecord& rec) noexcept {
  try {
    return r.record_block();
  } catch (...) {
    no_block_for(r, rec);
  }
}

}  // namespace

std::string describe(const ForkRecord& rec) {
  const Thread* t = rec.thread.load(std::memory_order_acquire);
  return t != nullptr ? t->describe() : "thread '<unnamed>' (id " + std::to_string(rec.id) + ")";
}

// --- the records' memory ----------------------------------------------------------------

[[gnu::always_inline]] inline ForkRecord* RuntimeImpl::take_record(Processor& p) noexcept {
  ProcessorState& ps = *p.state_;
  if (ps.free_records.empty()) [[unlikely]] return refill_and_take(ps);
  return &ps.free_records.pop();
}

ForkRecord* RuntimeImpl::refill_and_take(ProcessorState& ps) noexcept {
  if (!ps.spilled.empty()) {
    ps.spilled.move_to(ps.free_records);
  } else {
    {
      std::lock_guard guard(records_lock);
      shared_free_records.move_to(ps.free_records);
    }
    if (ps.free_records.empty() && !add_record_slab(ps)) return nullptr;
  }
  return &ps.free_records.pop();
}

bool RuntimeImpl::add_record_slab(ProcessorState& ps) noexcept {
  std::unique_ptr<ForkRecord[]> slab(new (std::nothrow) ForkRecord[kRecordSlab]);
  if (!slab) return false;
  ForkRecord* first = slab.get();
  for (std::size_t i = 0; i + 1 < kRecordSlab; ++i) slab[i].next_free = &slab[i + 1];
  {
    std::lock_guard guard(records_lock);
    try {
      record_slabs.push_back(std::move(slab));
    } catch (...) {
      return false;
    }
  }
  RecordChain chain{first, first + (kRecordSlab - 1), kRecordSlab};
  chain.move_to(ps.free_records);
  return true;
}

[[gnu::always_inline]] inline void RuntimeImpl::give_back(ForkRecord& rec) noexcept {
  PRESTO_RACE_POINT("RuntimeImpl::give_back: a record about to be freed");
  rec.task.reset();
  Processor* const p = own_processor(*this);
  if (p != nullptr) [[likely]] {
    ProcessorState& ps = *p->state_;
    if (ps.free_records.count < ProcessorState::kKeptRecords) [[likely]] {
      ps.free_records.push(rec);
      return;
    }
    // Inline too: a processor that joins many records in a row (Figure 3's main, 40,000 a
    // product) spills all but the first kKeptRecords.
    ps.spilled.push(rec);
    if (ps.spilled.count < ProcessorState::kSpilledRecords) [[likely]] return;
  }
  give_back_beyond(rec, p);
}

void RuntimeImpl::give_back_beyond(ForkRecord& rec, Processor* p) noexcept {
  std::lock_guard guard(records_lock);
  if (p != nullptr) {
    p->state_->spilled.move_to(shared_free_records);  // rec is in it
  } else {
    shared_free_records.push(rec);
  }
}

void RuntimeImpl::release_records(ProcessorState& ps) noexcept {
  std::lock_guard guard(records_lock);
  ps.free_records.move_to(shared_free_records);
  ps.spilled.move_to(shared_free_records);
}

std::size_t RuntimeImpl::records_made() const noexcept {
  std::lock_guard guard(records_lock);
  return record_slabs.size() * kRecordSlab;
}

void RuntimeImpl::count_records(std::int64_t change) noexcept {
  if (Processor* p = own_processor(*this)) {
    std::atomic<std::int64_t>& n = p->state_->records;  // written by p only
    n.store(n.load(std::memory_order_relaxed) + change, std::memory_order_relaxed);
  } else {
    external_records.fetch_add(change, std::memory_order_relaxed);
  }
}

// --- making threads of records --------------------------------------------------------------

Thread& RuntimeImpl::record_block() {
  // A plain Thread, as the fork would have made under the prototype in force then (records are
  // made only under a plain one; set_thread_prototype may have installed another since).
  if (records_allowed.load(std::memory_order_acquire)) {
    Thread& t = make_thread(nullptr);
    if (typeid(t) == typeid(Thread)) [[likely]] return t;
    delete &t;
  }
  auto t = std::make_unique<Thread>();
  t->plain_ = true;
  t->forked_ = true;
  t->generation_ = 0;  // deleted, not cached, when it ends: the cache holds the prototype's class
  threads_created.fetch_add(1, std::memory_order_relaxed);
  return *t.release();
}

void RuntimeImpl::adopt_record(Thread& t, ForkRecord& rec) noexcept {
  t.runtime_ = &rt;
  t.id_ = rec.id;
  try {
    if (Processor* p = own_processor(*this)) {
      p->state_->registry.add(t);
    } else {
      external_registry.add_shared(t);
    }
  } catch (...) {
    no_block_for(*this, rec);
  }
  count_records(-1);
  t.set_state(ThreadState::ready);
}

bool Dispatch::materialize_queued(ForkRecord& rec) {
  RuntimeImpl& r = impl_of(rec);
  std::lock_guard lock(r.replace_mutex);  // the pool in force stays in force meanwhile
  if (rec.thread.load(std::memory_order_acquire) != nullptr) return true;
  OwnedQueue* q = queue_of_pool_in_force(r, rec.queue.load(std::memory_order_acquire));
  if (q == nullptr) return false;  // on its way from one queue to another
  // The block is made in the queue's hold, once the record is seen there: never one too many.
  return q->replace_record(rec, [](ForkRecord& queued) -> Thread& { return materialize_taken(queued); });
}

void Dispatch::materialize_all_queued(RuntimeImpl& r) noexcept {
  LocalQueuePool* local = pool_in_force(r);
  if (local == nullptr) return;
  for (std::size_t i = 0; i < local->count_; ++i) {
    local->queues_[i].replace_records([](ForkRecord& queued) -> Thread& { return materialize_taken(queued); });
  }
}

void RuntimeImpl::materialize_for_walk() noexcept {
  records_frozen.store(true, std::memory_order_relaxed);
  quiesce();  // no steal is under way: none starts while frozen
  Dispatch::materialize_all_queued(*this);
  quiesce();  // a processor that took a record out of its queue meanwhile has made it a thread
}

LocalQueuePool* Dispatch::pool_in_force(const RuntimeImpl& r) noexcept {
  Scheduler& s = *r.scheduler.load(std::memory_order_acquire);
  return s.plain_ ? s.pool().local_ : nullptr;
}

OwnedQueue* Dispatch::queue_of_pool_in_force(const RuntimeImpl& r, OwnedQueue* q) noexcept {
  LocalQueuePool* local = pool_in_force(r);
  if (local == nullptr || q == nullptr) return nullptr;
  // q is compared, not dereferenced: a record keeps the queue it was last placed in after it
  // leaves it, and that queue may have been freed since (set_processors makes the queues again;
  // replace_pool hands the old pool back to be destroyed). Only the address of one of the
  // queues in force counts. (A test that q lay within the array of queues let through, once in
  // thousands of set_processors, an old queue's address that fell in the middle of a new one:
  // the join then took a "lock" inside another queue's fields, and a processor dispatched a
  // freed record from the queue it had corrupted.)
  const auto first = reinterpret_cast<std::uintptr_t>(static_cast<OwnedQueue*>(&local->queues_[0]));
  const auto at = reinterpret_cast<std::uintptr_t>(q);
  if (at < first) return nullptr;
  const std::uintptr_t i = (at - first) / sizeof(LocalQueuePool::Queue);
  return i < local->count_ && static_cast<OwnedQueue*>(&local->queues_[i]) == q ? q : nullptr;
}

// --- the dispatch side ------------------------------------------------------------------
// The pieces of the hot paths are always_inline, each used once: a fork's launch, a join that
// runs its record here, and a runner's loop are each one function, with no calls of their own
// but the body's (callgrind, tools/count-instructions: fork-join 407 -> 379 instructions,
// batch-dispatched 456 -> 414).

[[gnu::always_inline]] inline void Dispatch::launch_record(ForkRecord& rec) {
  Processor& p = *current_processor();  // a presto thread of the runtime (new_record saw it)
  RuntimeImpl& r = impl_of(p);
  if (r.halting.load(std::memory_order_relaxed)) [[unlikely]] r.revived.store(true, std::memory_order_release);
  ProcessorState& ps = *p.state_;
  rec.id = r.take_id(ps);
  rec.runtime = &p.runtime();
  rec.thread.store(nullptr, std::memory_order_relaxed);
  rec.state.store(ForkRecord::kQueued, std::memory_order_relaxed);
  enter(p);
  LocalQueuePool::Queue* q = own_queue_of(p);
  if (q == nullptr || !r.records_allowed.load(std::memory_order_relaxed)) [[unlikely]] {
    // The scheduler, the pool or the prototype was replaced since new_record: a thread after all.
    leave(p);
    r.count_records(1);
    make_ready(materialize_taken(rec));
    return;
  }
  // The only processor is the one running this code: nobody to wake.
  const bool alone = r.processors.active() == 1;
  bool check;
  try {
    check = q->owner_push_record(rec, q->pool->order_ == LocalQueuePool::Order::lifo, alone);
  } catch (...) {
    leave(p);
    throw;
  }
  std::atomic<std::int64_t>& n = ps.records;  // written by p only
  n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  leave(p);
  // No check where an earlier push's covers this one (OwnedQueue::owner_push_record).
  if (check) r.wake_if_needed();
}

Thread& Dispatch::materialize_taken(ForkRecord& rec) noexcept {
  RuntimeImpl& r = impl_of(rec);
  Thread& t = block_for(r, rec);
  r.adopt_record(t, rec);
  rec.task.relocate_to(t.task_);
  rec.thread.store(&t, std::memory_order_release);  // the last access to rec
  return t;
}

[[gnu::always_inline]] inline bool Dispatch::withdraw_record(Processor& p, LocalQueuePool::Queue& own, ForkRecord& rec) noexcept {
  OwnedQueue* q = rec.queue.load(std::memory_order_relaxed);
  PRESTO_RACE_POINT("Dispatch::withdraw_record: between the record's queue and its withdrawal");
  if (q == &own) [[likely]] return own.owner_withdraw_record(rec);
  return withdraw_stolen(p, q, rec);
}

bool Dispatch::withdraw_stolen(Processor& p, OwnedQueue* q, ForkRecord& rec) noexcept {
  // Stolen into another processor's queue of the same pool (which stays in force while p is
  // inside its gate): take it from there.
  q = queue_of_pool_in_force(impl_of(p), q);
  return q != nullptr && q->withdraw_record(rec);
}

[[gnu::always_inline]] inline Dispatch::Here Dispatch::run_here(ForkRecord& rec) {
  Processor* const p = current_processor();  // read once: nothing here switches before the call
  if (p == nullptr || &p->runtime() != rec.runtime) return Here::cannot;
  RuntimeImpl& r = impl_of(*p);
  Thread* const self = p->current_;
  Thread& host = is_record(self) ? *as_record(self)->host : *self;
  if (!r.inline_joins || !has_inline_room(r, host)) return Here::cannot;
  enter(*p);
  LocalQueuePool::Queue* const own = own_queue_of(*p);  // in force while p is in its gate
  if (own == nullptr || must_leave(*p)) [[unlikely]] {
    leave(*p);
    return Here::cannot;
  }
  if (!withdraw_record(*p, *own, rec)) {
    leave(*p);
    return Here::elsewhere;
  }
  run_record(*p, rec, self, host);
  return Here::ran;
}

[[gnu::always_inline]] inline bool Dispatch::join_record(ForkRecord& rec, const std::stop_token* token) {
  // The common case first: still queued, on this processor or stolen to another's queue, run
  // here. (A record with a thread, one a runner holds, one on its way: join_elsewhere.) A record
  // made a thread in its queue is not withdrawn (its thread took its slot: replace_record), so
  // run_here need not be told of its thread.
  if (token == nullptr && rec.state.load(std::memory_order_acquire) == ForkRecord::kQueued &&
      run_here(rec) == Here::ran) [[likely]] {
    return true;
  }
  return join_elsewhere(rec, token);
}

bool Dispatch::join_elsewhere(ForkRecord& rec, const std::stop_token* token) {
  Backoff backoff;
  for (;;) {
    // The thread before the state: a body a runner holds makes its thread after the runner
    // stored kOnRunner, so a thread seen here comes with that state if it is a runner's. (Read
    // the other way round, a thread made on a runner between the two loads looked like one
    // made in the queue, and the record was given back while the runner ran it.)
    Thread* const thread = rec.thread.load(std::memory_order_acquire);
    PRESTO_RACE_POINT("join_elsewhere: between the record's thread and its state");
    const std::uint32_t how = rec.state.load(std::memory_order_acquire) & ForkRecord::kHow;
    if (how == ForkRecord::kOnRunner) {
      await_runner(rec, token);
      return true;
    }
    if (thread != nullptr) return false;
    if (how == ForkRecord::kInlineRun) [[unlikely]] {
      // Joined from inside its own body (or a body it runs): as the thread it is.
      if (Processor* p = current_processor()) p->current_thread();
      rec.thread.load(std::memory_order_acquire)->await_termination();  // throws: it cannot end first
      throw UsageError("thread " + std::to_string(rec.id) + " was joined while its joiner runs it");
    }
    if (token == nullptr) {
      const Here here = run_here(rec);
      if (here == Here::ran) return true;
      if (here == Here::elsewhere) {
        // Not in a queue just now: a thief carries it to its own queue, or a processor has
        // taken it to run (a runner will hold it) or a drain to make it a thread. Soon seen.
        backoff.pause();
        continue;
      }
    }
    // Not to be run here (a cancellable join, an OS thread's, no room on the stack): its
    // thread, made in its queue now, is joined instead (or, on its way, it is seen again).
    if (!materialize_queued(rec)) backoff.pause();
  }
}

[[gnu::always_inline]] inline void Dispatch::run_record(Processor& p, ForkRecord& rec, Thread* self, Thread& host) {
  // In p's gate: rec is ours alone.
  rec.state.store(ForkRecord::kInlineRun, std::memory_order_relaxed);
  std::atomic<std::uint64_t>& count = p.state_->inline_joins;
  count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // p only
  call_record(p, rec, self, host);
}

[[gnu::always_inline]] inline void Dispatch::call_record(Processor& p, ForkRecord& rec, Thread* self, Thread& host) noexcept {
  // In p's gate. rec runs as a call under its own identity, the tagged record in p.current_,
  // until something asks for its thread (make_running_thread).
  rec.saved = self;
  rec.host = &host;
  p.current_ = tagged(rec);  // a dispatch, counted at the end (Processor::dispatches)
  leave(p);

  try {
    rec.task.invoke();
  } catch (...) {
    rec.task.store_exception(std::current_exception());
  }

  Thread* t = rec.thread.load(std::memory_order_relaxed);  // made on this processor, if at all
  if (t == nullptr) [[likely]] {
    // It never asked for its thread, so it never left p (leaving takes a thread).
    p.current_ = self;
    std::atomic<std::uint64_t>& ended = p.state_->threadless;  // written by p only; ends a live record too
    ended.store(ended.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return;
  }
  // It became a thread (and so did the record below it, if self is one): end it as an inline
  // join ends its child. It may have moved to another processor.
  t->end_body();
  Thread& joiner = is_record(self) ? *as_record(self)->thread.load(std::memory_order_relaxed) : *self;
  if (end_inline(joiner, *t)) t->spin_unlock();
}

// --- runners (docs/design/lazy-forks.md, step 3) ----------------------------------------

Thread& Dispatch::take_to_run(Processor& p, ForkRecord& rec) noexcept {
  // A runner only for p's own dispatch (a drain from elsewhere gets a thread).
  RuntimeImpl& r = impl_of(rec);
  if (current_processor() != &p) return materialize_taken(rec);
  // A runner is not a fork: its block is left out of threads_created and threads_recycled,
  // which with threadless_forks count every fork once (RuntimeStats).
  ProcessorState& ps = *p.state_;
  std::atomic<std::uint64_t>& recycled = ps.recycled;  // written by p only
  const std::uint64_t recycled_before = recycled.load(std::memory_order_relaxed);
  Thread& runner = block_for(r, rec);
  if (const std::uint64_t now = recycled.load(std::memory_order_relaxed); now != recycled_before) {
    recycled.store(now - 1, std::memory_order_relaxed);
  } else {
    r.threads_created.fetch_sub(1, std::memory_order_relaxed);
  }
  runner.runtime_ = &r.rt;
  runner.id_ = r.take_id(ps);
  try {
    ps.runners.add(runner);
  } catch (...) {
    no_block_for(r, rec);
  }
  // Nor is its dispatch one of a thread's (RuntimeStats::dispatches): its records' are counted.
  p.dispatches_.store(p.dispatches_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);  // p only
  runner.end_.store(Thread::kDetached, std::memory_order_relaxed);  // nobody joins it: freed at its end
  runner.task_.emplace([&rec] { run_records(rec); });
  rec.state.store(ForkRecord::kOnRunner, std::memory_order_release);
  runner.set_state(ThreadState::ready);
  return runner;
}

void Dispatch::run_records(ForkRecord& first) noexcept {
  // The runner's body: each record as a call (call_record), then the next one from the front of
  // its processor's own queue, for as long as the front holds a record.
  // Where it runs is read from the runner itself after the first time, never again from
  // thread-local storage: a body that blocked may have moved it to another OS thread.
  Thread& runner = *current_processor()->current_;
  ForkRecord* rec = &first;
  do {
    Processor& p = *runner.processor_;
    enter(p);
    call_record(p, *rec, &runner, runner);
    end_on_runner(*rec);
    Processor& q = *runner.processor_;
    enter(q);
    rec = next_to_run(q);
    leave(q);
  } while (rec != nullptr);
}

[[gnu::always_inline]] inline ForkRecord* Dispatch::next_to_run(Processor& p) noexcept {
  // In p's gate.
  if (must_leave(p) || impl_of(p).records_frozen.load(std::memory_order_relaxed)) [[unlikely]] return nullptr;
  LocalQueuePool::Queue* q = own_queue_of(p);
  if (q == nullptr || q->pinned->size() != 0) [[unlikely]] return nullptr;
  ForkRecord* rec = q->owner_pop_record();
  PRESTO_RACE_POINT("Dispatch::next_to_run: between the pop and kOnRunner");
  if (rec != nullptr) rec->state.store(ForkRecord::kOnRunner, std::memory_order_release);
  return rec;
}

[[gnu::always_inline]] inline void Dispatch::end_on_runner(ForkRecord& rec) noexcept {
  // Publishes the end. Unless the handle is gone (then the record is ours to free) or its joiner
  // waits (then `waiter`, written before kJoinerWaits, is read before kEnded lets the joiner go
  // on), the compare-exchange is the last access to rec.
  RuntimeImpl& r = impl_of(rec);
  PRESTO_RACE_POINT("Dispatch::end_on_runner: before the end is published");
  std::uint32_t s = rec.state.load(std::memory_order_acquire);
  Thread* waiter = nullptr;
  do {
    waiter = (s & ForkRecord::kJoinerWaits) != 0 ? rec.waiter.load(std::memory_order_relaxed) : nullptr;
  } while (!rec.state.compare_exchange_weak(s, s | ForkRecord::kEnded, std::memory_order_acq_rel, std::memory_order_acquire));
  if ((s & ForkRecord::kDropped) != 0) {
    free_dropped(r, rec);
    return;
  }
  if (waiter == nullptr) return;
  SynchroObject& ends = r.fork_ends;
  ends.spin_lock();
  const bool waits = ends.recall(*waiter);  // not if a cancelled join left kJoinerWaits behind
  ends.spin_unlock();
  if (waits) waiter->wakeup(ends);
}

void Dispatch::await_runner(ForkRecord& rec, const std::stop_token* token) {
  if ((rec.state.load(std::memory_order_acquire) & ForkRecord::kEnded) != 0) [[likely]] return;
  RuntimeImpl& r = impl_of(rec);
  Thread& me = current_thread();  // read once, before the sleep (a record running here becomes a thread)
  if (rec.thread.load(std::memory_order_acquire) == &me) {
    throw UsageError(me.describe() + " joined itself");
  }
  // A join may wait without sleeping: wake the waiter we signalled now, as a sleep would.
  if (me.deferred_wake_ != nullptr) [[unlikely]] me.wake_deferred();
  ForkEndObject& ends = r.fork_ends;
  std::optional<CancellableWait> cancellable;
  if (token != nullptr) cancellable.emplace(ends, *token);
  ForkEndObject::Wait wait{&me, &rec};  // linked while we wait, for a deadlock report
  ends.spin_lock();
  ends.add(wait);
  for (;;) {
    rec.waiter.store(&me, std::memory_order_relaxed);  // published by the fetch_or
    if ((rec.state.fetch_or(ForkRecord::kJoinerWaits, std::memory_order_acq_rel) & ForkRecord::kEnded) != 0) break;
    // A body that blocked, left blocked when its run ended, never ends.
    if (Thread* t = rec.thread.load(std::memory_order_acquire); t != nullptr && t->state() == ThreadState::abandoned) {
      ends.remove_waits_of(me);
      ends.spin_unlock();
      throw UsageError(me.describe() + " cannot join " + t->describe() + ": it was abandoned when its run ended");
    }
    if (!cancellable) {
      ends.block();
    } else if (cancellable->block() == WaitStatus::cancelled) {
      ends.spin_lock();
      ends.remove_waits_of(me);
      ends.spin_unlock();
      throw Cancelled(describe(rec), me.describe(), "join");  // as a thread's join names it
    }
    ends.spin_lock();
  }
  ends.remove_waits_of(me);
  ends.spin_unlock();
}

void Dispatch::free_dropped(RuntimeImpl& r, ForkRecord& rec) noexcept {
  // Its handle is gone and it has ended: nobody else touches it.
  if (rec.task.has_exception()) r.note_orphan_exception(describe(rec), rec.task.take_exception());
  free_record(rec);
}

Thread& Dispatch::ended_thread(ForkRecord& rec) noexcept {
  // A record that ended on a runner without a thread of its own, asked for its thread
  // (JoinHandle::thread()): a terminated one, made now; its result stays in the record.
  RuntimeImpl& r = impl_of(rec);
  Thread& t = block_for(r, rec);
  t.runtime_ = &r.rt;
  t.id_ = rec.id;
  t.set_state(ThreadState::terminated);
  t.end_.store(Thread::kEnded, std::memory_order_relaxed);
  rec.thread.store(&t, std::memory_order_release);
  return t;
}

Thread* Dispatch::materialize_current(Processor& p) noexcept {
  Thread* running = p.current_;
  if (!is_record(running)) return running;
  if (current_processor() != &p) return as_record(running)->host;  // asked from elsewhere: a glimpse
  return &make_running_thread(p, *as_record(running));
}

Thread& Dispatch::make_running_thread(Processor& p, ForkRecord& rec) noexcept {
  if (Thread* t = rec.thread.load(std::memory_order_relaxed)) return *t;
  Thread& joiner = is_record(rec.saved) ? make_running_thread(p, *as_record(rec.saved)) : *rec.saved;
  // The joiner waits from now on, as a join that sleeps: a waiter it left deferred past its
  // monitor's release (Thread::release_deferred) is woken.
  if (joiner.heir_lingers_) [[unlikely]] wake_deferred_now(joiner);
  RuntimeImpl& r = impl_of(p);
  Thread& t = block_for(r, rec);
  r.adopt_record(t, rec);
  // As run_inline sets up a thread it runs inline: its joiner waits on it, and it runs on the
  // joiner's stack, as p's current thread.
  enter(p);
  t.spin_lock();
  try {
    t.remember(joiner);
  } catch (...) {
    no_block_for(r, rec);
  }
  t.spin_unlock();
  joiner.set_state(ThreadState::blocked);
  t.host_ = &joiner;
  t.stack_ = joiner.stack_;
  t.context_ = joiner.context_;
  joiner.context_.fctx = nullptr;
  t.processor_ = &p;
  t.set_state(ThreadState::running);
  p.current_ = &t;
  // Its call's dispatch: it will not end threadless (Processor::dispatches).
  p.dispatches_.store(p.dispatches_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // p only
  rec.thread.store(&t, std::memory_order_release);
  leave(p);
  return t;
}

// --- the public side (fork_record.hpp) ------------------------------------------------------

[[gnu::always_inline]] inline ForkRecord* Dispatch::new_record(Processor& p) noexcept {
  RuntimeImpl& r = impl_of(p);
  if (!r.records_allowed.load(std::memory_order_relaxed) || p.own_queue_.load(std::memory_order_relaxed) == nullptr) {
    return nullptr;
  }
  return r.take_record(p);
}

ForkRecord* new_record(Runtime& rt) noexcept {
  Processor* p = current_processor();
  return p != nullptr && &p->runtime() == &rt ? Dispatch::new_record(*p) : nullptr;
}

ForkRecord* new_record_here() noexcept {
  Processor* p = current_processor();
  return p != nullptr ? Dispatch::new_record(*p) : nullptr;
}

void launch_record(ForkRecord& r) { Dispatch::launch_record(r); }

void drop_record(ForkRecord& r) noexcept { RuntimeImpl::of(current_processor()->runtime()).give_back(r); }

bool join_record(ForkRecord& r) { return Dispatch::join_record(r, nullptr); }

bool join_record(ForkRecord& r, const std::stop_token& token) { return Dispatch::join_record(r, &token); }

void release_record(ForkRecord& rec) {
  Backoff backoff;
  for (;;) {
    Thread* const thread = rec.thread.load(std::memory_order_acquire);  // before the state (join_elsewhere)
    PRESTO_RACE_POINT("release_record: between the record's thread and its state");
    const std::uint32_t how = rec.state.load(std::memory_order_acquire) & ForkRecord::kHow;
    if (how == ForkRecord::kOnRunner) {
      // The runner frees it at its end, or, if that came first, we do.
      if ((rec.state.fetch_or(ForkRecord::kDropped, std::memory_order_acq_rel) & ForkRecord::kEnded) != 0) {
        Dispatch::free_dropped(impl_of(rec), rec);
      }
      return;
    }
    if (how == ForkRecord::kInlineRun) {
      throw UsageError("the handle of thread " + std::to_string(rec.id) + " was detached or dropped inside its own join");
    }
    if (thread != nullptr) break;
    if (!Dispatch::materialize_queued(rec)) backoff.pause();  // on its way, or being taken to run
  }
  release_handle(take_thread(rec));  // a thread that runs on unjoined
}

Thread& record_thread(ForkRecord& rec) {
  Backoff backoff;
  const bool presto_thread = current_processor() != nullptr;  // read once: a yield below may move us
  for (;;) {
    const std::uint32_t state = rec.state.load(std::memory_order_acquire);
    if (Thread* t = rec.thread.load(std::memory_order_acquire)) return *t;
    if ((state & ForkRecord::kHow) == ForkRecord::kOnRunner) {
      if ((state & ForkRecord::kEnded) != 0) return Dispatch::ended_thread(rec);
      // A runner runs it as a call: it has a thread once it asks for one, or ends.
      if (presto_thread) {
        this_thread::yield();
      } else {
        backoff.pause();
      }
      continue;
    }
    if (state == ForkRecord::kInlineRun) {
      // Run by its joiner: by the rule of one thread at a time per handle, from inside its
      // own body (or one it runs), where asking for the running thread makes it one. (Out of
      // line: this loop may have yielded.)
      if (Processor* p = Processor::current()) p->current_thread();
      if (Thread* t = rec.thread.load(std::memory_order_acquire)) return *t;
      throw UsageError("the handle of thread " + std::to_string(rec.id) +
                       " was used while its joiner, on another thread, runs it; a handle is used by one thread at a time");
    }
    if (Dispatch::materialize_queued(rec)) continue;
    backoff.pause();  // on its way from one queue to another, or being made a thread: briefly
  }
}

Thread& take_thread(ForkRecord& rec) {
  // Only once it has a thread: join_record said so, or release_record saw it (a record a runner
  // holds stays the runner's until it ends).
  Thread& t = *rec.thread.load(std::memory_order_acquire);
  impl_of(rec).give_back(rec);
  return t;
}

void free_record(ForkRecord& rec) noexcept {
  RuntimeImpl& r = impl_of(rec);
  if (Thread* t = rec.thread.load(std::memory_order_relaxed)) r.release_joined(*t);
  r.give_back(rec);
}

Thread* materialize_current(const Processor& p) noexcept { return Dispatch::materialize_current(const_cast<Processor&>(p)); }

}  // namespace presto::detail
