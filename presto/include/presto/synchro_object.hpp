#pragma once
// SynchroObject: PRESTO's base of every relinquishing synchronization object. It is a
// spinlock, a FIFO queue of waiting threads and a name, and has no semantics of its own:
// Lock, Monitor, Condition, Semaphore, Barrier, AtomicInt (and Thread itself, whose joiners
// wait on it) decide when a thread must wait. Synchronization policy belongs to the object,
// not to the runtime.
//
// Writing a new one (for implementers; applications use the derived classes):
//   spin_lock();                      // guard the object's state
//   if (must_wait) {
//     block();                        // remember the current thread and sleep on this object;
//                                     // returns when woken, with the spinlock NOT held
//   } else spin_unlock();
// and on the waking side
//   spin_lock(); Thread* t = recall(); spin_unlock(); if (t) t->wakeup(*this);
//
// The spinlock is released only after the sleeping thread's context is saved (the release is
// done on the next context), so a waker that found the thread through recall() can never
// resume a thread that is still switching out. Every operation works from a presto thread and
// from a plain OS thread (which sleeps by parking the OS thread).
//
// Destroying an object while threads wait on it raises UsageError naming the object; the
// waiters stay blocked (and are reported by the Deadlock that follows, if nothing else wakes
// them). If the destructor runs during stack unwinding it logs to stderr instead of throwing.

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include <presto/detail/raw_spinlock.hpp>
#include <presto/spinlock.hpp>
#include <presto/thread_queue.hpp>

namespace presto {

class Thread;
class Runtime;

// The clock of every timed operation in PRESTO.
using Clock = std::chrono::steady_clock;

namespace detail {
class TimerService;
class RuntimeImpl;
}  // namespace detail

class SynchroObject {
 public:
  explicit SynchroObject(std::string name = {});
  SynchroObject(const SynchroObject&) = delete;
  SynchroObject& operator=(const SynchroObject&) = delete;
  virtual ~SynchroObject() noexcept(false);

  const std::string& name() const noexcept { return name_; }
  // The kind of object, for messages: "monitor", "condition", "lock", ...
  virtual std::string_view kind() const noexcept { return "synchro object"; }
  // How errors and deadlock reports name this object, e.g. "monitor 'buffer'".
  virtual std::string describe() const;

  // --- For implementers of synchronization objects -------------------------------------

  // The object's spinlock: the built-in test-and-test-and-set lock, or the Spinlock installed
  // by set_spinlock (one predictable branch apart). Either way its holder is not preempted,
  // and a preemption that came meanwhile waits for the next quantum.
  void spin_lock() noexcept {
    if (custom_ == nullptr) [[likely]] {
      spin_.lock();
    } else {
      detail::preempt_disable();
      custom_->acquire();
    }
  }
  bool spin_try_lock() noexcept {
    if (custom_ == nullptr) [[likely]] return spin_.try_lock();
    detail::preempt_disable();
    if (custom_->try_acquire()) return true;
    detail::preempt_enable_quietly();
    return false;
  }
  void spin_unlock() noexcept {
    if (custom_ == nullptr) [[likely]] {
      spin_.unlock();
    } else {
      custom_->release();
      detail::preempt_enable_quietly();
    }
  }

  // Replaces the object's spinlock with `lock` (any Spinlock subclass: a ticket, MCS, CLH or
  // Anderson lock from presto::locks, or one's own); nullptr restores the built-in one. For the
  // owner of the object, before other threads use it: UsageError, naming the object and the
  // caller, if a thread waits on it or its spinlock is held, or if it is a Thread (whose own
  // spinlock, guarding its join, stays the built-in one). The lock's release may run on
  // another presto thread than its acquire (see Spinlock), always on the same OS thread.
  void set_spinlock(std::unique_ptr<Spinlock> lock);
  // The installed Spinlock, or nullptr for the built-in one.
  Spinlock* spinlock() const noexcept { return custom_.get(); }

  // Queue `t` as a waiter (at the back). Spinlock held. UsageError if t already waits.
  void remember(Thread& t);
  // Dequeue the longest waiter, or nullptr, to wake it. Spinlock held. Cancels its timeout.
  Thread* recall() noexcept;
  // Dequeue this particular waiter to wake it; false if it does not wait here. Spinlock held.
  bool recall(Thread& t) noexcept;
  // Wakes, in order, every thread of `recalled` (threads recall()ed from this object and
  // queued there, spinlock no longer held): the usual end of a broadcast.
  void wakeup_all(ThreadQueue& recalled);
  // Wakes `t`, recall()ed from this object (spinlock no longer held), as t->wakeup(*this) does,
  // for a partner the calling thread has just served and will likely wait for next: a
  // channel's receiver or sender, a semaphore's waiter. Where nothing else could run `t` before
  // the caller leaves its processor (a runtime of one processor with the built-in scheduler and
  // pool, both threads of class Thread, the caller holding no Lock), `t` is woken only then, as
  // a signalled waiter is after its monitor's release (docs/design/runtime.md §4): it runs
  // next, without a trip through the ready queue, if the caller goes to sleep; it is woken
  // where the caller yields, is preempted, joins, ends or hands off another partner first.
  // Anywhere else (or from an OS thread, or from a fork not yet made a thread) it is
  // t->wakeup(*this), with the same UsageError if `t` does not sleep here.
  void wakeup_handoff(Thread& t);
  // Remove `t` if it waits here, not to wake it (it gives up waiting, or is being abandoned);
  // false if it does not wait here. Spinlock held.
  bool forget(Thread& t) noexcept;
  bool has_waiters() const noexcept { return !waiting_.empty(); }
  std::size_t waiter_count() const noexcept { return waiting_.size(); }
  // Calls f(const Thread&) for each waiter, longest first. Spinlock held.
  template <class F>
  void for_each_waiter(F&& f) const {
    waiting_.for_each(f);
  }

  // remember(current thread) and sleep on this object. Spinlock held on entry; released
  // (after the thread is switched out) on return.
  void block();
  // As block(), but gives up at `deadline`: returns false if it timed out (the thread is then
  // no longer a waiter), true if it was woken.
  bool block_until(Clock::time_point deadline);

 protected:
  // Raises UsageError (or, during stack unwinding, prints the error) if threads still wait on
  // this object; detaches them first so they never touch it again. The destructor of every
  // derived class calls it while the object is still whole, so messages name it correctly;
  // SynchroObject's own destructor then checks again only if no such call found it free.
  void check_no_waiters() noexcept(false);
  void set_name(std::string name) { name_ = std::move(name); }

 private:
  friend class Thread;
  friend class Lock;
  friend class Condition;
  friend class detail::TimerService;
  friend class detail::RuntimeImpl;

  // block() for a caller that already has `me`, the current thread (Lock and Condition).
  void block_as(Thread& me);
  // A recalled thread's timeout, if it has one, will not fire.
  static void cancel_timeout(Thread& t) noexcept;

  detail::RawSpinlock spin_;
  bool found_free_ = false;  // a check_no_waiters() found no waiter: the object is being destroyed
  std::unique_ptr<Spinlock> custom_;  // set_spinlock's, or nullptr: spin_ is in use
  ThreadQueue waiting_;
  std::string name_;
};

}  // namespace presto
