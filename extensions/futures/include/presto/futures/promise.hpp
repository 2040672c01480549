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
// - T may be void (set_value() with no argument; get() returns nothing); not a reference.

#include <atomic>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include <presto/synchro_object.hpp>
#include <presto/thread.hpp>
#include <presto/thread_queue.hpp>

namespace presto::futures {

namespace detail {
[[noreturn]] void throw_already_settled(const SynchroObject& promise, const char* operation);
[[noreturn]] void throw_taken(const SynchroObject& promise);
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
  // Waits, then rethrows the exception or returns the value.
  reference get() {
    wait();
    if (error_) std::rethrow_exception(error_);
    if constexpr (!std::is_void_v<T>) {
      if (taken_) detail::throw_taken(*this);
      return *value_;
    }
  }
  // Waits, then rethrows the exception or moves the value out (once; get() and take() after
  // it raise UsageError).
  T take() {
    wait();
    if (error_) std::rethrow_exception(error_);
    if constexpr (!std::is_void_v<T>) {
      if (std::exchange(taken_, true)) detail::throw_taken(*this);
      return std::move(*value_);
    }
  }
  // True if settled with an exception.
  bool has_exception() const noexcept { return ready() && error_ != nullptr; }

  std::string_view kind() const noexcept override { return "promise"; }

 private:
  static constexpr int kEmpty = 0, kSetting = 1, kReady = 2;

  void claim(const char* operation) {
    int expected = kEmpty;
    if (!state_.compare_exchange_strong(expected, kSetting, std::memory_order_acquire)) {
      detail::throw_already_settled(*this, operation);
    }
  }
  // Readers that see kReady may destroy the promise as soon as this spinlock is released,
  // so nothing here touches `this` after spin_unlock() except as wakeup's identity.
  void publish() {
    ThreadQueue woken;
    spin_lock();
    state_.store(kReady, std::memory_order_release);
    while (Thread* t = recall()) woken.push_back(*t);
    spin_unlock();
    wakeup_all(woken);
  }

  std::atomic<int> state_{kEmpty};
  std::optional<Stored> value_;
  std::exception_ptr error_;
  bool taken_ = false;
};

}  // namespace presto::futures
