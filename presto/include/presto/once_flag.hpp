#pragma once
// OnceFlag and call_once: run an initialisation exactly once, however many threads ask for it
// (std::call_once, for presto threads: the threads that arrive while it runs sleep on the
// flag, relinquishing their processors, instead of blocking the OS thread under them).
//
//   presto::OnceFlag loaded{"config"};
//   presto::call_once(loaded, [&] { config = read_config(); });   // from any number of threads
//
// - The first caller runs f(args...); callers that arrive meanwhile wait; when it returns,
//   every call_once on the flag, then and later, returns without calling anything.
// - If f throws, the exception goes to its caller, the flag stays unset, and the next waiter
//   (or the next caller) runs its own f: std::call_once's rule.
// - f must not call call_once on the same flag (it would wait for itself): UsageError naming
//   the flag and the thread.
// - Cost once done: one acquire load.

#include <atomic>
#include <concepts>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include <presto/synchro_object.hpp>

namespace presto {

class Thread;

class OnceFlag : public SynchroObject {
 public:
  explicit OnceFlag(std::string name = {}) : SynchroObject(std::move(name)) {}
  ~OnceFlag() noexcept(false) override { check_no_waiters(); }
  // True once an initialisation has returned.
  bool done() const noexcept { return state_.load(std::memory_order_acquire) == kDone; }
  std::string_view kind() const noexcept override { return "once flag"; }

  // For call_once: true if the caller must run the initialisation (then end() or fail() it);
  // false once it is done. Waits while another thread runs it.
  bool begin();
  void end() noexcept { finish(kDone); }
  void fail() noexcept { finish(kIdle); }

 private:
  static constexpr int kIdle = 0, kRunning = 1, kDone = 2;
  void finish(int state) noexcept;
  std::atomic<int> state_{kIdle};
  Thread* runner_ = nullptr;  // guarded by the spinlock
};

template <class F, class... Args>
  requires std::invocable<F, Args...>
void call_once(OnceFlag& flag, F&& f, Args&&... args) {
  if (flag.done() || !flag.begin()) return;
  try {
    std::invoke(std::forward<F>(f), std::forward<Args>(args)...);
  } catch (...) {
    flag.fail();
    throw;
  }
  flag.end();
}

}  // namespace presto
