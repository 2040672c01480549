#pragma once
// Processor: an OS thread that animates presto threads. Its loop is PRESTO's
//
//   forever: ask the scheduler for a ready thread; run it until it blocks, yields or
//            terminates; if there is none, idle(); once the system has halted, stop.
//
// When a thread gives up its processor the runtime switches directly to the next ready
// thread, without a round trip through the processor's own context; the processor's loop only
// runs when nothing is ready.
//
// Subclass it to pin processors to cores, name them, or change how they idle, and install the
// subclass with RuntimeConfig::processor_prototype: the runtime makes each of its processors
// by calling newprocessor() on the prototype (PRESTO's virtual constructor), on the thread that
// constructs the Runtime. Processor 0 is the OS thread that calls Runtime::run().

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include <presto/detail/execution_context.hpp>
#include <presto/detail/fork_record.hpp>
#include <presto/detail/raw_spinlock.hpp>

namespace presto {

class LocalQueuePool;
class Runtime;
class Thread;
class SynchroObject;

namespace detail {
class Dispatch;
class OwnedQueue;
class RuntimeImpl;
struct ProcessorState;
}  // namespace detail

class Processor {
 public:
  Processor();
  Processor(const Processor&) = delete;
  Processor& operator=(const Processor&) = delete;
  virtual ~Processor();

  // The virtual constructor: a new processor of the same class as this prototype.
  virtual std::unique_ptr<Processor> newprocessor() const;

  Runtime& runtime() const noexcept { return *runtime_; }
  std::size_t index() const noexcept { return index_; }
  // The presto thread running on this processor, or nullptr while it idles. (A lazy fork run
  // by its joiner becomes a thread here, when first asked: detail/fork_record.hpp.)
  Thread* current_thread() const noexcept {
    Thread* t = current_;
    if (detail::is_record(t)) [[unlikely]] return detail::materialize_current(*this);
    return t;
  }
  // Threads this processor has dispatched so far (a lazy fork run here as a call, by its joiner
  // or a runner, counts as one).
  std::uint64_t dispatches() const noexcept;
  // Threads this processor has preempted so far (RuntimeConfig::quantum).
  std::uint64_t preemptions() const noexcept { return preemptions_.load(std::memory_order_relaxed); }
  // True while this processor looks for work for the last time before it sleeps (park()): a
  // pool that leaves some ready threads to other processors for a while (LocalQueuePool
  // leaves a queue's only thread to its own processor for a few microseconds) must count them
  // in has_work_for(p) then, so that no processor sleeps while a thread it may run waits.
  bool parking() const noexcept;

  // The processor of the calling OS thread, or nullptr on an OS thread that is not one.
  static Processor* current() noexcept;

 protected:
  // Called when no thread is ready; returns when one may be, when the run is ending, or when
  // the system may have halted, and the loop then checks for halting and asks the scheduler
  // again. The default polls work_available() for RuntimeConfig::idle_spin rounds, then
  // park()s: an idle runtime uses no CPU. With an IdlePoller whose threads wait, it looks once
  // with poll(p, false) instead of spinning, and returns without parking if that left none
  // waiting (presto/idle_poller.hpp).
  virtual void idle();
  // Called on the processor's OS thread before its first dispatch and after its last one.
  virtual void on_start() {}
  virtual void on_stop() {}

  // True if a thread is ready or the run is ending: time to stop idling.
  bool work_available() const noexcept;
  // Sleeps without using CPU until work may be available (a thread became ready, the run
  // ends). Returns at once if work is available already; may return spuriously. The
  // preemption timer (RuntimeConfig::quantum) is paused meanwhile.
  void park();

 private:
  friend class Runtime;
  friend class Thread;
  friend class detail::Dispatch;
  friend class detail::RuntimeImpl;

  // What the context that runs next must do for the one that just left (see Dispatch).
  enum class After : unsigned char { nothing, requeue, unlock, release_queue, finish };
  // Runtime::set_processors: a processor being removed retires at its next dispatch, unless
  // it is added back first.
  enum class Phase : unsigned char { active, retiring, retired };

  Runtime* runtime_ = nullptr;
  std::size_t index_ = 0;
  // The queue (LocalQueuePool::Queue, which knows its pool) that the dispatch path pushes and
  // pops itself: queue index_ of the runtime's pool while its scheduler is a plain Scheduler
  // and that pool a waker-placement LocalQueuePool with a queue for this processor, else
  // nullptr (each operation asks the scheduler). One load instead of the scheduler's, its
  // pool's, its queues' and their checks on every dispatch: the loads before a switch depend
  // on each other, so each one saved shortens the switch. Written by
  // RuntimeImpl::refresh_own_queues at install and first thing in each replacement's quiesce;
  // read inside the gate.
  std::atomic<detail::OwnedQueue*> own_queue_{nullptr};
  Thread* current_ = nullptr;
  detail::ExecutionContext native_;
  detail::ExceptionState* exceptions_ = nullptr;  // the OS thread's (Dispatch::start_processor)
  After after_ = After::nothing;
  Thread* from_ = nullptr;  // the thread that left; nullptr: the native context or a dead thread
  SynchroObject* unlock_ = nullptr;
  detail::OwnedQueue* release_ = nullptr;  // the ready queue a yield left held (Dispatch::yield)
  // A thread that finished leaves its stack and context here for the next context to free:
  // its control block may already be reused by its joiner.
  detail::Stack dead_stack_;
  detail::ExecutionContext dead_context_;
  // True while this processor is inside the scheduler, its pool or the thread prototype;
  // Runtime's replace operations wait for every processor to be out once, to know none is
  // still inside the old object (see Dispatch::enter).
  std::atomic<bool> in_gate_{false};
  unsigned gate_depth_ = 0;
  std::atomic<std::uint32_t> park_word_{0};
  std::atomic<Phase> phase_{Phase::active};
  // Threads put on this processor, and lazy forks run here as calls that were made threads
  // while they ran; those that ended without one are ProcessorState::threadless (dispatches()).
  std::atomic<std::uint64_t> dispatches_{0};
  std::atomic<std::uint64_t> preemptions_{0};
  // dispatches_ when the quantum last expired, read and written by the quantum handler only.
  std::uint64_t quantum_dispatches_ = 0;
  std::unique_ptr<detail::ProcessorState> state_;
};

}  // namespace presto
