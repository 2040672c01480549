// Lazy forks: records of forks that become threads only when something needs one
// (presto/detail/fork_record.hpp; docs/design/runtime.md, "Lazy forks").

#include <presto/detail/fork_record.hpp>

#include <new>
#include <typeinfo>

#include <spdlog/spdlog.h>

#include <presto/detail/cpu.hpp>
#include <presto/local_queue_pool.hpp>

#include "current.hpp"
#include "dispatch.hpp"
#include "owned_queue_owner.hpp"
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

// --- the records' memory ----------------------------------------------------------------

ForkRecord* RuntimeImpl::take_record(Processor& p) noexcept {
  ProcessorState& ps = *p.state_;
  if (ps.free_records == nullptr) [[unlikely]] {
    {
      std::lock_guard guard(records_lock);
      ps.free_records = std::exchange(shared_free_records, nullptr);
    }
    if (ps.free_records == nullptr && !add_record_slab(ps)) return nullptr;
  }
  ForkRecord* rec = ps.free_records;
  ps.free_records = rec->next_free;
  return rec;
}

bool RuntimeImpl::add_record_slab(ProcessorState& ps) noexcept {
  constexpr std::size_t kSlab = 256;
  std::unique_ptr<ForkRecord[]> slab(new (std::nothrow) ForkRecord[kSlab]);
  if (!slab) return false;
  for (std::size_t i = 0; i + 1 < kSlab; ++i) slab[i].next_free = &slab[i + 1];
  slab[kSlab - 1].next_free = ps.free_records;
  ps.free_records = &slab[0];
  std::lock_guard guard(records_lock);
  try {
    record_slabs.push_back(std::move(slab));
  } catch (...) {
    ps.free_records = slab[kSlab - 1].next_free;
    return false;
  }
  return true;
}

void RuntimeImpl::give_back(ForkRecord& rec) noexcept {
  rec.task.reset();
  rec.exception = nullptr;
  if (Processor* p = own_processor(*this)) {
    ProcessorState& ps = *p->state_;
    rec.next_free = ps.free_records;
    ps.free_records = &rec;
    return;
  }
  std::lock_guard guard(records_lock);
  rec.next_free = shared_free_records;
  shared_free_records = &rec;
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
  const auto first = reinterpret_cast<std::uintptr_t>(&local->queues_[0]);
  const auto end = reinterpret_cast<std::uintptr_t>(&local->queues_[0] + local->count_);
  const auto at = reinterpret_cast<std::uintptr_t>(q);
  return at >= first && at < end ? q : nullptr;
}

// --- the dispatch side ------------------------------------------------------------------

void Dispatch::launch_record(ForkRecord& rec) {
  Processor& p = *current_processor();  // a presto thread of the runtime (new_record saw it)
  RuntimeImpl& r = impl_of(p);
  if (r.halting.load(std::memory_order_relaxed)) [[unlikely]] r.revived.store(true, std::memory_order_release);
  ProcessorState& ps = *p.state_;
  if (ps.next_id == ps.id_limit) [[unlikely]] {
    ps.next_id = r.id_source.fetch_add(ProcessorState::kIdBlock, std::memory_order_relaxed);
    ps.id_limit = ps.next_id + ProcessorState::kIdBlock;
  }
  rec.id = ps.next_id++;
  rec.runtime = &p.runtime();
  rec.thread.store(nullptr, std::memory_order_relaxed);
  rec.state.store(ForkRecord::State::queued, std::memory_order_relaxed);
  enter(p);
  LocalQueuePool::Queue* q = own_queue_of(p);
  if (q == nullptr || !r.records_allowed.load(std::memory_order_relaxed)) [[unlikely]] {
    // The scheduler, the pool or the prototype was replaced since new_record: a thread after all.
    leave(p);
    r.count_records(1);
    make_ready(materialize_taken(rec));
    return;
  }
  try {
    q->owner_push_record(rec, q->pool->order_ == LocalQueuePool::Order::lifo);
  } catch (...) {
    leave(p);
    throw;
  }
  std::atomic<std::int64_t>& n = ps.records;  // written by p only
  n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  leave(p);
  if (r.processors.active() == 1) return;  // the only processor is the one running this code
  r.wake_if_needed();
}

Thread& Dispatch::materialize_taken(ForkRecord& rec) noexcept {
  RuntimeImpl& r = impl_of(rec);
  Thread& t = block_for(r, rec);
  r.adopt_record(t, rec);
  rec.task.relocate_to(t.task_);
  rec.thread.store(&t, std::memory_order_release);  // the last access to rec
  return t;
}

bool Dispatch::join_record(ForkRecord& rec) {
  if (rec.thread.load(std::memory_order_acquire) != nullptr) return false;
  Processor* const p = current_processor();  // read once: nothing here switches before the call
  if (p == nullptr || &p->runtime() != rec.runtime) return false;
  if (rec.state.load(std::memory_order_relaxed) == ForkRecord::State::inline_run) [[unlikely]] {
    // Joined from inside its own body (or a body it runs): as the thread it is.
    p->current_thread();
    rec.thread.load(std::memory_order_acquire)->await_termination();  // throws: it cannot end first
    throw UsageError("thread " + std::to_string(rec.id) + " was joined while its joiner runs it");
  }
  RuntimeImpl& r = impl_of(*p);
  Thread* const self = p->current_;
  Thread& host = is_record(self) ? *as_record(self)->host : *self;
  if (!r.inline_joins || !has_inline_room(r, host)) return false;
  enter(*p);
  if (must_leave(*p) || !withdraw_record(*p, rec)) {
    leave(*p);
    return false;
  }
  run_record(*p, rec, self, host);
  return true;
}

bool Dispatch::withdraw_record(Processor& p, ForkRecord& rec) noexcept {
  LocalQueuePool::Queue* own = own_queue_of(p);
  if (own == nullptr) return false;
  OwnedQueue* q = rec.queue.load(std::memory_order_relaxed);
  if (q == own) [[likely]] return own->owner_withdraw_record(rec);
  // Stolen into another processor's queue of the same pool (which stays in force while p is
  // inside its gate): take it from there.
  q = queue_of_pool_in_force(impl_of(p), q);
  return q != nullptr && q->withdraw_record(rec);
}

void Dispatch::run_record(Processor& p, ForkRecord& rec, Thread* self, Thread& host) {
  // In p's gate: rec is ours alone. It runs as a call under its own identity, the tagged
  // record in p.current_, until something asks for its thread (make_running_thread).
  rec.state.store(ForkRecord::State::inline_run, std::memory_order_relaxed);
  rec.saved = self;
  rec.host = &host;
  p.current_ = tagged(rec);
  p.dispatches_.store(p.dispatches_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // p only
  std::atomic<std::uint64_t>& count = p.state_->inline_joins;
  count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // p only
  leave(p);

  try {
    rec.task.invoke();
  } catch (...) {
    rec.exception = std::current_exception();
  }

  Thread* t = rec.thread.load(std::memory_order_relaxed);  // made on this processor, if at all
  if (t == nullptr) [[likely]] {
    // It never asked for its thread, so it never left p (leaving takes a thread).
    p.current_ = self;
    ProcessorState& ps = *p.state_;  // its counts are written by p only
    ps.records.store(ps.records.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    ps.threadless.store(ps.threadless.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return;
  }
  // It became a thread (and so did the record below it, if self is one): end it as an inline
  // join ends its child. It may have moved to another processor.
  t->destroy_locals();
  Thread& joiner = is_record(self) ? *as_record(self)->thread.load(std::memory_order_relaxed) : *self;
  if (end_inline(joiner, *t)) t->spin_unlock();
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
  rec.thread.store(&t, std::memory_order_release);
  leave(p);
  return t;
}

// --- the public side (fork_record.hpp) ------------------------------------------------------

ForkRecord* Dispatch::new_record(Runtime& rt) noexcept {
  Processor* p = current_processor();
  if (p == nullptr || &p->runtime() != &rt) return nullptr;
  RuntimeImpl& r = RuntimeImpl::of(rt);
  if (!r.records_allowed.load(std::memory_order_relaxed) || p->own_queue_.load(std::memory_order_relaxed) == nullptr) {
    return nullptr;
  }
  return r.take_record(*p);
}

ForkRecord* new_record(Runtime& rt) noexcept { return Dispatch::new_record(rt); }

void launch_record(ForkRecord& r) { Dispatch::launch_record(r); }

void drop_record(ForkRecord& r) noexcept { RuntimeImpl::of(current_processor()->runtime()).give_back(r); }

bool join_record(ForkRecord& r) { return Dispatch::join_record(r); }

Thread& record_thread(ForkRecord& rec) {
  Backoff backoff;
  for (;;) {
    if (Thread* t = rec.thread.load(std::memory_order_acquire)) return *t;
    if (rec.state.load(std::memory_order_relaxed) == ForkRecord::State::inline_run) {
      // Run by its joiner: by the rule of one thread at a time per handle, from inside its
      // own body (or one it runs), where asking for the running thread makes it one.
      if (Processor* p = current_processor()) p->current_thread();
      if (Thread* t = rec.thread.load(std::memory_order_acquire)) return *t;
      throw UsageError("the handle of thread " + std::to_string(rec.id) +
                       " was used while its joiner, on another thread, runs it; a handle is used by one thread at a time");
    }
    if (Dispatch::materialize_queued(rec)) continue;
    backoff.pause();  // on its way from one queue to another, or being made a thread: briefly
  }
}

Thread& take_thread(ForkRecord& rec) {
  if (rec.state.load(std::memory_order_relaxed) == ForkRecord::State::inline_run) {
    throw UsageError("the handle of thread " + std::to_string(rec.id) + " was detached or dropped inside its own join");
  }
  Thread& t = record_thread(rec);
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
