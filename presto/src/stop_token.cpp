#include <presto/stop_token.hpp>

#include <presto/non_preemptable.hpp>
#include <presto/thread.hpp>

#include "race_point.hpp"

namespace presto {

bool StopSource::request_stop() noexcept {
  // A waiter's CancellableWait, once woken, waits in its destructor for this request to be
  // done with it, unless it runs on the same OS thread: then the request must not be switched
  // out midway (which only preemption could do).
  NonPreemptable guard;
  return source_.request_stop();
}

CancellableWait::CancellableWait(SynchroObject& object, const StopToken& token)
    : object_(object), thread_(Thread::current()) {
  if (token.stop_possible()) callback_.emplace(token, OnStop{this});  // may run on_stop now
}

void CancellableWait::on_stop() noexcept {
  requested_.store(true, std::memory_order_relaxed);  // published by the spinlock below
  PRESTO_RACE_POINT("CancellableWait::on_stop: the stop requested, the waiter not yet looked for");
  object_.spin_lock();
  if (!object_.recall(thread_)) {  // not asleep here: it sees requested_ before it sleeps again
    object_.spin_unlock();
    return;
  }
  cancelled_ = true;
  object_.spin_unlock();
  PRESTO_RACE_POINT("CancellableWait::on_stop: the waiter recalled, not yet woken");
  try {
    thread_.wakeup(object_);
  } catch (...) {
    // Only a subclass's wakeup can throw here; the thread then stays blocked and shows up in
    // the deadlock report, as for a timer's wake-up.
  }
}

WaitStatus CancellableWait::block(const Clock::time_point* deadline) {
  if (requested_.load(std::memory_order_relaxed)) {
    object_.spin_unlock();
    return WaitStatus::cancelled;
  }
  if (deadline == nullptr) {
    object_.block();
  } else if (!object_.block_until(*deadline)) {
    return WaitStatus::timed_out;
  }
  // Woken: by the stop if it recall()ed us (cancelled_ was set before the wake-up, which
  // publishes it), else by a waker, whose wake-up stands even if a stop came after it.
  if (cancelled_) {
    cancelled_ = false;
    return WaitStatus::cancelled;
  }
  return WaitStatus::woken;
}

void CancellableWait::throw_cancelled(std::string_view operation) const {
  throw Cancelled(object_.describe(), thread_.describe(), operation);
}

}  // namespace presto
