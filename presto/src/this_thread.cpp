#include <presto/this_thread.hpp>

#include <presto/errors.hpp>
#include <presto/non_preemptable.hpp>

#include <optional>
#include <thread>

#include <presto/predicted_return.hpp>
#include <presto/processor.hpp>
#include <presto/runtime.hpp>

#include "current.hpp"
#include "dispatch.hpp"
#include "runtime_impl.hpp"

// this_thread::yield: a predicted-return entry (predicted_return.hpp) where there are such, so
// that two threads yielding to each other from different loops return into them predicted.
// Used: the entry calls it from assembly, which link-time optimization does not see.
extern "C" [[gnu::visibility("hidden"), gnu::used]] void presto_this_thread_yield() {
  using namespace presto;
  if (Processor* p = detail::current_processor(); p != nullptr && p->current_thread() != nullptr) [[likely]] {
    detail::Dispatch::yield_running(*p, *p->current_thread());
  } else {
    std::this_thread::yield();
  }
}

#if PRESTO_PREDICTED_RETURN
PRESTO_PREDICTED_RETURN_ENTRY("_ZN6presto11this_thread5yieldEv", "presto_this_thread_yield");
#endif

namespace presto::this_thread {

#if !PRESTO_PREDICTED_RETURN
void yield() { presto_this_thread_yield(); }
#endif

void sleep_until(Clock::time_point deadline) {
  Thread& me = Thread::current();
  if (me.is_external()) {
    std::this_thread::sleep_until(deadline);
    return;
  }
  SynchroObject& timer = detail::RuntimeImpl::of(*me.runtime()).sleep_object;
  timer.spin_lock();
  timer.block_until(deadline);
}

void sleep_until(Clock::time_point deadline, const StopToken& token) {
  Thread& me = Thread::current();
  // An OS thread sleeps on an object of its own (nobody else can wake it), a presto thread on
  // its runtime's sleep object.
  std::optional<detail::SleepObject> own;
  SynchroObject& timer =
      me.is_external() ? own.emplace() : detail::RuntimeImpl::of(*me.runtime()).sleep_object;
  CancellableWait waiting{timer, token};
  timer.spin_lock();
  if (waiting.block_until(deadline) == WaitStatus::cancelled) waiting.throw_cancelled("sleep");
}

void preemptable() {
  if (detail::kCountPreemption && detail::tl_preempt_disabled == 0) {
    throw UsageError(Thread::current().describe() +
                     " called this_thread::preemptable() outside a nonpreemptable() region");
  }
  detail::preempt_enable();
}

Runtime* runtime() noexcept { return Runtime::current(); }

}  // namespace presto::this_thread
