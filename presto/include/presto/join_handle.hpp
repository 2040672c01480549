#pragma once
// JoinHandle<R>: the move-only handle fork() returns for a thread the runtime owns.
// join() waits for the thread and returns its result or rethrows its exception; a handle can
// be joined once. Dropping a handle that was not joined detaches the thread (as Rust's
// JoinHandle does; std::jthread would join instead): it runs on, and if it ends with an
// exception nobody can receive, the runtime logs it and run() ends with it.
//
// A handle must not outlive the Runtime that made its thread.

#include <cstdint>
#include <exception>
#include <type_traits>
#include <utility>

#include <presto/errors.hpp>
#include <presto/thread.hpp>

namespace presto {

namespace detail {
// Gives up a handle's claim on a forked control block (detach, or a failed join).
void release_handle(Thread& t) noexcept;
// The same after a join returned: t is terminated, its end published, nobody else touches it.
void release_joined(Thread& t) noexcept;
[[noreturn]] void throw_empty_handle(std::uint64_t id, const char* operation);
}  // namespace detail

template <class R>
class [[nodiscard]] JoinHandle {
 public:
  JoinHandle() noexcept = default;
  JoinHandle(JoinHandle&& other) noexcept
      : thread_(std::exchange(other.thread_, nullptr)), id_(other.id_) {}
  JoinHandle& operator=(JoinHandle&& other) noexcept {
    if (this != &other) {
      reset();
      thread_ = std::exchange(other.thread_, nullptr);
      id_ = other.id_;
    }
    return *this;
  }
  ~JoinHandle() { reset(); }

  // Waits for the thread to finish; returns its result or rethrows its exception. UsageError
  // if the handle was already joined or detached, or if a thread joins itself. From an OS
  // thread it waits until the runtime has run the thread to completion: joining before run()
  // on the very thread that will call run() therefore never returns.
  R join() {
    if (thread_ == nullptr) detail::throw_empty_handle(id_, "join");
    Thread& t = *thread_;
    t.await_termination();  // may throw UsageError; the handle stays intact then
    thread_ = nullptr;
    struct Release {
      Thread& t;
      ~Release() { detail::release_joined(t); }
    } release{t};
    if (t.exception_) std::rethrow_exception(std::exchange(t.exception_, nullptr));
    return t.task_.template take_result<R>();
  }

  // Lets the thread run on unjoined. UsageError if the handle is empty.
  void detach() {
    if (thread_ == nullptr) detail::throw_empty_handle(id_, "detach");
    reset();
  }

  bool joinable() const noexcept { return thread_ != nullptr; }
  std::uint64_t id() const noexcept { return id_; }
  // The thread itself (name, state, priority, ...). UsageError if the handle is empty.
  Thread& thread() const {
    if (thread_ == nullptr) detail::throw_empty_handle(id_, "thread");
    return *thread_;
  }

 private:
  friend class Runtime;
  explicit JoinHandle(Thread& t) noexcept : thread_(&t), id_(t.id()) {}

  void reset() noexcept {
    if (thread_ != nullptr) detail::release_handle(*std::exchange(thread_, nullptr));
  }

  Thread* thread_ = nullptr;
  std::uint64_t id_ = 0;
};

}  // namespace presto
