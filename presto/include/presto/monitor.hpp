#pragma once
// Monitor: a Lock guarding a region of code in which only one thread, the owner, may be at a
// time: PRESTO's default Mesa model. Enter it with a Monitor::Entry, PRESTO's
// `MONITOR ENTRY(m)`, which exits on every path out of the scope, return and throw included:
//
//   { presto::Monitor::Entry entry{m};   // blocks (relinquishing the processor) while owned
//     ... critical section ...
//   }                                    // exits; the longest waiter is woken to compete
//
// Conditions (condition.hpp) are bound to a monitor. Misuse raises UsageError naming the
// monitor and the thread: exiting a monitor one does not own, re-entering one already owned,
// destroying one threads wait to enter. Timed and cancellable entries are Lock's
// (try_lock_for, try_lock_until, lock(token)); Entry(m, token) is the guard of the last.

#include <string>
#include <string_view>

#include <presto/lock.hpp>

namespace presto {

class Monitor : public Lock {
 public:
  explicit Monitor(std::string name = {}) : Lock(std::move(name)) {}
  ~Monitor() noexcept(false) override;

  void entry() { lock(); }
  void exit() { unlock(); }

  std::string_view kind() const noexcept override { return "monitor"; }

  // RAII entry guard. Not copyable or movable: it lives on the stack of the thread that owns
  // the monitor.
  class Entry {
   public:
    explicit Entry(Monitor& monitor) : monitor_(monitor) { monitor_.entry(); }
    // Enters unless a stop is requested on `token` first: then throws Cancelled, and the
    // guard does not exist (nothing to exit). See presto/stop_token.hpp.
    Entry(Monitor& monitor, const StopToken& token) : monitor_(monitor) { monitor_.lock(token); }
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;
    ~Entry() noexcept(false) { monitor_.exit(); }
    Monitor& monitor() const noexcept { return monitor_; }

   private:
    Monitor& monitor_;
  };
};

}  // namespace presto
