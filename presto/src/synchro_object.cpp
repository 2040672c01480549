#include <presto/synchro_object.hpp>

#include <cstdio>
#include <exception>

#include <presto/errors.hpp>
#include <presto/runtime.hpp>
#include <presto/thread.hpp>

#include "current.hpp"
#include "dispatch.hpp"
#include "runtime_impl.hpp"

namespace presto {

SynchroObject::SynchroObject(std::string name) : name_(std::move(name)) {}

SynchroObject::~SynchroObject() noexcept(false) {
  // A derived class's destructor that checked already waited out any holder of the spinlock
  // (a waker about to let it go); a waiter could come after only by using a destroyed object.
  if (!found_free_) check_no_waiters();
}

void SynchroObject::set_spinlock(std::unique_ptr<Spinlock> lock) {
  if (dynamic_cast<Thread*>(this) != nullptr) {
    throw UsageError(Thread::current().describe() + " tried to replace the spinlock of " + describe() +
                     ": a thread's own spinlock is the built-in one");
  }
  if (!spin_try_lock()) {
    throw UsageError(Thread::current().describe() + " replaced the spinlock of " + describe() + " while it was held");
  }
  if (!waiting_.empty()) {
    spin_unlock();
    throw UsageError(Thread::current().describe() + " replaced the spinlock of " + describe() + " while " +
                     std::to_string(waiting_.size()) + " thread(s) wait on it");
  }
  spin_unlock();
  custom_ = std::move(lock);
}

std::string SynchroObject::describe() const {
  return std::string(kind()) + " '" + (name_.empty() ? std::string("<unnamed>") : name_) + "'";
}

void SynchroObject::check_no_waiters() noexcept(false) {
  spin_lock();
  if (waiting_.empty()) {
    spin_unlock();
    found_free_ = true;
    return;
  }
  std::string message = describe() + " destroyed by " + Thread::current().describe() + " while " +
                        std::to_string(waiting_.size()) + " thread(s) wait on it:";
  while (Thread* t = waiting_.front()) {
    message += " " + t->describe();
    forget(*t);  // they stay blocked, reported as waiting on a destroyed object
  }
  spin_unlock();
  if (std::uncaught_exceptions() > 0) {
    std::fputs(("presto: " + message + "\n").c_str(), stderr);
    return;
  }
  throw UsageError(message);
}

void SynchroObject::remember(Thread& t) {
  waiting_.push_back(t);
  t.waiting_on_ = this;
}

// The index is a hint read without the timer lock (another thread's timer may be moving t in
// the heap); cancel() looks again under it.
inline void SynchroObject::cancel_timeout(Thread& t) noexcept {
  if (t.timer_index_.load(std::memory_order_relaxed) != Thread::kNoTimer) detail::RuntimeImpl::of(*t.runtime_).timers.cancel(t);
}

Thread* SynchroObject::recall() noexcept {
  Thread* t = waiting_.pop_front();
  if (t != nullptr) cancel_timeout(*t);
  return t;
}

bool SynchroObject::recall(Thread& t) noexcept {
  if (!waiting_.remove(t)) return false;
  cancel_timeout(t);
  return true;
}

void SynchroObject::wakeup_handoff(Thread& t) {
  if (!detail::Dispatch::defer_wakeup(*this, t)) t.wakeup(*this);
}

void SynchroObject::wakeup_all(ThreadQueue& recalled) {
  while (Thread* t = recalled.pop_front()) t->wakeup(*this);
}

bool SynchroObject::forget(Thread& t) noexcept {
  if (!recall(t)) return false;
  t.waiting_on_ = nullptr;
  return true;
}

void SynchroObject::block() { block_as(detail::current_thread()); }

void SynchroObject::block_as(Thread& me) {
  remember(me);  // UsageError (before sleeping) if it already waits somewhere
  if (me.plain_) {
    me.sleep_as_current(*this, nullptr);  // Thread::sleep, without the virtual call or the check
  } else {
    me.sleep(*this);
  }
}

bool SynchroObject::block_until(Clock::time_point deadline) {
  Thread& me = detail::current_thread();  // read once, before the sleep
  remember(me);
  return me.sleep_until(*this, deadline);
}

}  // namespace presto
