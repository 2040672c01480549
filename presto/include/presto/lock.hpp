#pragma once
// Lock: PRESTO's simplest relinquishing lock. A thread that finds it held gives up its
// processor (sleeps) until the holder unlocks, instead of spinning. Std Lockable, so
// std::scoped_lock and std::unique_lock work. Not recursive: locking a Lock one holds, or
// unlocking one held by another thread, raises UsageError.
//
// A thread that finishes while holding a Lock ends the run with a UsageError naming it (the
// lock would otherwise stay held by a dead thread forever).
//
// Cost: uncontended lock+unlock is two atomic compare-exchanges, as for std::mutex; the
// spinlock and wait queue of the SynchroObject are touched only under contention. Waiters are
// woken in FIFO order and then compete for the lock (Mesa semantics: a woken waiter may find
// it taken again and waits again). How a thread waits for it (sleep, spin, spin then sleep) is
// its wait policy (set_wait_policy); a Monitor's entry follows its policy, a Condition's wait sleeps.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <presto/stop_token.hpp>
#include <presto/synchro_object.hpp>
#include <presto/thread.hpp>
#include <presto/wait_policy.hpp>

namespace presto {

class Lock : public SynchroObject {
 public:
  explicit Lock(std::string name = {});
  ~Lock() noexcept(false) override;

  void lock() { lock_as(Thread::current()); }
  // Acquires the lock if it is free. UsageError if the caller already holds it.
  bool try_lock();
  // Waits for the lock until `deadline` (sleeping, whatever the wait policy); false if it
  // passed first. A deadline already past makes it a try_lock.
  bool try_lock_until(Clock::time_point deadline) { return lock_until(&deadline, StopToken{}); }
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout) {
    return try_lock_until(Clock::now() + std::chrono::ceil<Clock::duration>(timeout));
  }
  // As lock(), but throws Cancelled (without the lock) if a stop is requested on `token`
  // before the lock is acquired (presto/stop_token.hpp).
  void lock(const StopToken& token) { lock_until(nullptr, token); }
  // As try_lock_until, and throws Cancelled as lock(token).
  bool try_lock_until(Clock::time_point deadline, const StopToken& token) { return lock_until(&deadline, token); }
  void unlock() { unlock_as(Thread::current()); }

  // The holder, or nullptr. A snapshot: it may change as soon as it is read, except when the
  // caller is the holder.
  Thread* owner() const noexcept {
    return reinterpret_cast<Thread*>(word_.load(std::memory_order_acquire) & ~kWaitersBit);
  }
  bool held_by_current_thread() const noexcept { return owner() == &Thread::current(); }

  std::string_view kind() const noexcept override { return "lock"; }

  // How a thread that finds it held waits (presto/wait_policy.hpp); WaitMode::inherit (the
  // default) takes the runtime's RuntimeConfig::wait_policy. UsageError for a negative budget.
  void set_wait_policy(WaitPolicy policy) { wait_.set_policy(policy, describe()); }
  WaitPolicy wait_policy() const noexcept { return wait_.policy(); }
  // The measured cost of a block + wake-up here, the competitive mode's budget (0 until measured).
  std::chrono::nanoseconds block_cost() const noexcept { return wait_.block_cost(); }

 protected:
  // For the destructors of Lock and its subclasses: waiters raise UsageError (as for every
  // SynchroObject); a lock destroyed by its holder is released with it; one held by another
  // live thread raises UsageError (that thread would unlock freed memory); one held by a
  // thread that finished or was abandoned goes quietly.
  void check_destroyable() noexcept(false);

 private:
  friend class Condition;  // a wait exits and re-enters its monitor knowing the caller

  static constexpr std::uintptr_t kWaitersBit = 1;  // set while threads sleep in the queue
  static std::uintptr_t address(Thread& t) noexcept { return reinterpret_cast<std::uintptr_t>(&t); }
  void lock_slow(Thread& me);
  // The timed and cancellable acquisition: false if the deadline (if any) passed first.
  bool lock_until(const Clock::time_point* deadline, const StopToken& token);
  // Competes for the lock until it is taken (true) or wait() returns false (gives up). wait()
  // is called with the spinlock held and this thread queued as a waiter ready to block.
  template <class Wait>
  bool acquire_or_wait(Thread& me, Wait&& wait);
  void unlock_slow(Thread& me);
  // lock() and unlock() for a caller that already has `me`, the current thread: one lookup of
  // Thread::current() (an out-of-line call) per Condition::wait instead of one per step.
  void lock_as(Thread& me) {
    std::uintptr_t expected = 0;
    if (!word_.compare_exchange_strong(expected, address(me), std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
      lock_slow(me);
    }
    ++me.locks_held_;
  }
  void unlock_as(Thread& me) {
    release_as(me);
    if (me.deferred_wake_ != nullptr) [[unlikely]] me.release_deferred();  // it needed this lock
  }
  // unlock_as without waking the waiter `me` signalled: a Condition's wait, whose sleep hands
  // that waiter the processor (Thread::deferred_wake_).
  void release_as(Thread& me) {
    std::uintptr_t expected = address(me);
    if (!word_.compare_exchange_strong(expected, 0, std::memory_order_release,
                                       std::memory_order_relaxed)) {
      unlock_slow(me);
    }
    --me.locks_held_;
  }
  // release_as that makes `heir`, a sleeping waiter that `me` signalled and whose wake-up `me`
  // deferred, the holder: a Condition's wait, when the heir would take this lock first thing on
  // waking. One compare-exchange instead of two (this release and the heir's acquisition). The
  // threads asleep on the lock stay asleep (kWaitersBit stays set): the heir's release wakes
  // one, as this release would have. The heir counts the lock as its own when it wakes
  // (took_over).
  void pass_as(Thread& me, Thread& heir) noexcept {
    std::uintptr_t w = address(me);
    while (!word_.compare_exchange_weak(w, address(heir) | (w & kWaitersBit), std::memory_order_release,
                                        std::memory_order_relaxed)) {
    }
    --me.locks_held_;
  }
  // After a Condition's sleep: whether a pass_as made `me` the holder (then it is counted as
  // held, as lock_as would), else false and `me` must lock_as.
  bool took_over(Thread& me) noexcept {
    if (owner() != &me) return false;
    ++me.locks_held_;
    return true;
  }

  std::atomic<std::uintptr_t> word_{0};  // owner address | kWaitersBit
  detail::WaitState wait_;
};

}  // namespace presto
