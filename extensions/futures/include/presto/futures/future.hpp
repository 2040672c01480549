#pragma once
// Future<T>: Multilisp's future, built as the open-environment paper (§5.2) describes it: a
// presto::Thread whose return value is its value. Constructing one starts the computation on
// a new thread; get() blocks until the thread has finished and returns its value, or rethrows
// its exception.
//
//   presto::futures::Future sum{[&] { return add_up(v); }};   // Future<long>, running now
//   ... other work ...
//   long s = sum.get();
//
// - The computation's thread settles a Promise<T> inside the future with its value (or its
//   exception); every get() (any number, from any presto thread or plain OS thread,
//   concurrently) reads that promise: it returns a const reference to the value, or rethrows
//   the exception. take() moves the value out instead (single consumer), as get() on a
//   temporary future does. The first get() also joins the thread, and runs it inline if it
//   has not started yet (RuntimeConfig::inline_joins).
// - ready(): true once the computation has finished; get() will not block.
// - wait_until / wait_for: wait for the value until a deadline (true: ready; false: the
//   deadline passed; std::future's names, a bool for std::future_status). get(token),
//   take(token) and wait(token) throw presto::Cancelled if a stop is requested on `token`
//   first (presto/stop_token.hpp). These never run the computation inline.
// - Future(f, args...) starts in the calling presto thread's runtime (UsageError on an OS
//   thread); Future(runtime, f, args...) starts in `runtime` from anywhere, before or during
//   its run(). Arguments are copied (std::invoke order, as Thread::start).
// - A Future is a Thread: not copyable or movable. Hold it where it is made, in a node-based
//   container (std::deque::emplace_back, std::list) or a std::unique_ptr, and pass references.
// - Destruction waits for the computation. If it threw and no get() ever saw the exception,
//   the destructor logs it (runtime logger, warn): nothing is lost silently. Destroying a
//   future while other threads wait in get() raises UsageError.
// - A future's own computation must not get() it (UsageError: it would wait for itself).
// - Future is final: a subclass's constructor would still be running when the thread starts.

#include <atomic>
#include <chrono>
#include <exception>
#include <concepts>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <presto/errors.hpp>
#include <presto/futures/promise.hpp>
#include <presto/runtime.hpp>
#include <presto/stop_token.hpp>
#include <presto/this_thread.hpp>
#include <presto/thread.hpp>

namespace presto::futures {

namespace detail {
// Logs the exception of a future destroyed before anyone called get().
void report_unobserved(const Thread& future, const std::exception_ptr& error) noexcept;
[[noreturn]] void throw_self_get(const Thread& future);

template <class F, class... Args>
using result_t = std::decay_t<std::invoke_result_t<std::decay_t<F>, std::decay_t<Args>...>>;
}  // namespace detail

template <class T>
class Future final : public Thread {
 public:
  using value_type = T;
  using reference = typename Promise<T>::reference;

  template <class F, class... Args>
    requires std::invocable<std::decay_t<F>, std::decay_t<Args>...> &&
             (std::is_void_v<T> || std::convertible_to<detail::result_t<F, Args...>, T>)
  explicit Future(F&& f, Args&&... args) : Thread("future"), result_("future") {
    allow_inline_join();  // the computation needs no stack of its own: a get() may run it
    start(body(std::forward<F>(f), std::forward<Args>(args)...));
  }
  template <class F, class... Args>
    requires std::invocable<std::decay_t<F>, std::decay_t<Args>...> &&
             (std::is_void_v<T> || std::convertible_to<detail::result_t<F, Args...>, T>)
  Future(Runtime& runtime, F&& f, Args&&... args) : Thread("future"), result_("future") {
    allow_inline_join();
    runtime.start(*this, body(std::forward<F>(f), std::forward<Args>(args)...));
  }

  ~Future() noexcept(false) override {
    if (state() == ThreadState::created) return;  // the start failed: nothing runs
    KeepAlive keep = Thread::current().is_external() ? runtime()->keep_alive() : KeepAlive{};  // see resolve()
    if (!claimed_.exchange(true, std::memory_order_acq_rel)) {
      join();
    } else {
      // Another thread's get() is joining it: its thread has settled result_ and is ending,
      // so this is at most the last steps of a join.
      while (!joined_.load(std::memory_order_acquire)) this_thread::yield();
    }
    if (!observed_.load(std::memory_order_relaxed) && result_.has_exception()) {
      detail::report_unobserved(*this, capture_error());
    }
  }
  // Waits for the value; returns it (const reference, valid while the future lives) or
  // rethrows the computation's exception. Any number of calls, from any threads.
  reference get() & {
    resolve();
    return observe().get();
  }
  // On a temporary future (`when_all(rows).get()`), get() returns the value itself: a
  // reference would dangle once the future is gone.
  T get() && { return take(); }
  // As get(), but moves the value out: once, for a single consumer.
  T take() {
    resolve();
    return observe().take();
  }
  // As get() and take(), but throw Cancelled if a stop is requested on `token` first.
  reference get(const StopToken& token) & {
    check_not_self();
    return observe().get(token);
  }
  T take(const StopToken& token) {
    check_not_self();
    return observe().take(token);
  }
  // Waits until the computation has finished (neither returns nor rethrows): without limit,
  // until a stop is requested (Cancelled), or until a deadline (false if it passed first).
  void wait() { resolve(); }
  void wait(const StopToken& token) {
    check_not_self();
    result_.wait(token);
  }
  bool wait_until(Clock::time_point deadline) {
    check_not_self();
    return result_.wait_until(deadline);
  }
  template <class Rep, class Period>
  bool wait_for(const std::chrono::duration<Rep, Period>& timeout) {
    return wait_until(Clock::now() + std::chrono::ceil<Clock::duration>(timeout));
  }
  // The promise the computation settles: for waits on several futures (wait_any).
  Promise<T>& promise() noexcept { return result_; }

  // True once the computation has finished.
  bool ready() const noexcept { return result_.ready(); }

  std::string_view kind() const noexcept override { return "future"; }

 private:
  // The computation: settles result_ (this thread's own promise) with its value or exception.
  template <class F, class... Args>
  auto body(F&& f, Args&&... args) {
    return [result = &result_, f = std::forward<F>(f), ... args = std::forward<Args>(args)]() mutable {
      std::exception_ptr error;
      try {
        if constexpr (std::is_void_v<T>) {
          std::invoke(std::move(f), std::move(args)...);
          result->set_value();
        } else {
          result->set_value(std::invoke(std::move(f), std::move(args)...));
        }
        return;
      } catch (...) {
        error = std::current_exception();
      }
      result->set_exception(std::move(error));  // outside the handler: the promise alone holds it
    };
  }
  void check_not_self() const {
    if (!result_.ready() && &Thread::current() == this) detail::throw_self_get(*this);
  }
  void resolve() {
    if (result_.ready()) return;
    Thread& me = Thread::current();
    if (&me == this) detail::throw_self_get(*this);
    // A plain OS thread that joins the future (running it, if inline) may wake presto threads
    // waiting in get(), a wakeup the runtime cannot foresee: until then it keeps the run from
    // halting (as a KeepAlive holder must).
    KeepAlive keep = me.is_external() ? runtime()->keep_alive() : KeepAlive{};
    if (!claimed_.exchange(true, std::memory_order_acq_rel)) {
      try {
        join();  // may run the computation inline; it has settled result_ when this returns
      } catch (...) {
        joined_.store(true, std::memory_order_release);  // (abandoned thread) nothing to wait for
        throw;
      }
      joined_.store(true, std::memory_order_release);
    } else {
      result_.wait();
    }
  }
  Promise<T>& observe() noexcept {
    observed_.store(true, std::memory_order_relaxed);
    return result_;
  }
  std::exception_ptr capture_error() {
    try {
      result_.get();
    } catch (...) {
      return std::current_exception();
    }
    return nullptr;
  }
  Promise<T> result_;
  std::atomic<bool> claimed_{false};   // a thread has taken the join on itself
  std::atomic<bool> joined_{false};    // the claimer's join() has returned
  std::atomic<bool> observed_{false};  // a get() or take() has read result_
};

template <class F, class... Args>
  requires std::invocable<std::decay_t<F>, std::decay_t<Args>...>
Future(F&&, Args&&...) -> Future<detail::result_t<F, Args...>>;

template <class F, class... Args>
  requires std::invocable<std::decay_t<F>, std::decay_t<Args>...>
Future(Runtime&, F&&, Args&&...) -> Future<detail::result_t<F, Args...>>;

}  // namespace presto::futures
