#include <presto/condition.hpp>

#include <presto/predicted_return.hpp>

#include "current.hpp"

namespace presto {

Condition::Condition(Monitor& monitor, std::string name) : SynchroObject(std::move(name)), monitor_(monitor) {}

Condition::~Condition() noexcept(false) { check_no_waiters(); }

std::string Condition::describe() const { return SynchroObject::describe() + " of " + monitor_.describe(); }

// The hot check inline; the message, which needs the strings, out of line.
inline void Condition::check_owner(const Thread& me, const Monitor::Entry* entry, const char* operation) const {
  if ((entry == nullptr || &entry->monitor() == &monitor_) && monitor_.owner() == &me) [[likely]] return;
  owner_error(entry, operation);
}

void Condition::owner_error(const Monitor::Entry* entry, const char* operation) const {
  if (entry != nullptr && &entry->monitor() != &monitor_) {
    throw UsageError(Thread::current().describe() + " called " + operation + " on " + describe() +
                     " with an entry of " + entry->monitor().describe());
  }
  throw UsageError(Thread::current().describe() + " called " + operation + " on " + describe() + " without holding " +
                   monitor_.describe());
}

// Who else changes the queue? A waiter queues itself holding the spinlock, which it took before
// letting the monitor go (that the caller now holds) and keeps until it is switched out; a
// timeout or a stop dequeues a timed waiter under the spinlock alone. So with no timed waiter,
// and the spinlock seen free after the caller's acquisition of the monitor, every waiter is
// queued and asleep, and nobody else can touch the queue until the caller lets the monitor go:
// dequeue without the spinlock's locked instruction. (A runtime abandoning its survivors, and
// the destructor, also dequeue: when no thread can be signalling.)
inline bool Condition::may_dequeue_unlocked() const noexcept {
  return timed_waiters_ == 0 && spinlock() == nullptr && spin_.is_free_acquire();
}

inline void Condition::reacquire(Thread& me) {
  if (!monitor_.took_over(me)) monitor_.lock_as(me);
}

#if PRESTO_PREDICTED_RETURN
PRESTO_PREDICTED_RETURN_ENTRY("_ZN6presto9Condition4waitERNS_7Monitor5EntryE",
                              "_ZN6presto9Condition9wait_bodyERNS_7Monitor5EntryE");
#else
void Condition::wait(Monitor::Entry& entry) { wait_body(entry); }
#endif

// Used: the entry calls it from assembly, which link-time optimization does not see.
[[gnu::used]] void Condition::wait_body(Monitor::Entry& entry) {
  Thread& me = detail::current_thread();  // read once, before the sleep
  check_owner(me, &entry, "wait");
  spin_lock();
  try {
    // A signaller needs our spinlock, so none slips in before we sleep. The waiter we
    // signalled, if any, is woken by our sleep, which hands it our processor if it can.
    // That waiter needs a monitor we still hold (every other release of a lock wakes it):
    // holding one lock, this monitor, which it then takes from us directly. Only here: this
    // wait always sleeps, so the waiter is always woken (a timed or cancellable wait may
    // return without sleeping, and a plain thread's wake-up cannot throw).
    // (A waiter signalled before a release of the monitor since, heir_lingers_, may need
    // another monitor: the one it waits for is this one if it waits on this condition.)
    if (Thread* heir = me.deferred_wake_; heir != nullptr && me.locks_held_ == 1 && me.may_hand_off_to(*heir) &&
                                          (!me.heir_lingers_ || heir->waiting_on_ == this)) {
      monitor_.pass_as(me, *heir);
    } else {
      monitor_.release_as(me);
    }
  } catch (...) {
    spin_unlock();
    throw;
  }
  block_as(me);
  reacquire(me);
}

bool Condition::wait_until(Monitor::Entry& entry, Clock::time_point deadline) {
  return wait_on(entry, &deadline, StopToken{}, "wait_until") == WaitStatus::woken;
}

void Condition::wait(Monitor::Entry& entry, const StopToken& token) {
  if (wait_on(entry, nullptr, token, "wait") == WaitStatus::cancelled) {
    throw Cancelled(describe(), Thread::current().describe(), "wait");
  }
}

bool Condition::wait_until(Monitor::Entry& entry, Clock::time_point deadline, const StopToken& token) {
  switch (wait_on(entry, &deadline, token, "wait_until")) {
    case WaitStatus::woken: return true;
    case WaitStatus::timed_out: return false;
    case WaitStatus::cancelled: break;
  }
  throw Cancelled(describe(), Thread::current().describe(), "wait_until");
}

WaitStatus Condition::wait_on(Monitor::Entry& entry, const Clock::time_point* deadline, const StopToken& token,
                              const char* operation) {
  Thread& me = detail::current_thread();  // read once, before the sleep
  check_owner(me, &entry, operation);
  ++timed_waiters_;  // before the monitor goes: from then on a timeout may dequeue us
  CancellableWait waiting{*this, token};
  spin_lock();
  try {
    monitor_.release_as(me);  // as in wait(entry)
  } catch (...) {
    spin_unlock();
    throw;
  }
  const WaitStatus status = waiting.block(deadline);
  reacquire(me);
  --timed_waiters_;
  return status;
}

void Condition::signal() {
  Thread& me = detail::current_thread();
  check_owner(me, nullptr, "signal");
  Thread* t;
  if (may_dequeue_unlocked()) [[likely]] {
    t = waiting_.pop_front();  // no timed waiter: no timeout to cancel
  } else {
    spin_lock();
    t = recall();
    spin_unlock();
  }
  if (t == nullptr) return;
  // A waiter signalled before a release since (Thread::release_deferred) is woken first.
  if (me.heir_lingers_) [[unlikely]] me.wake_deferred();
  if (me.deferred_wake_ == nullptr && me.may_defer_wake_of(*t)) {
    me.deferred_wake_ = t;  // it needs the monitor first: woken when we release it, or sleep
  } else {
    t->wakeup(*this);
  }
}

void Condition::broadcast() {
  Thread& me = detail::current_thread();
  check_owner(me, nullptr, "broadcast");
  ThreadQueue woken;
  if (may_dequeue_unlocked()) [[likely]] {
    while (Thread* t = waiting_.pop_front()) woken.push_back(*t);
  } else {
    spin_lock();
    while (Thread* t = recall()) woken.push_back(*t);
    spin_unlock();
  }
  if (me.heir_lingers_) [[unlikely]] me.wake_deferred();  // signalled first: woken first
  wakeup_all(woken);
}

}  // namespace presto
