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
// - The value travels the core's own way: the thread's body returns it, Thread::join<T>()
//   takes it. The first get() joins the thread and settles a Promise<T> inside the future;
//   every get() (any number, from any presto thread or plain OS thread, concurrently) then
//   reads that promise: it returns a const reference to the value, or rethrows the exception.
//   take() moves the value out instead (single consumer), as get() on a temporary future does.
// - ready(): true once the computation has finished; get() will not block.
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
#include <concepts>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <presto/errors.hpp>
#include <presto/futures/promise.hpp>
#include <presto/runtime.hpp>
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
    start(body(std::forward<F>(f), std::forward<Args>(args)...));
  }
  template <class F, class... Args>
    requires std::invocable<std::decay_t<F>, std::decay_t<Args>...> &&
             (std::is_void_v<T> || std::convertible_to<detail::result_t<F, Args...>, T>)
  Future(Runtime& runtime, F&& f, Args&&... args) : Thread("future"), result_("future") {
    runtime.start(*this, body(std::forward<F>(f), std::forward<Args>(args)...));
  }

  ~Future() noexcept(false) override {
    if (state() == ThreadState::created) return;  // the start failed: nothing runs
    KeepAlive keep = Thread::current().is_external() ? runtime()->keep_alive() : KeepAlive{};  // see resolve()
    if (!claimed_.exchange(true, std::memory_order_acq_rel)) {
      settle();
      if (result_.has_exception()) detail::report_unobserved(*this, capture_error());
    } else {
      result_.wait();  // another thread's get() is settling it
    }
  }

  // Waits for the value; returns it (const reference, valid while the future lives) or
  // rethrows the computation's exception. Any number of calls, from any threads.
  reference get() & {
    resolve();
    return result_.get();
  }
  // On a temporary future (`when_all(rows).get()`), get() returns the value itself: a
  // reference would dangle once the future is gone.
  T get() && { return take(); }
  // As get(), but moves the value out: once, for a single consumer.
  T take() {
    resolve();
    return result_.take();
  }
  // True once the computation has finished.
  bool ready() const noexcept { return result_.ready() || state() == ThreadState::terminated; }

  std::string_view kind() const noexcept override { return "future"; }

 private:
  template <class F, class... Args>
  static auto body(F&& f, Args&&... args) {
    return [f = std::forward<F>(f), ... args = std::forward<Args>(args)]() mutable -> T {
      if constexpr (std::is_void_v<T>) {
        std::invoke(std::move(f), std::move(args)...);
      } else {
        return std::invoke(std::move(f), std::move(args)...);
      }
    };
  }

  void resolve() {
    if (result_.ready()) return;
    Thread& me = Thread::current();
    if (&me == this) detail::throw_self_get(*this);
    // A plain OS thread that settles the future wakes presto threads waiting in get(), a
    // wakeup the runtime cannot foresee: from its claim until they are woken, it keeps the
    // run from halting (as a KeepAlive holder must).
    KeepAlive keep = me.is_external() ? runtime()->keep_alive() : KeepAlive{};
    if (!claimed_.exchange(true, std::memory_order_acq_rel)) settle();
  }
  // Joins the thread (once: only the thread that claimed the future) and settles result_.
  void settle() {
    std::exception_ptr error;
    try {
      if constexpr (std::is_void_v<T>) {
        join();
        result_.set_value();
      } else {
        result_.set_value(join<T>());
      }
      return;
    } catch (...) {
      error = std::current_exception();
    }
    result_.set_exception(std::move(error));  // outside the handler: the promise alone holds it
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
  std::atomic<bool> claimed_{false};
};

template <class F, class... Args>
  requires std::invocable<std::decay_t<F>, std::decay_t<Args>...>
Future(F&&, Args&&...) -> Future<detail::result_t<F, Args...>>;

template <class F, class... Args>
  requires std::invocable<std::decay_t<F>, std::decay_t<Args>...>
Future(Runtime&, F&&, Args&&...) -> Future<detail::result_t<F, Args...>>;

}  // namespace presto::futures
