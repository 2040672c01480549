#pragma once
// ForkRecord: a fork that has not become a Thread yet (RuntimeConfig::lazy_forks; see
// docs/design/lazy-forks.md and docs/design/runtime.md, "Lazy forks").
//
// Runtime::fork queues a record in the forking processor's ready queue (a LocalQueuePool
// queue, detail::OwnedQueue) where a control block would go. From there it leaves in one of
// two ways:
//   - its joiner takes it back (Dispatch::join_record) and runs its body as a call, on the
//     joiner's stack, with the processor's current_ set to the record, tagged (below). Only if
//     the body asks for its thread (Processor::current_thread: a lock, a condition, a
//     thread-local, Thread::current(), a yield...) is a Thread made for it then, in the state
//     an inline join's child has (Dispatch::run_inline);
//   - a processor that takes it out of a queue to run it (its dispatch, or a thief) hands it to
//     a *runner* (Dispatch::run_records): a plain thread, not the record's, that runs records
//     from the front of its processor's queue one after another, each as a call under the
//     record's identity as above, and ends when the front holds no record. A body that asks for
//     its thread gets one, on the runner's stack, the runner waiting on it as a joiner does.
//     The record's end is published in `state` (kEnded), its result or exception in the record,
//     and its joiner sleeps on the runtime's fork-end object until then (kJoinerWaits);
//   - anything else that takes it out of a queue (a drain of the pool), or needs it as a thread
//     while it waits there (JoinHandle::thread(), detach(), a cancellable join, a walk of the
//     threads, the end of a run), makes a Thread of it first: a control block with the record's
//     id, registered, its body moved in. The record then forwards to that thread (`thread`),
//     and the handle goes on with the thread.
// The record belongs to its JoinHandle: the handle frees it, once it is done with it; or, if
// the handle lets go of a record a runner holds before it ends (kDropped), the runner does.
//
// Threads and records share the queues' rings and a processor's current_ as one pointer
// type: a record's address with bit 0 set (tagged()). Nothing outside the core sees one.

#include <atomic>
#include <cstdint>
#include <stop_token>

#include <presto/detail/task_slot.hpp>

namespace presto {
class Runtime;
class Thread;
class Processor;
}  // namespace presto

namespace presto::detail {

class OwnedQueue;

// Two cache lines, aligned to them: the body's slot in the first, the fields a fork writes and a
// join reads in the second. Every fork writes a record and every join reads it, and a program
// with one thread per element holds as many as it has elements (Figure 3: 40,000, 5 MB).
struct alignas(64) ForkRecord {
  // `state`: what has been done with it, in the low bits,
  static constexpr std::uint32_t kQueued = 0;     // not taken back by its joiner (it may have been made a thread meanwhile)
  static constexpr std::uint32_t kInlineRun = 1;  // its joiner runs it (JoinHandle::join)
  static constexpr std::uint32_t kOnRunner = 2;   // a runner holds it (Dispatch::run_records)
  static constexpr std::uint32_t kHow = 3;
  // and, for a record a runner holds, how far it is:
  static constexpr std::uint32_t kEnded = 4;        // its body returned: the result or exception is here
  static constexpr std::uint32_t kJoinerWaits = 8;  // `waiter` sleeps on the runtime's fork-end object
  static constexpr std::uint32_t kDropped = 16;     // its handle let go of it: whoever sets the second of
                                                    // kEnded and kDropped frees it

  TaskSlot task;  // the body; after it ran, its result or the exception it threw
  std::uint64_t id = 0;
  Runtime* runtime = nullptr;
  // The thread made of it (nullptr: none yet). Its store is the last access to the record of
  // whoever made the thread: the handle may free the record once it sees it.
  std::atomic<Thread*> thread{nullptr};
  // Where it is queued: the queue and the position it was last placed at, written in a hold of
  // that queue (detail::OwnedQueue). Believed only if that slot holds the record.
  std::atomic<OwnedQueue*> queue{nullptr};
  std::atomic<std::uint32_t> position{0};
  // kQueued and kInlineRun are written by the joiner, kOnRunner by the processor that took the
  // record out of its queue, before anyone can see it there; the flags by fetch_or.
  std::atomic<std::uint32_t> state{kQueued};
  std::atomic<Thread*> waiter{nullptr};  // the joiner that set kJoinerWaits
  // While its joiner or a runner runs it: the processor's current_ before (a thread, or a tagged
  // record run inline in its turn) and the thread whose stack it runs on. Read on that
  // processor only.
  // A free record is in no queue and runs nowhere: `saved`'s room holds its link in a free list.
  union {
    Thread* saved = nullptr;
    ForkRecord* next_free;  // in a processor's free list
  };
  Thread* host = nullptr;
};
static_assert(sizeof(void*) != 8 || sizeof(ForkRecord) == 128, "a record is two cache lines");

[[gnu::always_inline]] inline bool is_record(const Thread* entry) noexcept {
  return (reinterpret_cast<std::uintptr_t>(entry) & 1) != 0;
}
[[gnu::always_inline]] inline ForkRecord* as_record(const Thread* entry) noexcept {
  return reinterpret_cast<ForkRecord*>(reinterpret_cast<std::uintptr_t>(entry) & ~std::uintptr_t{1});
}
[[gnu::always_inline]] inline Thread* tagged(ForkRecord& r) noexcept {
  return reinterpret_cast<Thread*>(reinterpret_cast<std::uintptr_t>(&r) | 1);
}

// The fork, in two calls around the body's emplacement (Runtime::fork): a record for a fork
// from the calling presto thread of `rt`, or nullptr where lazy forks do not apply (the
// caller makes a thread); then its launch, which gives it its id and queues it (it may throw
// std::bad_alloc, the ring being full; then the caller drops it).
ForkRecord* new_record(Runtime& rt) noexcept;
// The same for a fork from the calling presto thread in its own runtime, whichever it is
// (presto::fork: one call, where naming the runtime first would take another).
ForkRecord* new_record_here() noexcept;
void launch_record(ForkRecord& r);
void drop_record(ForkRecord& r) noexcept;  // never launched: back to the free list

// Whether a runner ran the record to its end, its result or exception now in it: a join has
// nothing to wait for, and the record is the handle's to free. Checked inline before the join's
// call: the common case of a record another processor stole and ran (Figure 3's main, joining
// in fork order what the other processor took).
[[gnu::always_inline]] inline bool ended_on_runner(const ForkRecord& r) noexcept {
  constexpr std::uint32_t mask = ForkRecord::kHow | ForkRecord::kEnded;
  return (r.state.load(std::memory_order_acquire) & mask) == (ForkRecord::kOnRunner | ForkRecord::kEnded);
}

// JoinHandle's operations on a record (fork_records.cpp):
// join: true if the record ended, having run here or on a runner (its result or exception is
// in it), false if it has a thread to join instead (`thread`).
bool join_record(ForkRecord& r);
// The same for join(token): a wait for a record a runner holds throws Cancelled if a stop is
// requested on `token` first (the record stays the handle's); true only then, a record is
// never run here.
bool join_record(ForkRecord& r, const std::stop_token& token);
// The handle lets go of the record (detach, or the handle's end): a record still queued is made
// a thread, which runs on unjoined; one a runner holds is freed at its end (kDropped).
void release_record(ForkRecord& r);
// The record as a thread, made now if it is still queued (JoinHandle::thread()). Of a record
// a runner holds: its thread once it asks for one, or, if it ends first, a terminated one made
// for it then; until one of these, this waits.
Thread& record_thread(ForkRecord& r);
// The same for a record no runner holds, and the record is freed: the handle holds the thread
// from now on.
Thread& take_thread(ForkRecord& r);
// Frees a record whose join returned true (with the thread made for it, if one was).
void free_record(ForkRecord& r) noexcept;

// Processor::current_thread() while a record runs inline on `p`: makes it a thread (and every
// record run inline below it), on p's own OS thread; elsewhere, the thread whose stack it runs
// on.
Thread* materialize_current(const Processor& p) noexcept;

}  // namespace presto::detail
