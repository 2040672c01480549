#pragma once
// JoinHandle<R>: the move-only handle fork() returns for a thread the runtime owns.
// join() waits for the thread and returns its result or rethrows its exception; a handle can
// be joined once. Dropping a handle that was not joined detaches the thread (as Rust's
// JoinHandle does; std::jthread would join instead): it runs on, and if it ends with an
// exception nobody can receive, the runtime logs it and run() ends with it.
//
// A handle must not outlive the Runtime that made its thread. Like std::thread, a handle is
// used by one thread at a time.
//
// Under RuntimeConfig::lazy_forks the handle may hold a record of the fork instead of a thread
// (presto/detail/fork_record.hpp); every operation behaves the same.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <type_traits>
#include <utility>

#include <presto/detail/fork_record.hpp>
#include <presto/errors.hpp>
#include <presto/thread.hpp>

namespace presto {

namespace detail {
struct RecordFork;
// Gives up a handle's claim on a forked control block (detach, or a failed join).
void release_handle(Thread& t) noexcept;
// The same after a join returned: t is terminated, its end published, nobody else touches it.
void release_joined(Thread& t) noexcept;
// `name`: the thread's name as the handle remembered it (empty: a default-constructed or
// moved-from handle).
[[noreturn]] void throw_empty_handle(std::uint64_t id, const char* name, const char* operation);
}  // namespace detail

template <class R>
class [[nodiscard]] JoinHandle {
 public:
  JoinHandle() noexcept = default;
  JoinHandle(JoinHandle&& other) noexcept
      : thread_(std::exchange(other.thread_, nullptr)), record_(std::exchange(other.record_, nullptr)), id_(other.id_) {
    std::memcpy(name_, other.name_, sizeof name_);
  }
  JoinHandle& operator=(JoinHandle&& other) noexcept {
    if (this != &other) {
      reset();
      thread_ = std::exchange(other.thread_, nullptr);
      record_ = std::exchange(other.record_, nullptr);
      id_ = other.id_;
      std::memcpy(name_, other.name_, sizeof name_);
    }
    return *this;
  }
  ~JoinHandle() { reset(); }

  // Waits for the thread to finish; returns its result or rethrows its exception. UsageError
  // if the handle was already joined or detached, or if a thread joins itself. From an OS
  // thread it waits until the runtime has run the thread to completion: joining before run()
  // on the very thread that will call run() therefore never returns.
  R join() {
    if (record_ != nullptr) return join_record();
    if (thread_ == nullptr) detail::throw_empty_handle(id_, name_, "join");
    thread_->await_termination();  // may throw UsageError; the handle stays intact then
    return take_result();
  }
  // As join(), but throws Cancelled if a stop is requested on `token` before the thread has
  // finished (presto/stop_token.hpp); the handle then stays joinable.
  R join(const std::stop_token& token) {
    if (record_ != nullptr) {
      if (detail::ended_on_runner(*record_) || detail::join_record(*record_, token)) return take_record_result();
      thread_ = &detail::take_thread(*std::exchange(record_, nullptr));
    }
    if (thread_ == nullptr) detail::throw_empty_handle(id_, name_, "join");
    thread_->await_termination(token);
    return take_result();
  }

  // Lets the thread run on unjoined. UsageError if the handle is empty.
  void detach() {
    if (record_ != nullptr) {
      detail::release_record(*std::exchange(record_, nullptr));
      return;
    }
    if (thread_ == nullptr) detail::throw_empty_handle(id_, name_, "detach");
    remember_name(*thread_);
    reset();
  }

  bool joinable() const noexcept { return thread_ != nullptr || record_ != nullptr; }
  std::uint64_t id() const noexcept { return id_; }
  // The thread itself (name, state, priority, ...). UsageError if the handle is empty.
  Thread& thread() const {
    if (record_ != nullptr) return detail::record_thread(*record_);
    if (thread_ == nullptr) detail::throw_empty_handle(id_, name_, "thread");
    return *thread_;
  }

 private:
  friend class Runtime;
  friend struct detail::RecordFork;
  explicit JoinHandle(Thread& t) noexcept : thread_(&t), id_(t.id()) {}
  explicit JoinHandle(detail::ForkRecord& r) noexcept : record_(&r), id_(r.id) {}

  void reset() noexcept {
    if (record_ != nullptr) detail::release_record(*std::exchange(record_, nullptr));
    if (thread_ != nullptr) detail::release_handle(*std::exchange(thread_, nullptr));
  }

  // join() of a record: nothing to do if a runner ended it, run here if it is still queued,
  // waited for if a runner holds it, else through its thread.
  R join_record() {
    if (!detail::ended_on_runner(*record_) && !detail::join_record(*record_)) {
      thread_ = &detail::take_thread(*std::exchange(record_, nullptr));
      return join();
    }
    return take_record_result();
  }

  // After the record ended: empties the handle and hands over the result.
  R take_record_result() {
    detail::ForkRecord& r = *std::exchange(record_, nullptr);
    name_[0] = '\0';  // a record has no name (a fork with attributes makes a thread)
    struct Free {
      detail::ForkRecord& r;
      ~Free() { detail::free_record(r); }
    } free{r};
    if (r.exception) std::rethrow_exception(std::exchange(r.exception, nullptr));
    return r.task.template take_result<R>();
  }

  // After the thread terminated: empties the handle and hands over the result.
  R take_result() {
    Thread& t = *thread_;
    remember_name(t);
    thread_ = nullptr;
    struct Release {
      Thread& t;
      ~Release() { detail::release_joined(t); }
    } release{t};
    if (t.exception_) std::rethrow_exception(std::exchange(t.exception_, nullptr));
    return t.task_.template take_result<R>();
  }

  // Keeps (the start of) the thread's name for the error of a later use of the emptied
  // handle, which can no longer ask the thread: joined or detached, it may be reused.
  void remember_name(const Thread& t) noexcept {
    const std::size_t n = std::min(t.name().size(), sizeof name_ - 1);
    if (n != 0) std::memcpy(name_, t.name().data(), n);  // most forked threads have no name: no call
    name_[n] = '\0';
  }

  Thread* thread_ = nullptr;
  detail::ForkRecord* record_ = nullptr;  // a lazy fork not yet made a thread (then thread_ is nullptr)
  std::uint64_t id_ = 0;
  char name_[24] = {};
};

}  // namespace presto
