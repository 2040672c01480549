#pragma once
// Promise<T>: a value (or an exception) produced once, by any thread, and awaited by any number
// of threads. It is a SynchroObject: waiters sleep on it and set_value()/set_exception() wakes
// them all. Future<T> keeps its settled result in one; use one directly for values produced
// elsewhere (an I/O callback, a reply, an OS thread).
//
//   presto::futures::Promise<int> answer{"answer"};
//   presto::fork([&] { answer.set_value(42); }).detach();
//   int v = answer.get();                     // blocks until set; rethrows a set exception
//
// Contract:
// - set_value(...) / set_exception(e) settle it exactly once; a second attempt raises
//   UsageError naming the promise and the thread (the first result is kept).
// - get() may be called any number of times, from any number of presto threads and plain OS
//   threads; it returns a reference to the value held by the promise (valid while it lives)
//   or rethrows the exception every time. take() moves the value out instead: for a promise
//   with a single consumer, which must not read it again.
// - Destroying a promise while threads wait on it raises UsageError (SynchroObject's rule).
//   A promise that is never settled leaves its waiters blocked: presto::Deadlock names them.
// - Timed and cancellable waits: wait_until / wait_for return false if the deadline passed
//   first; wait(token) / get(token) / take(token) throw presto::Cancelled if a stop is
//   requested first (presto/stop_token.hpp). None of them settles or consumes anything when
//   it gives up.
// - T may be void (set_value() with no argument; get() returns nothing); not a reference.

#include <atomic>
#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include <presto/stop_token.hpp>
#include <presto/synchro_object.hpp>
#include <presto/thread.hpp>
#include <presto/thread_queue.hpp>

namespace presto::futures {

namespace detail {
[[noreturn]] void throw_already_settled(const SynchroObject& promise, const char* operation);
[[noreturn]] void throw_taken(const SynchroObject& promise);

// One waiter's interest in a promise being settled (Promise::watch); lives on its stack.
struct Watcher {
  virtual void notify() noexcept = 0;  // under the promise's spinlock
  Watcher* prev = nullptr;
  Watcher* next = nullptr;
  bool linked = false;

 protected:
  ~Watcher() = default;
};

struct WatcherList {
  Watcher* head = nullptr;
  Watcher* tail = nullptr;
  void push_back(Watcher& w) noexcept {
    w.prev = tail;
    w.next = nullptr;
    (tail != nullptr ? tail->next : head) = &w;
    tail = &w;
    w.linked = true;
  }
  void unlink(Watcher& w) noexcept {
    (w.prev != nullptr ? w.prev->next : head) = w.next;
    (w.next != nullptr ? w.next->prev : tail) = w.prev;
    w.prev = w.next = nullptr;
    w.linked = false;
  }
};
}  // namespace detail

template <class T>
class Promise : public SynchroObject {
  static_assert(!std::is_reference_v<T>, "Promise<T&> is not supported: hold a pointer or std::reference_wrapper");
  using Stored = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

 public:
  using value_type = T;
  // What get() returns: a const reference to the value, or nothing for Promise<void>.
  using reference = std::conditional_t<std::is_void_v<T>, void, const Stored&>;

  explicit Promise(std::string name = "promise") : SynchroObject(std::move(name)) {}
  ~Promise() noexcept(false) override { check_no_waiters(); }

  // Settles the promise with T constructed from `args` and wakes every waiter.
  template <class... Args>
    requires(std::is_void_v<T> ? sizeof...(Args) == 0 : std::constructible_from<Stored, Args...>)
  void set_value(Args&&... args) {
    claim("set_value");
    if constexpr (!std::is_void_v<T>) {
      try {
        value_.emplace(std::forward<Args>(args)...);
      } catch (...) {
        state_.store(kEmpty, std::memory_order_release);  // still unsettled: T's constructor threw
        throw;
      }
    }
    publish();
  }
  // Settles the promise with an exception that every get() rethrows. UsageError if `e` is null.
  void set_exception(std::exception_ptr e) {
    if (!e) throw UsageError(Thread::current().describe() + " called set_exception on " + describe() + " with a null exception");
    claim("set_exception");
    error_ = std::move(e);
    publish();
  }

  // True once settled (get() will not block).
  bool ready() const noexcept { return state_.load(std::memory_order_acquire) == kReady; }
  // Blocks the calling thread until the promise is settled; neither returns nor rethrows.
  void wait() {
    if (ready()) return;
    spin_lock();
    while (state_.load(std::memory_order_relaxed) != kReady) {
      block();
      spin_lock();
    }
    spin_unlock();
  }
  // Waits until the promise is settled (true) or `deadline` passes (false).
  bool wait_until(Clock::time_point deadline) { return wait_on(&deadline, StopToken{}) || ready(); }
  template <class Rep, class Period>
  bool wait_for(const std::chrono::duration<Rep, Period>& timeout) {
    return wait_until(Clock::now() + std::chrono::ceil<Clock::duration>(timeout));
  }
  // As wait(), but throws Cancelled if a stop is requested on `token` first.
  void wait(const StopToken& token) {
    if (!wait_on(nullptr, token)) throw Cancelled(describe(), Thread::current().describe(), "wait");
  }
  // Waits, then rethrows the exception or returns the value.
  reference get() {
    wait();
    return read();
  }
  reference get(const StopToken& token) {
    wait(token);
    return read();
  }
  // Waits, then rethrows the exception or moves the value out (once; get() and take() after
  // it raise UsageError).
  T take() {
    wait();
    return move_out();
  }
  T take(const StopToken& token) {
    wait(token);
    return move_out();
  }
  // Calls `notify()` (under this promise's spinlock: it must not block) when the promise is
  // settled, unless it already is (then false, and nothing is called). For waits on several
  // promises at once (wait_any); unwatch() before `watcher` goes away.
  bool watch(detail::Watcher& watcher) {
    spin_lock();
    const bool pending = state_.load(std::memory_order_relaxed) != kReady;
    if (pending) watchers_.push_back(watcher);
    spin_unlock();
    return pending;
  }
  void unwatch(detail::Watcher& watcher) noexcept {
    spin_lock();
    if (watcher.linked) watchers_.unlink(watcher);
    spin_unlock();
  }

  // True if settled with an exception.
  bool has_exception() const noexcept { return ready() && error_ != nullptr; }

  std::string_view kind() const noexcept override { return "promise"; }

 private:
  static constexpr int kEmpty = 0, kSetting = 1, kReady = 2;

  // True once settled; false if the wait gave up (timed out or cancelled).
  bool wait_on(const Clock::time_point* deadline, const StopToken& token) {
    if (ready()) return true;
    CancellableWait waiting{*this, token};
    spin_lock();
    while (state_.load(std::memory_order_relaxed) != kReady) {
      if (waiting.block(deadline) != WaitStatus::woken) return false;
      spin_lock();
    }
    spin_unlock();
    return true;
  }
  reference read() {
    if (error_) std::rethrow_exception(error_);
    if constexpr (!std::is_void_v<T>) {
      if (taken_) detail::throw_taken(*this);
      return *value_;
    }
  }
  T move_out() {
    if (error_) std::rethrow_exception(error_);
    if constexpr (!std::is_void_v<T>) {
      if (std::exchange(taken_, true)) detail::throw_taken(*this);
      return std::move(*value_);
    }
  }

  void claim(const char* operation) {
    int expected = kEmpty;
    if (!state_.compare_exchange_strong(expected, kSetting, std::memory_order_acquire)) {
      detail::throw_already_settled(*this, operation);
    }
  }
  // Readers that see kReady may destroy the promise as soon as this spinlock is released,
  // so nothing here touches `this` after spin_unlock() except as wakeup's identity (a waiter
  // recalled here still reads the promise when it runs: whoever destroys it waits for that).
  // A lone waiter is handed off (wakeup_handoff): the reply of a request that its setter now
  // waits on again runs next, without a trip through the ready queue.
  void publish() {
    ThreadQueue woken;
    spin_lock();
    state_.store(kReady, std::memory_order_release);
    while (Thread* t = recall()) woken.push_back(*t);
    while (detail::Watcher* w = watchers_.head) {
      watchers_.unlink(*w);
      w->notify();
    }
    spin_unlock();
    if (woken.size() == 1) {
      wakeup_handoff(*woken.pop_front());
    } else {
      wakeup_all(woken);
    }
  }

  std::atomic<int> state_{kEmpty};
  std::optional<Stored> value_;
  std::exception_ptr error_;
  bool taken_ = false;
  detail::WatcherList watchers_;  // guarded by the spinlock
};

}  // namespace presto::futures
