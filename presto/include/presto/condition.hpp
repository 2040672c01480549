#pragma once
// Condition: a condition variable bound to a Monitor, with Mesa semantics. A signal is only a
// hint that the state a waiter needs held at some point; the waiter must check again after it
// reacquires the monitor. The predicate forms loop inside the library so nobody forgets:
//
//   presto::Monitor::Entry entry{m};
//   nonempty.wait(entry, [&] { return !items.empty(); });   // returns with the monitor held
//
// wait releases the monitor while the thread sleeps and reacquires it before returning.
// signal wakes the longest waiter, broadcast wakes all; the signaller keeps the monitor.
// A signalled waiter cannot return before it has the monitor again, so signal wakes it when
// the signaller lets the monitor go (leaves it, waits, or sleeps on anything else while
// holding it); a second signal before then wakes its waiter at once. A signaller that then
// waits gives its processor straight to the waiter when that is whom the processor would
// run next anyway (nobody else ready there): a ping-pong costs no trip through the ready queue.
// Such a signaller, if its wait is wait(entry) or wait(entry, pred) and the monitor is the only
// lock it holds, also gives the waiter the monitor itself as it lets it go: the waiter returns
// holding it without competing for it (as if it had won the race Mesa allows), and threads
// waiting to enter stay queued until the waiter lets it go in turn. That saves the waiter's
// compare-exchange on the monitor, one of the four locked instructions of a ping-pong's
// hand-off. While no waiter is in a timed or cancellable wait, signal and broadcast also
// dequeue without the condition's spinlock: a hand-off costs two.
// Waiting or signalling without holding the bound monitor raises UsageError, as does
// destroying a condition threads wait on.

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include <presto/monitor.hpp>
#include <presto/stop_token.hpp>
#include <presto/synchro_object.hpp>

namespace presto {

class Condition : public SynchroObject {
 public:
  explicit Condition(Monitor& monitor, std::string name = {});
  ~Condition() noexcept(false) override;

  // Waits for a signal. May return without one (Mesa): prefer the predicate forms.
  void wait(Monitor::Entry& entry);
  template <class Predicate>
  void wait(Monitor::Entry& entry, Predicate pred) {
    while (!pred()) wait(entry);
  }
  // Waits for a signal until `deadline`; false if the deadline passed first.
  bool wait_until(Monitor::Entry& entry, Clock::time_point deadline);
  // Waits until pred() holds or the deadline passes; returns pred() (false: timed out).
  template <class Predicate>
  bool wait_until(Monitor::Entry& entry, Clock::time_point deadline, Predicate pred) {
    while (!pred()) {
      if (!wait_until(entry, deadline)) return pred();
    }
    return true;
  }
  // Waits for a signal for at most `timeout`; false if it passed first.
  template <class Rep, class Period>
  bool wait_for(Monitor::Entry& entry, const std::chrono::duration<Rep, Period>& timeout) {
    return wait_until(entry, Clock::now() + std::chrono::ceil<Clock::duration>(timeout));
  }
  template <class Rep, class Period, class Predicate>
  bool wait_for(Monitor::Entry& entry, const std::chrono::duration<Rep, Period>& timeout,
                Predicate pred) {
    return wait_until(entry, Clock::now() + std::chrono::ceil<Clock::duration>(timeout), std::move(pred));
  }

  // As wait(entry), but throws Cancelled if a stop is requested on `token` first
  // (presto/stop_token.hpp). Either way it returns (or throws) with the monitor held again.
  void wait(Monitor::Entry& entry, const StopToken& token);
  // Waits until pred() holds; throws Cancelled if a stop is requested first (std's order of
  // arguments: condition_variable_any::wait(lock, stoken, pred), which returns instead).
  template <class Predicate>
  void wait(Monitor::Entry& entry, const StopToken& token, Predicate pred) {
    while (!pred()) wait(entry, token);
  }
  // As wait_until(entry, deadline), and throws Cancelled as wait(entry, token).
  bool wait_until(Monitor::Entry& entry, Clock::time_point deadline, const StopToken& token);

  void signal();
  void broadcast();

  Monitor& monitor() const noexcept { return monitor_; }
  std::string_view kind() const noexcept override { return "condition"; }
  std::string describe() const override;  // "condition 'nonempty' of monitor 'buffer'"

 private:
  // wait(entry)'s work: on x86-64 System V, wait(entry) is an entry into it that returns to its
  // caller predicted after a switch (<presto/predicted_return.hpp>).
  [[gnu::visibility("hidden")]] void wait_body(Monitor::Entry& entry);
  // UsageError unless the caller, `me`, holds the monitor (and `entry`, if given, is of it).
  void check_owner(const Thread& me, const Monitor::Entry* entry, const char* operation) const;
  // The timed and cancellable wait; the monitor is held again on return.
  WaitStatus wait_on(Monitor::Entry& entry, const Clock::time_point* deadline, const StopToken& token,
                     const char* operation);
  [[noreturn, gnu::cold]] void owner_error(const Monitor::Entry* entry, const char* operation) const;
  // Whether signal and broadcast, holding the monitor, may dequeue waiters without the
  // spinlock (condition.cpp says why that is safe).
  bool may_dequeue_unlocked() const noexcept;
  // A wait's reacquisition of the monitor after its sleep, unless a signaller's wait passed
  // it to `me` (Lock::pass_as).
  void reacquire(Thread& me);

  Monitor& monitor_;
  // The waiters in a timed or cancellable wait (wait_on), which a timeout or a stop may take
  // off the queue without the monitor. Changed and read only by the monitor's holder; counted
  // from before such a waiter lets the monitor go until after it holds it again (a wait that
  // throws midway leaves it counted: too high is safe). While it is 0, only the monitor's
  // holder changes the queue, so signal and broadcast need not take the spinlock
  // (may_dequeue_unlocked).
  std::size_t timed_waiters_ = 0;
};

}  // namespace presto
