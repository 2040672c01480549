#pragma once
// Runtime: one PRESTO system: a set of processors (OS threads), a scheduler with its ready
// pool, a thread prototype, stacks, timers and a logger. Nothing is static: several runtimes
// can live in one process, each with its own policies.
//
//   presto::Runtime rt{{.processors = 4}};
//   int status = rt.run([] { ... the first thread ... return 0; });
//
// run() returns when the system halts: no thread is ready or running, no timer is pending and
// no KeepAlive is held. If threads are still blocked then, it throws presto::Deadlock listing
// them. If a thread nobody can join ends with an exception, run() ends with that exception;
// threads still alive at that point are abandoned (their stacks are discarded without
// unwinding, as a process exit would). The first thread's own exception also ends the run.
//
// A runtime keeps the OS threads of its processors 1, 2, ... and of its timers from its first
// run to its destruction, parked between runs (an idle runtime uses no CPU): each run wakes
// them instead of creating them. A child process made by fork(2) has none of them, so a
// runtime made before a fork must not be run in the child; make a new one there.
//
// Environment (overrides RuntimeConfig): PRESTO_PROCESSORS=n (0: one per hardware thread),
// PRESTO_SEED=n, PRESTO_QUANTUM_US=n, PRESTO_LAZY_FORKS=0|1, PRESTO_LOG_LEVEL (or PRESTO_LOG)=trace|debug|info|warn|
// error|critical|off (debug shows every dispatch decision), PRESTO_ALLOCATION=fixed|asat|load|
// hybrid (presto/allocation_policy.hpp).
//
// Lateral replacement: scheduler().replace_pool(), replace_scheduler() and
// set_thread_prototype() install a new component while threads run and hand the old one back
// once no processor can still be inside it (each processor passes through a safepoint).

#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <presto/allocation_policy.hpp>
#include <presto/errors.hpp>
#include <presto/idle_poller.hpp>
#include <presto/join_handle.hpp>
#include <presto/processor.hpp>
#include <presto/scheduler.hpp>
#include <presto/spinlock.hpp>
#include <presto/thread.hpp>
#include <presto/thread_pool.hpp>
#include <presto/wait_policy.hpp>

namespace spdlog {
class logger;
}

namespace presto {

namespace detail {
class RuntimeImpl;
class RuntimeAllocation;
class Dispatch;

// The lazy fork (RuntimeConfig::lazy_forks) once a record is taken (new_record or
// new_record_here): the body moved into it, the record queued, its handle made. If the body's
// move or the queueing throws, the record goes back unlaunched and the exception on.
struct RecordFork {
  template <class R, class F, class... Args>
  static JoinHandle<R> launch(ForkRecord& r, F&& f, Args&&... args) {
    try {
      r.task.emplace(std::forward<F>(f), std::forward<Args>(args)...);
      launch_record(r);
    } catch (...) {
      drop_record(r);
      throw;
    }
    return JoinHandle<R>(r);
  }
};
}  // namespace detail

// Where the control blocks and stacks of finished threads wait to be reused: Anderson,
// Lazowska and Levy's free lists (docs/design/runtime.md, "Free lists").
enum class FreeLists : unsigned char {
  // Each processor keeps its own, unlocked: no lock on the fork and finish paths (control
  // blocks beyond a few hundred go to a depot the processors share, 128 at a time).
  per_processor,
  // One list of control blocks and one of default-size stacks for the whole runtime, under
  // Runtime::free_list_lock(). Give the pool that lock too (SingleLockPool) and one lock
  // guards all thread management.
  central,
};

// The number of processors a runtime asked for `requested` gets: `requested` itself, or one
// per hardware thread when it is 0. That is what 0 means everywhere: RuntimeConfig::processors,
// PRESTO_PROCESSORS=0 and the apps' --processors 0. More than kMaxProcessorsPerHardwareThread
// times the hardware threads is a UsageError naming `what` (the setting's name, e.g.
// "--processors"): so many OS threads would only contend for the cores, and by the hundred
// thousand they exhaust the system's limits, so the program would seem to hang.
inline constexpr std::size_t kMaxProcessorsPerHardwareThread = 64;
std::size_t resolve_processors(std::size_t requested, std::string_view what = "RuntimeConfig::processors");

struct RuntimeConfig {
  // Processors (OS threads). 0: one per hardware thread (see resolve_processors).
  std::size_t processors = 0;
  // Usable bytes of a thread's stack, unless the thread asks for another size. 64 KiB holds
  // the deepest stack of the test suite and the apps with room to spare, and costs about
  // 4-8 KiB of resident memory per blocked thread (measured: benchmarks/suite/memory.cpp).
  std::size_t stack_size = 64 * 1024;
  // Joining a thread that has not run yet runs it in the joiner, on the joiner's stack, as a
  // function call (Java fork/join's tryUnpush): no stack of its own, no switch, no trip
  // through the ready pool. Only for a thread of class Thread itself (or of a subclass that
  // allows it: Thread::allow_inline_join) with the default stack size, taken back from a pool
  // that supports it (ThreadPool::withdraw: the built-in FIFO, LIFO and per-processor pools),
  // and only while the joiner's stack has stack_size bytes free, so that it still gets the
  // stack it was promised. To leave that room, default-size stacks are reserved at twice
  // stack_size when this is on: address space, not memory (pages become resident only when
  // touched). It runs as itself: Thread::current() is the joined
  // thread, and if it blocks its joiner's stack waits with it (its joiner waits for it anyway).
  bool inline_joins = true;
  // Lazy forks: a fork() with no attributes, from a presto thread of this runtime, under the
  // built-in components (a plain Scheduler over a waker-placement LocalQueuePool, the plain
  // Thread prototype) and with preemption off, queues a small record of its task instead of
  // a control block. The record becomes a Thread (a control block, an entry in the registry)
  // only when something needs one: Thread::current() or anything else that asks for the
  // running thread inside it, JoinHandle::thread(), detach() or a cancellable join while it is
  // queued, a walk of the threads, a replacement of the scheduler or pool. A join that finds
  // it still queued (with inline_joins) runs its body as a call; a processor that takes it
  // out of a queue to run it (its own, or stealing) hands it to a *runner*, a thread of the
  // runtime's own that runs such records one after another as calls. If the body never asks
  // who it is, no Thread is ever made for it. Nothing observable changes: the record has its
  // id from the fork and is counted in live_threads (runners are not); made into a thread it
  // is the thread the body would have been. See docs/design/lazy-forks.md.
  bool lazy_forks = true;
  // Control blocks of finished threads kept per processor for reuse by the next fork (0:
  // none). Reuse saves an allocation and, for bursts of thousands of threads, the page faults
  // of memory the allocator gave back to the system; the cost is that the runtime keeps up to
  // this many blocks per processor (~0.4 KiB each for presto::Thread) after a burst, until it
  // dies. Under FreeLists::per_processor, a processor holds a few hundred of them itself and
  // shares the rest with the others, so blocks freed on one processor serve forks on another.
  std::size_t thread_cache = 65536;
  // Where those control blocks and stacks are kept (FreeLists::central: one list of up to
  // thread_cache x processors blocks for all processors).
  FreeLists free_lists = FreeLists::per_processor;
  // The ready pool (nullptr: LocalQueuePool). Installed into `scheduler` if both are given.
  std::unique_ptr<ThreadPool> pool{};
  // The scheduler (nullptr: presto::Scheduler).
  std::unique_ptr<Scheduler> scheduler{};
  // The thread every runtime-made thread is cloned from (nullptr: presto::Thread).
  std::unique_ptr<Thread> thread_prototype{};
  // The processor every processor is cloned from (nullptr: presto::Processor).
  std::unique_ptr<Processor> processor_prototype{};
  // Seed for seeded policies such as ShufflePool (0: random; the log says which).
  std::uint64_t seed = 0;
  // Where the runtime logs (nullptr: its own stderr logger at level warn). PRESTO_LOG_LEVEL (or
  // PRESTO_LOG) sets the level of either; in code, set the level of the logger given here.
  std::shared_ptr<spdlog::logger> logger{};
  // Names the runtime in logs and processor thread names.
  std::string name = "presto";
  // Polls of an idle processor before it parks (~1 us each on a 2020s x86 core): short waits
  // are caught without a futex round trip, long ones cost no CPU.
  std::size_t idle_spin = 256;
  // Preemption: a thread that has run this long (one to two quanta: the check is a periodic
  // tick) without giving up its processor is put back in the ready pool and the next ready thread runs (0: never).
  // Never while it holds a Spinlock, is inside a NonPreemptable region or inside the runtime,
  // or runs code of a shared library (libc, libstdc++, ...): then at the next quantum, or, for
  // the first two, when it leaves them. Costs one signal per quantum of a busy processor.
  // Needs presto as a shared library on x86-64 Linux and no sanitizer; else it stays off
  // (Runtime::quantum() says so). See docs/design/runtime.md, "Preemption".
  std::chrono::microseconds quantum{0};
  // How threads wait on a Lock, Monitor, Semaphore or Barrier whose own policy is
  // WaitMode::inherit (the default of every object): see presto/wait_policy.hpp. Blocking is
  // PRESTO's behaviour; spin_then_block and competitive poll first. UsageError from the
  // constructor for a negative budget; inherit here means block.
  WaitPolicy wait_policy{.mode = WaitMode::block};
  // How many processors to use while the machine is shared with other programs, decided at
  // each parallel region's entry (presto/allocation_policy.hpp; docs/guide/sharing.md):
  // nullptr is FixedAllocation, the count changes only by set_processors. The policy's limit
  // is the initial count. PRESTO_ALLOCATION=fixed|asat|load|hybrid overrides it.
  std::unique_ptr<AllocationPolicy> allocation{};
};

// Runtime configurers: process-wide functions every Runtime constructor applies, in
// registration order, to its RuntimeConfig before using it (environment overrides come after).
// For tools that must reach every runtime of a program without changing its code:
// presto::instrument registers one from a static initializer that installs its thread
// prototype when PRESTO_TRACE or PRESTO_PROFILE is set. A configurer runs on the thread that
// constructs the Runtime, must not construct a Runtime itself, and should leave settings the
// program chose alone. Registration is thread-safe; there is no removal.
//
// `serves` names the environment variables the configurer acts on, among those that belong to
// tools rather than to the core: PRESTO_TRACE and PRESTO_PROFILE (presto::instrument's). When
// a Runtime is constructed while one of them is set but no registered configurer serves it
// (the tool is not linked into the program), the core warns once per process on stderr that
// the variable is ignored and how to link or LD_PRELOAD the tool.
using RuntimeConfigurer = void (*)(RuntimeConfig& config);
void add_runtime_configurer(RuntimeConfigurer configurer, std::initializer_list<const char*> serves = {});

// While a KeepAlive exists, the runtime does not halt: hold one while an OS thread outside the
// runtime may still wake presto threads (signal a condition, release a semaphore, ...).
class [[nodiscard]] KeepAlive {
 public:
  KeepAlive() noexcept = default;
  KeepAlive(KeepAlive&& other) noexcept : runtime_(std::exchange(other.runtime_, nullptr)) {}
  KeepAlive& operator=(KeepAlive&& other) noexcept;
  ~KeepAlive() { reset(); }
  void reset() noexcept;
  explicit operator bool() const noexcept { return runtime_ != nullptr; }

 private:
  friend class Runtime;
  explicit KeepAlive(Runtime* rt) noexcept : runtime_(rt) {}
  Runtime* runtime_ = nullptr;
};

struct RuntimeStats {
  std::size_t processors = 0;
  // Started and not finished: ready, running or blocked (lazy forks included). A snapshot: while
  // another processor makes a queued lazy fork a thread it may be off by that one.
  std::size_t live_threads = 0;
  std::size_t ready_threads = 0;   // in the ready pool
  std::size_t stacks_in_use = 0;   // bound to live threads
  std::size_t stacks_cached = 0;   // kept for reuse
  std::size_t pending_timers = 0;  // sleeping or timed waits in progress
  std::uint64_t threads_created = 0;   // control blocks made through the prototype
  std::uint64_t threads_recycled = 0;  // forks that reused a control block
  std::uint64_t dispatches = 0;        // threads put on a processor (switches and inline joins)
  std::uint64_t inline_joins = 0;      // threads run by their joiner (RuntimeConfig::inline_joins)
  // Forks that ran and ended without ever needing a control block (RuntimeConfig::lazy_forks):
  // with threads_created and threads_recycled, every fork is counted once.
  std::uint64_t threadless_forks = 0;
  // Records for lazy forks made so far, kept for reuse until the runtime dies: about the most
  // forks queued or running as calls at once, plus the free records the processors keep (each
  // keeps at most 1,024 of those freed on it; the rest go back to the runtime for any to use).
  std::size_t fork_records = 0;
  std::uint64_t preemptions = 0;       // threads preempted at the end of a quantum
  std::uint64_t parks = 0;             // idle processors that went to sleep (futex or IdlePoller)
  std::uint64_t wakeups = 0;           // parked processors woken for work (or to check for a halt)
  std::size_t unguarded_stacks = 0;    // stacks protected by a canary instead of a guard page
};

class Runtime {
 public:
  explicit Runtime(RuntimeConfig config = {});
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  // Abandons any thread still alive (see above) and releases every resource.
  ~Runtime();

  // Runs `f` as the first thread (named "main") on all processors, the calling OS thread
  // being processor 0, until the system halts. Returns f's result (0 if it returns void).
  // Throws Deadlock, or the exception that ended the run. Not callable from a presto thread.
  template <class F>
    requires std::invocable<std::decay_t<F>>
  auto run(F&& f) {
    using R = detail::task_result_t<F>;
    JoinHandle<R> main = fork(ThreadAttributes{.name = "main"}, std::forward<F>(f));
    run_until_halt(*main.thread_held());
    if constexpr (std::is_void_v<R>) {
      main.join();
      return 0;
    } else {
      return main.join();
    }
  }

  // Creates and starts a runtime-owned thread running std::invoke(f, args...). Callable from
  // any presto thread or OS thread, before or during run(); threads started before run() wait
  // in the ready pool.
  template <class F, class... Args>
    requires std::invocable<std::decay_t<F>, std::decay_t<Args>...>
  JoinHandle<detail::task_result_t<F, Args...>> fork(F&& f, Args&&... args) {
    if (detail::ForkRecord* r = detail::new_record(*this)) {  // RuntimeConfig::lazy_forks
      return detail::RecordFork::launch<detail::task_result_t<F, Args...>>(*r, std::forward<F>(f),
                                                                           std::forward<Args>(args)...);
    }
    Thread& t = make_thread(nullptr);
    return start_forked<detail::task_result_t<F, Args...>>(t, std::forward<F>(f), std::forward<Args>(args)...);
  }
  template <class F, class... Args>
    requires std::invocable<std::decay_t<F>, std::decay_t<Args>...>
  JoinHandle<detail::task_result_t<F, Args...>> fork(ThreadAttributes attributes, F&& f,
                                                     Args&&... args) {
    Thread& t = make_thread(&attributes);
    return start_forked<detail::task_result_t<F, Args...>>(t, std::forward<F>(f), std::forward<Args>(args)...);
  }

  // Starts a user-owned thread in this runtime (Thread::start for callers off the runtime).
  template <class F, class... Args>
    requires std::invocable<std::decay_t<F>, std::decay_t<Args>...>
  void start(Thread& t, F&& f, Args&&... args) {
    t.check_startable();
    t.task_.emplace(std::forward<F>(f), std::forward<Args>(args)...);
    t.launch(this);
  }

  Scheduler& scheduler() const noexcept;
  // Installs `next` (with the ready threads of the current scheduler) while threads run;
  // returns the previous scheduler once no processor can be inside it.
  std::unique_ptr<Scheduler> replace_scheduler(std::unique_ptr<Scheduler> next);
  const Thread& thread_prototype() const noexcept;
  // Threads created from now on are clones of `prototype`; returns the previous prototype once
  // no processor can be using it. Recycled control blocks of the old class are discarded.
  std::unique_ptr<Thread> set_thread_prototype(std::unique_ptr<Thread> prototype);

  std::size_t processors() const noexcept;
  // Grows or shrinks the set of processors to `n` (1 <= n <= max(1024, the initial count)),
  // before or during run(), from any presto thread or OS thread; returns at once. New
  // processors start now; a removed processor leaves at its next dispatch (a thread running on
  // it moves to the ready pool at its next yield, sleep or preemption), and what it cached
  // (stacks, control blocks) goes back to the shared allocators. No thread is lost. The pool
  // is re-attached (ThreadPool::attach) with the new count. Processor 0, run()'s caller, stays.
  void set_processors(std::size_t n);
  Processor& processor(std::size_t index) const;

  // Installs `policy` (UsageError if null) while threads run, and returns the previous one
  // once no thread is inside it. It may ask for 1 to `limit` processors (0: the count now).
  // Callable from any presto thread or OS thread; from inside a policy's decide() it is a
  // UsageError.
  std::unique_ptr<AllocationPolicy> set_allocation_policy(std::unique_ptr<AllocationPolicy> policy,
                                                          std::size_t limit = 0);
  // The policy in force (valid until the next set_allocation_policy).
  const AllocationPolicy& allocation_policy() const noexcept;
  // A safe point for processor allocation: parallel_for calls it before it sizes its team,
  // and so should any construct that forks one thread per processor. Under FixedAllocation
  // it costs a call and a load; otherwise the policy's decide() (usually one clock read),
  // then set_processors with its answer. From a presto thread; a UsageError from a policy
  // that asks for no processor or too many, the probe's error if it cannot start one.
  void begin_parallel_region();
  [[nodiscard]] KeepAlive keep_alive() noexcept;
  // Installs the runtime's IdlePoller (see presto/idle_poller.hpp), before or during run(),
  // from any thread; the runtime owns it and destroys it with itself. If one is installed
  // already, `poller` is destroyed and the installed one is returned: a component that makes
  // its poller on first use (presto::io) may race with itself. UsageError if `poller` is null.
  IdlePoller& install_idle_poller(std::unique_ptr<IdlePoller> poller);
  // The installed IdlePoller, or nullptr.
  IdlePoller* idle_poller() const noexcept;
  RuntimeStats stats() const;
  spdlog::logger& logger() const noexcept;
  // The lock of the central free lists (FreeLists::central), the same object for the runtime's
  // whole life. A pool may guard its own ready queue with it (SingleLockPool), so that one
  // lock serializes every fork, dispatch and finish; it must hold it only briefly and call
  // nothing of the runtime meanwhile.
  Spinlock& free_list_lock() const noexcept;
  std::uint64_t seed() const noexcept;
  const std::string& name() const noexcept;
  std::size_t default_stack_size() const noexcept;
  // The preemption quantum in force: RuntimeConfig::quantum, or 0 if preemption is off or this
  // process cannot preempt (see RuntimeConfig::quantum).
  std::chrono::microseconds quantum() const noexcept;
  bool running() const noexcept;  // inside run()
  // RuntimeConfig::wait_policy (never WaitMode::inherit).
  WaitPolicy wait_policy() const noexcept { return wait_policy_; }

  // Calls f(const Thread&) for every thread of the runtime that has started and not yet ended.
  // Walks each processor's registry in turn; a thread that ends meanwhile waits for the walk to
  // finish before it can be reused, so f must not block. Lazy forks still queued are made
  // threads first (and listed as ready); one run by its joiner that has not asked for its
  // thread is not listed (its joiner is, as running).
  template <class F>
  void for_each_thread(F&& f) const {
    visit_threads([](void* ctx, const Thread& t) { (*static_cast<std::remove_reference_t<F>*>(ctx))(t); },
                  static_cast<void*>(&f));
  }

  // The runtime of the calling presto thread; nullptr on other OS threads.
  static Runtime* current() noexcept;

 private:
  friend class Thread;
  friend class Processor;
  friend class Scheduler;
  friend class KeepAlive;
  friend class detail::Dispatch;
  friend class detail::RuntimeImpl;
  friend void detail::release_handle(Thread& t) noexcept;
  friend void detail::release_joined(Thread& t) noexcept;

  // The constructor's work, on the configuration the configurers have seen.
  Runtime(RuntimeConfig&& configured, std::nullptr_t);
  // A control block from the processor's cache or the prototype; `attributes` may be moved from.
  Thread& make_thread(ThreadAttributes* attributes);
  void unmake_thread(Thread& t) noexcept;
  template <class R, class F, class... Args>
  JoinHandle<R> start_forked(Thread& t, F&& f, Args&&... args) {
    try {
      t.task_.emplace(std::forward<F>(f), std::forward<Args>(args)...);
      launch(t);  // on failure the thread is left unstarted
    } catch (...) {
      unmake_thread(t);
      throw;
    }
    return JoinHandle<R>(t);
  }
  void launch(Thread& t);
  void run_until_halt(Thread& main);
  void visit_threads(void (*fn)(void*, const Thread&), void* ctx) const;

  WaitPolicy wait_policy_;
  std::unique_ptr<detail::RuntimeImpl> impl_;
  std::unique_ptr<detail::RuntimeAllocation> allocation_;  // after impl_: it uses the runtime
};

// presto::fork: Runtime::fork in the current runtime. UsageError outside a presto thread.
namespace detail {
Runtime& current_runtime(const char* operation);
}

template <class F, class... Args>
  requires std::invocable<std::decay_t<F>, std::decay_t<Args>...>
[[nodiscard]] JoinHandle<detail::task_result_t<F, Args...>> fork(F&& f, Args&&... args) {
  if (detail::ForkRecord* r = detail::new_record_here()) {  // as Runtime::fork, without naming the runtime
    return detail::RecordFork::launch<detail::task_result_t<F, Args...>>(*r, std::forward<F>(f),
                                                                         std::forward<Args>(args)...);
  }
  return detail::current_runtime("presto::fork").fork(std::forward<F>(f), std::forward<Args>(args)...);
}

template <class F, class... Args>
  requires std::invocable<std::decay_t<F>, std::decay_t<Args>...>
[[nodiscard]] JoinHandle<detail::task_result_t<F, Args...>> fork(ThreadAttributes attributes, F&& f,
                                                                 Args&&... args) {
  return detail::current_runtime("presto::fork")
      .fork(std::move(attributes), std::forward<F>(f), std::forward<Args>(args)...);
}

}  // namespace presto
