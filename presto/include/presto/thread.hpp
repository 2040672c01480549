#pragma once
// Thread: PRESTO's unit of execution, a passive object with a name, an id and attributes
// that, once started, runs a function on its own stack, multiplexed with any number of other
// threads on the runtime's processors (OS threads). Threads are cheap enough to use one per
// matrix element: a stack is bound only at the first dispatch and returned to a per-processor
// cache at termination, and control blocks made by fork() are recycled.
//
//   presto::Thread t{"pusher"};
//   t.start(&Stack::push, &stack, 43);   // std::invoke order; arguments are copied
//   t.join();                             // waits; rethrows t's exception, if any
//   int v = u.join<int>();                // the body's result (UsageError if not an int)
//
// Subclass it to give a thread its own body (override run(), start() with no arguments) or to
// change the lowest-level behaviour (sleep, wakeup, yield: see InstrumentedThread). Install a
// subclass instance as the runtime's prototype (Runtime::set_thread_prototype) and every
// thread the runtime creates is cloned from it through the virtual constructor newthread().
//
// Lifetime: a Thread you construct is yours; it must have finished (or never have started)
// when you destroy it, and destroying one that is still ready, running or blocked is a fatal
// error (its stack would run on a dead object). Threads made by fork() belong to the runtime
// and are reached through their JoinHandle.
//
// Thread::current() is PRESTO's `thisthread`. On an OS thread that is not running a presto
// thread (main() before run(), a std::thread) it returns an *external* thread object for that
// OS thread, whose sleep parks the OS thread, so every synchronization object also works there.
//
// C++ `thread_local` variables belong to the processor (the OS thread), exactly as PRESTO's
// private_t did: a presto thread may resume on another processor after any blocking call and
// then sees another processor's copy. Use presto::ThreadLocal<T> for per-thread state.

#include <atomic>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <presto/detail/execution_context.hpp>
#include <presto/detail/queue_hook.hpp>
#include <presto/detail/task_slot.hpp>
#include <presto/errors.hpp>
#include <presto/synchro_object.hpp>

namespace presto {

class Runtime;
class Processor;
class Scheduler;
class ThreadLocalBase;
template <class R>
class JoinHandle;

namespace detail {
class Dispatch;
class Registry;
class TimerService;
class RuntimeImpl;
class OwnedQueue;
struct LocalEntry;
}  // namespace detail

enum class ThreadState : std::uint32_t {
  created,     // constructed, not started
  ready,       // in the ready pool, waiting for a processor
  running,     // on a processor
  blocked,     // asleep on a SynchroObject (waiting_on())
  terminated,  // returned from its body (or threw)
  abandoned,   // still alive when run() ended with an error; its stack was discarded
};

std::string_view to_string(ThreadState state) noexcept;

// A thread's scheduling properties (priority, deadline, affinity) are hints that pools read
// when the thread enters them (ThreadPool::put); setting one on a ready thread takes effect the
// next time it becomes ready.
struct ThreadAttributes {
  std::string name{};
  std::size_t stack_size = 0;  // usable bytes, rounded up to whole pages; 0: RuntimeConfig's
  int priority = 0;            // larger runs first under PriorityPool; others ignore it
  // When the thread should be done by; none: no deadline. No built-in pool orders by it: it
  // is for custom pools (earliest deadline first, see docs/guide/04-customizing.md).
  std::optional<Clock::time_point> deadline{};
  // The index of the only processor that may run the thread; none: any processor. Every
  // built-in pool honours it. An index that is not one of the runtime's processors is a
  // UsageError at start (and is treated as none should the runtime shrink below it).
  std::optional<std::size_t> affinity{};
};

class Thread : public SynchroObject {
 public:
  explicit Thread(ThreadAttributes attributes = {});
  explicit Thread(std::string name, std::size_t stack_size = 0);
  ~Thread() noexcept(false) override;

  // Starts the thread running std::invoke(f, args...) in the current runtime (the one of the
  // calling presto thread; from an OS thread use Runtime::start). The thread becomes ready
  // and start returns at once. UsageError if it was already started, or if called outside
  // a presto thread.
  template <class F, class... Args>
    requires std::invocable<std::decay_t<F>, std::decay_t<Args>...>
  void start(F&& f, Args&&... args) {
    check_startable();
    task_.emplace(std::forward<F>(f), std::forward<Args>(args)...);
    launch(nullptr);
  }
  // Starts the thread running its own run() (for subclasses that override it).
  void start();

  // Waits until the thread has finished and rethrows its exception, if it threw. join<R>()
  // also returns the body's result (UsageError if the body did not return an R). A thread can
  // be joined once, by one thread, never by itself.
  template <class R = void>
  R join() {
    await_termination();
    return take_joined<R>();
  }
  // As join(), but throws Cancelled if a stop is requested on `token` before the thread has
  // finished (presto/stop_token.hpp); the thread can then still be joined. Never runs the
  // thread inline in the caller, as join() may.
  template <class R = void>
  R join(const std::stop_token& token) {
    await_termination(token);
    return take_joined<R>();
  }

  // PRESTO's `thisthread`: the thread running this code (an external thread off-runtime).
  static Thread& current() noexcept;

  std::uint64_t id() const noexcept { return id_; }  // 0 until started
  ThreadState state() const noexcept {
    return static_cast<ThreadState>(state_.load(std::memory_order_acquire));
  }
  int priority() const noexcept { return priority_; }
  // Takes effect the next time the thread enters a pool (pools read it in put()).
  void set_priority(int priority) noexcept { priority_ = priority; }
  std::optional<Clock::time_point> deadline() const noexcept {
    const Clock::rep d = scheduling_deadline_.load(std::memory_order_relaxed);
    if (d == kNone) return std::nullopt;
    return Clock::time_point(Clock::duration(d));
  }
  // Takes effect the next time the thread enters a pool, as set_priority.
  void set_deadline(std::optional<Clock::time_point> deadline) noexcept {
    scheduling_deadline_.store(deadline ? deadline->time_since_epoch().count() : kNone, std::memory_order_relaxed);
  }
  std::optional<std::size_t> affinity() const noexcept {
    const std::size_t a = affinity_.load(std::memory_order_relaxed);
    if (a == kAnyProcessor) return std::nullopt;
    return a;
  }
  // Takes effect the next time the thread enters a pool, as set_priority. UsageError if the
  // thread belongs to a runtime that has no processor `affinity`.
  void set_affinity(std::optional<std::size_t> affinity);
  std::size_t stack_size() const noexcept { return stack_size_; }  // requested; 0 = default
  Runtime* runtime() const noexcept { return runtime_; }
  // The processor running the thread, or the one that ran it last (nullptr before that).
  Processor* processor() const noexcept { return processor_; }
  // The object the thread sleeps on while blocked; nullptr otherwise.
  SynchroObject* waiting_on() const noexcept { return waiting_on_; }
  // True for the stand-in objects Thread::current() returns on plain OS threads.
  bool is_external() const noexcept { return external_; }

  std::string_view kind() const noexcept override { return "thread"; }
  // "thread 'name' (id N)"; "external thread 'os-TID'" for external threads.
  std::string describe() const override;

  // --- PRESTO's lowest-level primitives, for synchronization objects -------------------
  // A thread can only put itself to sleep or yield; any thread can wake another.

  // Blocks the current thread on `so`. Preconditions: this is the current thread, the caller
  // holds so's spinlock and has remember()ed this thread on `so`. The spinlock is released
  // once the thread is switched out; returns when woken, without the spinlock.
  virtual void sleep(SynchroObject& so);
  // As sleep(), but if `deadline` passes first the thread is removed from so's waiters and
  // false is returned.
  virtual bool sleep_until(SynchroObject& so, Clock::time_point deadline);
  // Makes this thread, asleep on `so` and already recall()ed from it, ready to run.
  // UsageError if it is not asleep on `so`.
  virtual void wakeup(SynchroObject& so);
  // PRESTO's switch(): lets the other ready threads of this processor run first.
  virtual void yield();
  // The virtual constructor: a new, unstarted thread of the same class as this prototype.
  virtual std::unique_ptr<Thread> newthread(ThreadAttributes attributes) const;

  // A thread's own spinlock (it guards the join) is always the built-in one: set_spinlock
  // refuses a Thread, so the fork, join and end paths take it without SynchroObject's check
  // for an installed Spinlock. (Through a SynchroObject& the check finds none: the same lock.)
  void spin_lock() noexcept { spin_.lock(); }
  void spin_unlock() noexcept { spin_.unlock(); }

 protected:
  // The thread's body. The default runs what start(f, args...) bound; override it in a
  // subclass and call start() with no arguments.
  virtual void run();
  // Called when the runtime reuses a recycled control block (made by newthread) for a new
  // thread. Overrides must call the base and reset their own per-thread state.
  virtual void reinitialize(ThreadAttributes attributes);
  // Lets a joiner run this thread as a call on the joiner's own stack, when it joins it before
  // it has ever run (RuntimeConfig::inline_joins), as it runs a thread of class Thread: no stack
  // of its own, no switch, no trip through the pool (the scheduler's withdraw() takes it back
  // instead). Its run() is called as usual, as itself (Thread::current(), its id and name), and
  // so are its sleep(), wakeup() and yield() if it blocks or yields there. Threads of a subclass
  // are never run inline otherwise, since a subclass may depend on running on a stack of its own
  // or on its dispatch through the scheduler; call this in the constructor of one that does
  // not, before it starts. presto::futures::Future does.
  void allow_inline_join() noexcept { inline_joinable_ = true; }

 private:
  friend class Runtime;
  friend class Processor;
  friend class Scheduler;
  friend class SynchroObject;
  friend class Lock;
  friend class Condition;
  friend class ThreadLocalBase;
  friend class ThreadQueue;
  friend class detail::Dispatch;
  friend class detail::Registry;
  friend class detail::TimerService;
  friend class detail::RuntimeImpl;
  friend class detail::OwnedQueue;
  template <class R>
  friend class JoinHandle;

  struct ExternalTag {};
  Thread(ExternalTag, std::string name);  // the stand-in for an OS thread
  static Thread& external();              // this OS thread's stand-in, made on first use

  static constexpr std::size_t kNoTimer = static_cast<std::size_t>(-1);
  static constexpr Clock::rep kNone = std::numeric_limits<Clock::rep>::max();  // no deadline
  static constexpr std::size_t kAnyProcessor = static_cast<std::size_t>(-1);
  // Bits of end_ (see there).
  static constexpr std::uint32_t kEnded = 1;        // the runtime is done with the thread
  static constexpr std::uint32_t kJoinerWaits = 2;  // a joiner sleeps, or may, on this thread
  static constexpr std::uint32_t kDetached = 4;     // forked: its handle is gone (detached or dropped)

  void set_scheduling(const ThreadAttributes& attributes);
  // reinitialize({}) for a control block of class Thread itself, without the attributes' copy.
  void reinitialize_default() noexcept;
  void reset_run_state() noexcept;  // what reinitialize resets besides the attributes
  void check_affinity(const Runtime& rt, std::size_t affinity) const;

  void set_state(ThreadState s) noexcept {
    state_.store(static_cast<std::uint32_t>(s), std::memory_order_release);
  }
  bool sleep_on(SynchroObject& so, const Clock::time_point* deadline);
  // sleep_on for a caller that knows this is the current thread.
  bool sleep_as_current(SynchroObject& so, const Clock::time_point* deadline);
  bool external_sleep(SynchroObject& so, const Clock::time_point* deadline);
  // Whether this thread, which holds a monitor, may keep `waiter`, signalled, in deferred_wake_:
  // it is a presto thread of waiter's runtime, so that a run ending in between abandons both
  // together (an OS thread could release the monitor after the waiter was freed).
  bool may_defer_wake_of(const Thread& waiter) const noexcept {
    return !external_ && waiter.runtime_ == runtime_;
  }
  // Whether this thread, going to sleep, may give its processor straight to `heir`, the
  // waiter it signalled (deferred_wake_): both are of class Thread itself. Dispatch::block
  // decides the rest.
  bool may_hand_off_to(const Thread& heir) const noexcept { return plain_ && heir.plain_; }
  // Whether this thread sleeps on `so`, recalled from it and not woken yet: what wakeup(so)
  // requires of it (and reports otherwise).
  bool recalled_asleep_on(const SynchroObject& so) const noexcept {
    return waiting_on_ == &so && queue_hook_.list == nullptr && state() == ThreadState::blocked;
  }
  [[noreturn, gnu::cold]] void refuse_wakeup(const SynchroObject& so) const;  // wakeup's UsageError
  void wake_deferred();  // wakes deferred_wake_ (set) the usual way: Thread::wakeup
  // Lock::unlock_as with deferred_wake_ set: wakes it, or leaves it deferred past the release
  // where nothing could run it before this thread leaves its processor (heir_lingers_).
  void release_deferred();
  void check_startable() const;
  void launch(Runtime* rt);
  void await_termination();
  void await_termination(const std::stop_token& token);
  // Spinlock held, or the end word's kEnded seen: why the current thread cannot join this one
  // in state s, or nullptr.
  const char* join_obstacle(ThreadState s) const noexcept;
  [[noreturn, gnu::cold]] void join_failed(Thread& me, const char* why);  // unlocks, throws
  template <class R>
  R take_joined() {
    joined_ = true;
    if (exception_) std::rethrow_exception(std::exchange(exception_, nullptr));
    if constexpr (std::is_void_v<R>) {
      task_.reset();
    } else {
      if (!task_.has_result() || task_.result_tag() != &detail::type_tag<R>) throw_wrong_result_type();
      return task_.template take_result<R>();
    }
  }
  [[noreturn]] void throw_wrong_result_type() const;
  void run_body() noexcept;  // on the thread's own stack: run(), catching what it throws
  void destroy_locals() noexcept;
  // The end of the body, on the thread's processor: its locals destroyed, then a waiter it
  // signalled in its last turn and left deferred (release_deferred) woken.
  void end_body() noexcept;

  std::atomic<std::uint32_t> state_{static_cast<std::uint32_t>(ThreadState::created)};
  int priority_ = 0;
  std::uint64_t id_ = 0;
  Runtime* runtime_ = nullptr;
  Processor* processor_ = nullptr;
  SynchroObject* waiting_on_ = nullptr;
  // How the thread's end meets its joiner and its handle, without its spinlock in the common
  // case: the end sets kEnded by one compare-exchange (Dispatch::end_thread), after its last
  // access, unless kJoinerWaits is set; a join that sees kEnded needs no lock. A joiner sets
  // kJoinerWaits, a dropped handle kDetached, each by a fetch_or under the spinlock; the end
  // then takes the spinlock too. Here, beside state_, on the line the processor that ends the
  // thread has just written: the spinlock's line stays where the joiner has it.
  std::atomic<std::uint32_t> end_{0};
  // The thread's position in the ring of the LocalQueuePool queue it is on, or was last on
  // (detail::OwnedQueue). Written by that queue's holder; read by a withdrawal under another
  // queue's lock while a thief may be rewriting it: relaxed atomic accesses (std::atomic_ref).
  std::uint32_t ready_position_ = 0;
  // The waiter this thread signalled (Condition::signal) while holding the monitor and has not
  // woken yet: it could not reacquire the monitor before this thread releases it. Woken when
  // this thread releases a lock (Lock::unlock_as), joins, or goes to sleep, where it takes this
  // thread's processor if it can (Dispatch::block). Only this thread touches it. (Here, where
  // the block had a hole: a larger block costs Figure 3's 40,000 threads cache lines.)
  // While the runtime has one processor, the release may leave it deferred (heir_lingers_,
  // release_deferred): the processor runs this thread until it next yields, sleeps, is
  // preempted or ends, and nothing else could run the waiter meanwhile. Each of those hands it
  // the processor or wakes it (Dispatch::heir_or_next), as does a join or a body this thread
  // runs in its join that becomes a thread.
  Thread* deferred_wake_ = nullptr;
  // Read by pools on other processors while the thread may set them: atomics, relaxed.
  std::atomic<Clock::rep> scheduling_deadline_{kNone};
  std::atomic<std::size_t> affinity_{kAnyProcessor};
  std::uint32_t generation_ = 0;  // prototype generation of a forked control block
  bool external_ = false;
  bool forked_ = false;           // made by the runtime (fork/run): recycled after use
  bool joined_ = false;           // join() already returned (or detached)
  bool timed_out_ = false;
  bool heir_lingers_ = false;     // deferred_wake_'s monitor was released since its signal
  bool plain_ = false;            // of class Thread itself (set at launch): yield and sleep are
                                  // the base versions, which the runtime then calls directly
  bool inline_joinable_ = false;  // a subclass's allow_inline_join()
  // Locks and monitors held: a thread must not finish while it holds one.
  std::uint32_t locks_held_ = 0;
  // Spinlocks and NonPreemptable regions of this thread while it is switched out (preemption).
  std::uint32_t preempt_disabled_ = 0;
  // External threads: the waker sets it after its last access, so a woken OS thread never
  // exits (destroying this object) while its waker still touches it.
  std::atomic<bool> wake_acknowledged_{false};
  detail::ExecutionContext context_;
  detail::Stack stack_;
  detail::TaskSlot task_;
  std::exception_ptr exception_;
  detail::QueueHook queue_hook_;     // ready pool or wait queue
  // The runtime's registry of live threads that holds it, and its slot there.
  detail::Registry* registry_ = nullptr;
  std::atomic<Thread*>* registry_slot_ = nullptr;
  Clock::time_point deadline_{};
  // Its place in the timer heap (kNoTimer: none). Written under the timer service's lock, also
  // when another thread's timer moves it in the heap; read without the lock by a waker asking
  // whether there is a timer to cancel (SynchroObject::recall): a relaxed atomic.
  std::atomic<std::size_t> timer_index_{kNoTimer};
  detail::LocalEntry* locals_ = nullptr;
  // While it runs inline in its joiner (RuntimeConfig::inline_joins): the joiner, whose stack
  // and context it borrows (never freed as its own).
  Thread* host_ = nullptr;
  std::size_t stack_size_ = 0;
};

}  // namespace presto
