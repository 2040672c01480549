#pragma once
// The private state of a Runtime and of its processors. Hot fields (the scheduler pointer,
// the stop flag, idle counts) are read by every dispatch; the rest is for replacement,
// halting and reporting.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <presto/detail/fork_record.hpp>
#include <presto/errors.hpp>
#include <presto/processor.hpp>
#include <presto/runtime.hpp>
#include <presto/scheduler.hpp>
#include <presto/synchro_object.hpp>
#include <presto/thread.hpp>

#include "debug_anchor.hpp"
#include "host_thread.hpp"
#include "quantum_timer.hpp"
#include "registry.hpp"
#include "stack_allocator.hpp"
#include "thread_cache.hpp"
#include "timer_service.hpp"

namespace presto::detail {

// A list of free fork records that knows its last record and its length, so that a whole list
// joins another in one step (fork_records.cpp: a processor's own, its spill, the runtime's).
struct RecordChain {
  ForkRecord* head = nullptr;
  ForkRecord* tail = nullptr;  // meaningful only while head is not nullptr
  std::size_t count = 0;

  bool empty() const noexcept { return head == nullptr; }
  void push(ForkRecord& rec) noexcept {
    if (head == nullptr) tail = &rec;
    rec.next_free = head;
    head = &rec;
    ++count;
  }
  ForkRecord& pop() noexcept {  // not empty
    ForkRecord& rec = *head;
    head = rec.next_free;
    --count;
    return rec;
  }
  // Puts this chain's records in front of `to`'s and leaves this one empty.
  void move_to(RecordChain& to) noexcept {
    if (head == nullptr) return;
    tail->next_free = to.head;
    if (to.head == nullptr) to.tail = tail;
    to.head = head;
    to.count += count;
    *this = {};
  }
};

// What each processor keeps to itself: caches in front of the shared allocators, the registry
// of threads started on it and a block of thread ids. Touched only by its processor, inside its
// gate, except where noted.
struct ProcessorState {
  static constexpr std::size_t kStackCache = 32;    // default-size stacks kept per processor
  static constexpr std::uint64_t kIdBlock = 256;

  FreeList free;  // its free lists under FreeLists::per_processor (see ThreadCache)
  Registry registry;  // has its own lock: others remove threads that finished elsewhere
  std::uint64_t next_id = 0;
  std::uint64_t id_limit = 0;
  std::atomic<std::uint64_t> recycled{0};      // written by this processor only
  std::atomic<std::uint64_t> inline_joins{0};  // written by this processor only
  std::atomic<std::uint64_t> parks{0};         // written by this processor only
  QuantumTimer* quantum_timer = nullptr;  // while the processor runs; paused while it parks
  // Set by RuntimeImpl::wake_one, which counted this parked processor as spinning so that
  // wakers do not wake more while it gets going; Processor::park takes the count back. Guarded
  // by RuntimeImpl::parked_lock.
  bool spin_token = false;
  bool parking = false;  // Processor::parking(); written by this processor only
  // Lazy forks (fork_records.cpp): records forked here less those made threads here, and records
  // ended here without a thread. The live records, queued or running and neither ended nor made
  // threads, are the sum over the processors of records - threadless, plus
  // RuntimeImpl::external_records (a processor's share may be negative). A threadless end counts
  // once, in threadless, which also stands for the record's dispatch (Processor::dispatches): the
  // join that runs a record pays one counter, not three. And free records.
  std::atomic<std::int64_t> records{0};      // written by this processor only
  std::atomic<std::uint64_t> threadless{0};  // RuntimeStats::threadless_forks; written by this processor only
  // Runners made here (Dispatch::run_records): threads of the runtime's own, not the program's,
  // so kept out of `registry`: walks, deadlock reports and live_threads leave them out; a run's
  // end abandons them with the survivors.
  Registry runners;
  // Free records for this processor's forks: up to kKeptRecords freed here, and any taken from
  // the runtime's list; records freed here beyond those collect in `spilled` and go to the
  // runtime's list kSpilledRecords at a time. Without that bound, a processor that frees the
  // records others fork (its joiner moved here, as Figure 3's main does) would hoard them while
  // the forker's processor made new ones for every batch.
  static constexpr std::size_t kKeptRecords = 1024;
  static constexpr std::size_t kSpilledRecords = 256;
  RecordChain free_records;
  RecordChain spilled;
};

// The processors: slots made once and kept until the runtime dies (set_processors reuses
// them), of which the first active() are the runtime's processors. Slots are added, and the
// count changed, under RuntimeImpl::replace_mutex; anyone may read.
class ProcessorSet {
 public:
  static constexpr std::size_t kMinCapacity = 1024;  // set_processors grows up to this (or more)

  void reserve(std::size_t capacity) { slots_.resize(capacity); }  // once, before use
  std::size_t capacity() const noexcept { return slots_.size(); }
  std::size_t active() const noexcept { return active_.load(std::memory_order_acquire); }
  std::size_t made() const noexcept { return made_.load(std::memory_order_acquire); }
  Processor& operator[](std::size_t i) const noexcept { return *slots_[i]; }
  void add(std::unique_ptr<Processor> p) noexcept {
    const std::size_t i = made_.load(std::memory_order_relaxed);
    slots_[i] = std::move(p);
    made_.store(i + 1, std::memory_order_release);
  }
  void set_active(std::size_t n) noexcept { active_.store(n, std::memory_order_release); }
  // f(Processor&) for every slot ever made (threads may still be registered on retired ones).
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = 0, n = made(); i < n; ++i) f(*slots_[i]);
  }

 private:
  std::vector<std::unique_ptr<Processor>> slots_;  // never resized: readers need no lock
  std::atomic<std::size_t> made_{0};
  std::atomic<std::size_t> active_{0};
};

// The sleep_for object: threads sleeping on a timer wait here.
class SleepObject final : public SynchroObject {
 public:
  SleepObject() : SynchroObject("sleep") {}
  std::string_view kind() const noexcept override { return "timer"; }
};

// How messages name a lazy fork: as its thread, or as Thread::describe() names an unnamed one
// (fork_records.cpp).
std::string describe(const ForkRecord& rec);

// Where the joiner of a fork that a runner holds sleeps until the fork ends (fork_records.cpp).
// Each sleeper links a Wait of its own stack here, so that a deadlock report can name the fork
// it waits for (describe_wait), as it names the thread a thread's joiner waits for.
class ForkEndObject final : public SynchroObject {
 public:
  struct Wait {
    const Thread* waiter;
    const ForkRecord* record;
    Wait* next = nullptr;
  };
  ForkEndObject() : SynchroObject("the end of a fork a runner runs") {}
  std::string_view kind() const noexcept override { return "fork end"; }
  // Spinlock held.
  void add(Wait& w) noexcept {
    w.next = waits_;
    waits_ = &w;
  }
  // Unlinks t's wait (a thread waits for one fork at a time): as it stops waiting, or is abandoned.
  void remove_waits_of(const Thread& t) noexcept {
    for (Wait** at = &waits_; *at != nullptr;) {
      if ((*at)->waiter == &t) {
        *at = (*at)->next;
      } else {
        at = &(*at)->next;
      }
    }
  }
  // What `t` waits for here: the fork, named as describe() names it. Spinlock held.
  std::string describe_wait(const Thread& t) const {
    for (const Wait* w = waits_; w != nullptr; w = w->next) {
      if (w->waiter == &t) return detail::describe(*w->record);
    }
    return describe();
  }

 private:
  Wait* waits_ = nullptr;
};

class RuntimeImpl {
 public:
  RuntimeImpl(Runtime& rt, RuntimeConfig config);
  ~RuntimeImpl();

  // Finishes construction once `rt.impl_` is set (components may call back into rt).
  void install();
  // Makes `s` this runtime's scheduler-to-be: its runtime, its pool attached, whether it is a
  // plain presto::Scheduler (see Scheduler::plain_). Before it is published.
  void adopt(Scheduler& s);
  // Sets every processor's own_queue_ from the scheduler and pool now published. install()
  // calls it, and quiesce() first thing, so every replacement refreshes the words after its
  // publication: a processor inside its gate may still use the old pool through its old
  // own_queue_, and the quiesce waits for it to leave.
  void refresh_own_queues() noexcept;

  static RuntimeImpl& of(const Runtime& rt) noexcept { return *rt.impl_; }

  // --- component replacement (Runtime / Scheduler API) --------------------------------
  std::unique_ptr<ThreadPool> replace_pool(Scheduler& s, std::unique_ptr<ThreadPool> next);
  std::unique_ptr<Scheduler> replace_scheduler(std::unique_ptr<Scheduler> next);
  std::unique_ptr<Thread> set_thread_prototype(std::unique_ptr<Thread> next);
  void set_processors(std::size_t n);

  // --- threads ------------------------------------------------------------------------
  Thread& make_thread(ThreadAttributes* attributes);  // nullptr: defaults
  // A new thread id, from ps's block of them (ps's processor only).
  std::uint64_t take_id(ProcessorState& ps) noexcept {
    if (ps.next_id == ps.id_limit) [[unlikely]] {
      ps.next_id = id_source.fetch_add(ProcessorState::kIdBlock, std::memory_order_relaxed);
      ps.id_limit = ps.next_id + ProcessorState::kIdBlock;
    }
    return ps.next_id++;
  }
  void launch(Thread& t);  // binds t to this runtime, gives it an id, makes it ready
  void recycle(Thread& t) noexcept;  // a forked control block nobody references any more
  // Lazy forks (fork_records.cpp; Dispatch has the rest). A free record for a fork on p
  // (nullptr: no memory); one back to the calling processor's free list (or the runtime's).
  // Both are inline in fork_records.cpp, their only user; their rare ends are the next two.
  ForkRecord* take_record(Processor& p) noexcept;
  void give_back(ForkRecord& rec) noexcept;
  ForkRecord* refill_and_take(ProcessorState& ps) noexcept;  // take_record's, p's list empty
  // give_back's rare end: rec, given back off the processors (p nullptr), to the runtime's
  // list; or p's spill, full with rec, moved there.
  void give_back_beyond(ForkRecord& rec, Processor* p) noexcept;
  std::size_t records_made() const noexcept;  // RuntimeStats::fork_records
  // Records alive (see ProcessorState::records), counted on the calling processor.
  void count_records(std::int64_t change) noexcept;
  // A control block for a record that becomes a thread: a plain Thread, fresh or recycled.
  Thread& record_block();
  // t takes rec's identity (its id, registered here) and is ready; rec is counted out.
  void adopt_record(Thread& t, ForkRecord& rec) noexcept;
  // Before a walk of the registries (replace_mutex held): every record waiting in a queue, or
  // being taken out of one, becomes a registered thread; steals stay frozen until the walk
  // clears records_frozen. Records run by their joiners stay records.
  void materialize_for_walk() noexcept;
  void release_handle(Thread& t) noexcept;
  void release_joined(Thread& t) noexcept;  // join returned: no lock needed (see join_handle.hpp)
  std::vector<BlockedThread> blocked_threads();

  // --- running ------------------------------------------------------------------------
  void run_until_halt(Thread& main);
  void request_stop(std::exception_ptr reason) noexcept;
  bool stopping() const noexcept { return stop.load(std::memory_order_relaxed); }
  // Wakes a parked processor if a ready thread may need one (after a put).
  void wake_if_needed() noexcept;
  void wake_one() noexcept;
  // Wakes processor `index` if it is parked: a thread only it may run became ready.
  void wake_processor(std::size_t index) noexcept;
  void wake_all() noexcept;
  // Ends the park of `q`, just taken off `parked` (with parked_lock held then, when `q` was
  // read to be the polling processor or not): its futex, or the poller's wake().
  void unpark(Processor& q, bool was_polling) noexcept;
  // A source of wake-ups went away (a timer fired, the last KeepAlive was dropped): make an
  // idle processor check again whether the system has halted. Never lost: a processor about
  // to park sees `recheck` if no parked processor was there to wake.
  void poke() noexcept;
  void note_orphan_exception(const std::string& who, std::exception_ptr e) noexcept;  // who: t.describe()
  // t finished holding locks: they stay held by it, so its control block is never reused
  // (a new thread would inherit them), and the run ends with a UsageError.
  void finished_holding_locks(Thread& t) noexcept;

  Runtime& rt;
  std::shared_ptr<spdlog::logger> logger;
  std::string name;
  std::uint64_t seed = 0;
  std::size_t stack_size = 0;     // usable bytes a default-size thread is promised
  std::size_t stack_reserve = 0;  // bytes a default-size stack has: twice that with inline joins
  bool inline_joins = false;      // RuntimeConfig::inline_joins
  bool lazy_forks = false;        // RuntimeConfig::lazy_forks, where it can apply (inline joins, no preemption)
  // Forks may make records now: lazy_forks, under a plain Thread prototype.
  std::atomic<bool> records_allowed{false};
  // While a walk lists the threads: thieves take nothing (a record on its way between two
  // queues would escape the walk). Set and cleared under replace_mutex.
  std::atomic<bool> records_frozen{false};
  std::size_t idle_spin = 0;
  std::chrono::microseconds quantum{0};  // in force (0: no preemption)
  // The logger's level was debug or lower when the runtime was made: log every dispatch.
  bool debug_logging = false;

  std::atomic<Scheduler*> scheduler{nullptr};
  std::unique_ptr<Scheduler> owned_scheduler;
  std::atomic<Thread*> prototype{nullptr};
  std::unique_ptr<Thread> owned_prototype;
  std::atomic<std::uint32_t> generation{1};
  std::unique_ptr<Processor> processor_prototype;
  ProcessorSet processors;
  // The OS threads of processors 1, 2, ... (slot 0 unused: run()'s caller), made when their
  // slot is first started and kept, parked, between runs (host_thread.hpp). A run ends once each
  // has returned from its processor loop. Guarded by os_threads_mutex (taken after
  // replace_mutex), not replace_mutex itself: a thread replacing a component must not wait
  // while run() starts processors. The destructor ends them before anything else.
  std::mutex os_threads_mutex;
  std::vector<std::unique_ptr<HostThread>> os_threads;
  bool processors_started = false;  // os_threads run processor loops; guarded by os_threads_mutex
  // Processors in this run's processor loop: idle ones are compared with it to halt.
  std::atomic<std::size_t> live{0};
  std::mutex replace_mutex;
  RawSpinlock external_gate;   // OS threads entering the scheduler, pool or prototype
  Registry external_registry;  // threads started from OS threads
  // Control blocks the runtime must keep until it dies: abandoned threads whose JoinHandles
  // were lost with their stacks, and threads that finished holding locks.
  Registry retained;
  std::atomic<std::uint64_t> id_source{1};
  std::atomic<std::uint64_t> threads_created{0};
  std::atomic<std::uint64_t> wakeups{0};  // unpark() calls (RuntimeStats::wakeups)
  // Lazy forks: records counted by threads off the processors (ProcessorState::records); the
  // records' memory, in slabs freed with the runtime; records freed off the processors or
  // spilled by one (ProcessorState::spilled), and those of processors that retired.
  std::atomic<std::int64_t> external_records{0};
  static constexpr std::size_t kRecordSlab = 256;  // records made at a time
  mutable RawSpinlock records_lock;  // guards the two below
  std::vector<std::unique_ptr<ForkRecord[]>> record_slabs;
  RecordChain shared_free_records;
  ForkEndObject fork_ends;  // where the joiners of records runners hold wait (fork_records.cpp)

  StackAllocator stacks;
  std::optional<ThreadCache> free_lists;  // made once the number of processors is known
  TimerService timers{[this] { poke(); }};
  SleepObject sleep_object;

  // idling and halting
  std::atomic<std::size_t> idle{0};       // processors in their idle loop
  // Of those, polling for work, plus the processors woken to look for work that have not
  // looked yet (ProcessorState::spin_token). A putter wakes a parked processor only when it
  // is 0 (wake_if_needed).
  std::atomic<std::size_t> spinning{0};
  std::atomic<std::size_t> sleepers{0};   // of those, parked
  // Counts exits from the idle loop. A processor bumps it (after leaving `idle`, before it
  // looks for a thread), so a
  // halt that reads it unchanged around its checks knows that no processor left to run a
  // thread in between (it could otherwise take the last ready thread after the halter read
  // `idle` and before it read the pool, and run while the system is declared halted).
  std::atomic<std::uint64_t> idle_exits{0};
  std::atomic<bool> recheck{false};       // see poke()
  RawSpinlock parked_lock;
  std::vector<Processor*> parked;
  // Runtime::install_idle_poller. The processor that waits in poller->poll() instead of on its
  // futex, or nullptr; guarded by parked_lock, like `parked`, where it also is while it polls.
  std::atomic<IdlePoller*> poller{nullptr};
  std::unique_ptr<IdlePoller> owned_poller;
  Processor* polling = nullptr;
  std::atomic<std::size_t> keep_alives{0};
  std::atomic<std::size_t> replacing{0};
  RawSpinlock halt_lock;
  // While Scheduler::halt() runs: any thread made ready meanwhile revives the system (another
  // idle processor may take it before try_halt could see it in the pool).
  std::atomic<bool> halting{false};
  std::atomic<bool> revived{false};
  std::atomic<bool> stop{false};
  std::exception_ptr stop_reason;  // guarded by halt_lock
  std::atomic<bool> running{false};
  Thread* main_thread = nullptr;
  DebugAnchor debug_anchor{*this};  // last: listed for debuggers once the rest is built

 private:
  void quiesce() noexcept;  // refresh_own_queues(); every processor (and OS-thread caller) leaves its gate once
  void drain(ThreadPool& from, ThreadPool& to);
  void processor_main(Processor& p) noexcept;
  void start_processor(std::size_t i);  // os_threads_mutex held, running
  void resize_pool();  // replace_mutex held; after the processor count changed
  bool try_retire(Processor& p) noexcept;
  void add_processor();  // a new slot, made from the processor prototype
  void release_caches(Processor& p) noexcept;
  bool add_record_slab(ProcessorState& ps) noexcept;
  void release_records(ProcessorState& ps) noexcept;  // a retiring processor's free records, to the runtime's list
  void allow_records() noexcept;  // records_allowed for the prototype in force
  void idle_loop(Processor& p);
  bool try_halt(Processor& p);
  void abandon_survivors();
};

}  // namespace presto::detail
