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

#include <cstdint>
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
// A copy of t's name (not empty: the caller checks), aligned to 8, for an emptied handle to
// keep until drop_name, or nullptr (no memory); it does not depend on t's runtime
// (src/kept_names.hpp).
const char* keep_name(const Thread& t) noexcept;
void drop_name(const char* kept) noexcept;
// `name`: the thread's name as the handle remembered it (empty: a default-constructed or
// moved-from handle).
[[noreturn]] void throw_empty_handle(std::uint64_t id, const char* name, const char* operation);
}  // namespace detail

template <class R>
class [[nodiscard]] JoinHandle {
 public:
  JoinHandle() noexcept = default;
  JoinHandle(JoinHandle&& other) noexcept : held_(std::exchange(other.held_, 0)), id_(other.id_) {}
  JoinHandle& operator=(JoinHandle&& other) noexcept {
    if (this != &other) {
      reset();
      held_ = std::exchange(other.held_, 0);
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
    if (detail::ForkRecord* r = record()) return join_record(*r);
    Thread* t = thread_held();
    if (t == nullptr) detail::throw_empty_handle(id_, name(), "join");
    t->await_termination();  // may throw UsageError; the handle stays intact then
    return take_result(*t);
  }
  // As join(), but throws Cancelled if a stop is requested on `token` before the thread has
  // finished (presto/stop_token.hpp); the handle then stays joinable.
  R join(const std::stop_token& token) {
    if (detail::ForkRecord* r = record()) {
      if (detail::ended_on_runner(*r) || detail::join_record(*r, token)) return take_record_result(*r);
      held_ = 0;  // the record is not the handle's any more, even if take_thread throws
      held_ = reinterpret_cast<std::uintptr_t>(&detail::take_thread(*r));
    }
    Thread* t = thread_held();
    if (t == nullptr) detail::throw_empty_handle(id_, name(), "join");
    t->await_termination(token);
    return take_result(*t);
  }

  // Lets the thread run on unjoined. UsageError if the handle is empty.
  void detach() {
    if (detail::ForkRecord* r = record()) {
      held_ = 0;
      detail::release_record(*r);
      return;
    }
    Thread* t = thread_held();
    if (t == nullptr) detail::throw_empty_handle(id_, name(), "detach");
    remember_name(*t);
    detail::release_handle(*t);
  }

  bool joinable() const noexcept { return held_ != 0 && (held_ & kTags) != kNameTag; }
  std::uint64_t id() const noexcept { return id_; }
  // The thread itself (name, state, priority, ...). UsageError if the handle is empty.
  Thread& thread() const {
    if (detail::ForkRecord* r = record()) return detail::record_thread(*r);
    Thread* t = thread_held();
    if (t == nullptr) detail::throw_empty_handle(id_, name(), "thread");
    return *t;
  }

 private:
  friend class Runtime;
  friend struct detail::RecordFork;
  explicit JoinHandle(Thread& t) noexcept : held_(reinterpret_cast<std::uintptr_t>(&t)), id_(t.id()) {}
  explicit JoinHandle(detail::ForkRecord& r) noexcept
      : held_(reinterpret_cast<std::uintptr_t>(&r) | kRecordTag), id_(r.id) {}

  // What the handle holds, in the low bits of held_ (the addresses are aligned to 8 at least).
  static constexpr std::uintptr_t kRecordTag = 1;  // a ForkRecord (a lazy fork not yet made a thread)
  static constexpr std::uintptr_t kNameTag = 2;    // emptied: its thread's name (keep_name)
  static constexpr std::uintptr_t kTags = 3;       // none of them, and not 0: a Thread

  detail::ForkRecord* record() const noexcept {
    return (held_ & kTags) == kRecordTag ? reinterpret_cast<detail::ForkRecord*>(held_ & ~kTags) : nullptr;
  }
  Thread* thread_held() const noexcept {
    return (held_ & kTags) == 0 ? reinterpret_cast<Thread*>(held_) : nullptr;  // nullptr if empty
  }
  // The name of the thread an emptied handle held ("" if none was kept), for its errors.
  const char* name() const noexcept {
    return (held_ & kTags) == kNameTag ? reinterpret_cast<const char*>(held_ & ~kTags) : "";
  }

  void reset() noexcept {
    const std::uintptr_t held = std::exchange(held_, 0);  // empty before the call, as after it
    if (held == 0) return;
    switch (held & kTags) {
      case kRecordTag:
        detail::release_record(*reinterpret_cast<detail::ForkRecord*>(held & ~kTags));
        break;
      case kNameTag:
        detail::drop_name(reinterpret_cast<const char*>(held & ~kTags));
        break;
      default:
        detail::release_handle(*reinterpret_cast<Thread*>(held));
    }
  }

  // join() of a record: nothing to do if a runner ended it, run here if it is still queued,
  // waited for if a runner holds it, else through its thread.
  R join_record(detail::ForkRecord& r) {
    if (!detail::ended_on_runner(r) && !detail::join_record(r)) {
      held_ = 0;  // the record is not the handle's any more, even if take_thread throws
      held_ = reinterpret_cast<std::uintptr_t>(&detail::take_thread(r));
      return join();
    }
    return take_record_result(r);
  }

  // After the record ended: empties the handle and hands over the result.
  R take_record_result(detail::ForkRecord& r) {
    held_ = 0;  // a record has no name (a fork with attributes makes a thread)
    struct Free {
      detail::ForkRecord& r;
      ~Free() { detail::free_record(r); }
    } free{r};
    if (r.task.has_exception()) std::rethrow_exception(r.task.take_exception());
    return r.task.template take_result<R>();
  }

  // After the thread terminated: empties the handle and hands over the result.
  R take_result(Thread& t) {
    remember_name(t);
    struct Release {
      Thread& t;
      ~Release() { detail::release_joined(t); }
    } release{t};
    if (t.exception_) std::rethrow_exception(std::exchange(t.exception_, nullptr));
    return t.task_.template take_result<R>();
  }

  // Empties the handle of `t`, keeping t's name for the error of a later use of the handle,
  // which can no longer ask the thread: joined or detached, it may be reused. Most forked
  // threads have no name: nothing is kept for them (without one the error gives the id).
  void remember_name(const Thread& t) noexcept {
    held_ = 0;
    if (t.name().empty()) return;
    if (const char* kept = detail::keep_name(t)) held_ = reinterpret_cast<std::uintptr_t>(kept) | kNameTag;
  }

  std::uintptr_t held_ = 0;
  std::uint64_t id_ = 0;
};

}  // namespace presto
