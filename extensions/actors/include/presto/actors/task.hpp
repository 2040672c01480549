#pragma once
// Task: PRESTO's actor (open-environment paper, §5.2) — an object with its own thread that
// serves messages one at a time:
//
//   forever: receive a message; decode it; execute the operation; reply to the sender
//
// A subclass has no body; it declares ordinary member functions (its operations), and other
// threads invoke them through messages. Synchronization inside the object is implicit in the
// serial processing of messages: no two operations of one task ever run at the same time.
//
//   class Account : public presto::actors::Task {
//    public:
//     explicit Account(long balance) : Task("account"), balance_(balance) {}
//     ~Account() override { stop(); }            // before the members go
//     void deposit(long n) { balance_ += n; }
//     long balance() const { return balance_; }
//    private:
//     long balance_;
//   };
//   Account a{100};
//   a.send(&Account::deposit, 5);               // asynchronous: returns at once
//   long b = a.call(&Account::balance);         // synchronous: waits for the reply (105)
//
// Contract:
// - send(op, args...) queues the operation and returns at once; call(op, args...) waits for
//   it to run and returns its result (decayed: a copy) or rethrows its exception. `op` is a
//   member function of the task's class (UsageError if the task is not of that class).
//   send() copies its arguments (pass std::ref for references) and moves them into the
//   operation; call() passes them through untouched, since the caller waits. A send's message
//   with arguments of up to 24 bytes is made in a 64-byte block the task keeps once it has run
//   (at most 4,096), so a steady stream of sends allocates nothing; a larger one is allocated.
// - Order: messages to one task run in the order they were queued, so the messages of one
//   sender run in the order sent.
// - Hand-off (LRPC's lesson, `research/seed-002-c-papers.md` §2): a call() to an idle task
//   (no operation running, nothing queued) runs the operation on the caller's own thread,
//   which owns the task for its duration — the caller's processor goes straight to the task's
//   work with no message, no wakeup and no context switch, as LRPC runs the server procedure
//   on the client's thread. Messages that arrive meanwhile queue behind it and the task's
//   thread serves them afterwards. Consequence: inside an operation, Thread::current() and
//   presto::ThreadLocal are the caller's, not the task's. TaskOptions::handoff = false makes
//   every call a message served by the task's thread.
// - Exceptions: a call()'s operation that throws rethrows in the caller; the task goes on.
//   A send()'s operation that throws has nobody to tell, so the task FAILS: it stops
//   accepting messages, rejects its queue (below) and its thread ends with that exception,
//   which stop() rethrows.
// - stop(StopMode::drain) (the default) refuses new messages, serves everything already
//   queued, waits for the task's thread to finish and rethrows the task's failure, if any.
//   stop(StopMode::reject) instead fails every queued message: each waiting call() throws
//   TaskStopped, and the number of messages rejected (calls and sends) is returned and, for
//   sends, logged (warn). send()/call() on a stopped task raise TaskStopped, which is a
//   UsageError, naming the task and the thread. stop() again is harmless (returns 0 rejected).
//   An operation may stop its own task (it then only refuses further messages).
// - Lifetime: the task's thread starts at the first message, in the runtime the task was
//   made in. A subclass must call stop() in its own destructor: once Task's destructor runs,
//   the subclass is gone. As a last resort Task's destructor stops a task that is still
//   running, rejecting what is queued and logging the misuse (and any failure) at error
//   level; that path is formally racy (the task's thread may be inside a virtual call on the
//   object while destructors rewrite its vtable pointer) and only limits the damage.
//   A running task that is never stopped keeps its thread asleep on its mailbox, which the
//   runtime reports as presto::Deadlock when everything else has finished.
// - Do not call() your own task from one of its operations (UsageError when detected; a
//   cycle of calls between tasks deadlocks, as it would with any synchronous messages).

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include <presto/errors.hpp>
#include <presto/futures/promise.hpp>
#include <presto/runtime.hpp>
#include <presto/synchro_object.hpp>
#include <presto/thread.hpp>

namespace presto::actors {

// A message was refused or rejected because its task has stopped (or failed).
class TaskStopped : public UsageError {
 public:
  using UsageError::UsageError;
};

enum class StopMode { drain, reject };

struct TaskOptions {
  bool handoff = true;         // call() to an idle task runs on the caller's thread (see above)
  std::size_t stack_size = 0;  // of the task's thread; 0: the runtime's default
};

class Task;

namespace detail {

// One queued message: an operation bound to its arguments. Intrusive: the queue never allocates.
class Message {
 public:
  Message* next = nullptr;
  // Runs the operation for `home`, its task. A call's message records the outcome in its reply
  // (nullptr). A send's message destroys itself and returns the block of home's it was made
  // in, for the caller to give back (nullptr if it was on the heap: freed); if the operation
  // throws, the message is gone all the same (its block given back) and the exception escapes
  // (the task fails).
  virtual void* execute(Task& home) = 0;
  // The operation will never run: a call's reply gets `why`; a send's message is destroyed and
  // its storage given back to `home` or the heap. Returns true for a send (its loss is reported
  // by the task).
  virtual bool reject(Task& home, std::exception_ptr why) noexcept = 0;

 protected:
  ~Message() = default;
};

// The storage of send()'s messages that fit kSize bytes: blocks a task keeps once their
// message has run or been rejected, at most kKept, for its next sends, so that a steady
// stream of sends allocates nothing (glibc's per-thread cache holds 7 blocks of a size: a
// queue of 1,000 sends went to malloc's slower paths for more than half of a send's
// instructions). Beyond kKept a block goes back to the heap. Guarded by the task's mailbox
// spinlock; what it keeps is freed with it.
class BlockCache {
 public:
  static constexpr std::size_t kSize = 64;
  static constexpr std::size_t kKept = 4096;  // 256 KiB a task at most

  BlockCache() = default;
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;
  ~BlockCache();

  // A kept block, or nullptr if none is.
  void* take() noexcept {
    void* b = head_;
    if (b != nullptr) {
      head_ = *static_cast<void**>(b);
      --kept_;
    }
    return b;
  }
  // Keeps `b` (true), or refuses it while kKept are kept (false: the caller frees it).
  bool keep(void* b) noexcept {
    if (kept_ == kKept) return false;
    *static_cast<void**>(b) = head_;
    head_ = b;
    ++kept_;
    return true;
  }

 private:
  void* head_ = nullptr;  // each block's first word links the next
  std::size_t kept_ = 0;
};

// send(): owns its operation; in a block of its task's if it fits one (in_block), else on the
// heap, until it has run or been rejected.
template <class F>
class Posted final : public Message {
 public:
  explicit Posted(F f) : f_(std::move(f)) {}
  void* execute(Task& home) override;  // below Task
  bool reject(Task& home, std::exception_ptr) noexcept override;

 private:
  // Destroys this message: its task's block, or nullptr once freed.
  void* release() noexcept;

  F f_;
};

template <class M>
inline constexpr bool in_block = sizeof(M) <= BlockCache::kSize && alignof(M) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__;

// call(): lives on the waiting caller's stack, with the reply it waits on.
template <class R, class F>
class Awaited final : public Message {
 public:
  Awaited(futures::Promise<R>& reply, F& f) : reply_(reply), f_(f) {}
  void* execute(Task&) override {
    std::exception_ptr error;
    try {
      if constexpr (std::is_void_v<R>) {
        f_();
        reply_.set_value();
      } else {
        reply_.set_value(f_());
      }
      return nullptr;
    } catch (...) {
      error = std::current_exception();
    }
    // Settled outside the handler, so that this thread holds no reference to the exception
    // once the caller has it: the caller alone then frees it.
    reply_.set_exception(std::move(error));
    return nullptr;
  }
  bool reject(Task&, std::exception_ptr why) noexcept override {
    reply_.set_exception(std::move(why));
    return false;
  }

 private:
  futures::Promise<R>& reply_;
  F& f_;
};

template <class C, class M>
C* class_of(M C::*);  // the class of a pointer to member (declaration only: for decltype)

template <class Op>
using class_of_t = std::remove_pointer_t<decltype(class_of(std::declval<Op>()))>;

}  // namespace detail

class Task : public Thread {
 public:
  // A task of the calling presto thread's runtime (UsageError on an OS thread).
  explicit Task(std::string name, TaskOptions options = {});
  // A task of `runtime`; may be made on any thread.
  Task(Runtime& runtime, std::string name, TaskOptions options = {});
  ~Task() noexcept(false) override;

  template <class Op, class... Args>
    requires std::is_member_function_pointer_v<Op> &&
             std::invocable<Op, detail::class_of_t<Op>&, std::decay_t<Args>&&...>
  void send(Op op, Args&&... args) {
    using C = detail::class_of_t<Op>;
    C& self = self_as<C>();
    auto f = [&self, op, ... args = std::forward<Args>(args)]() mutable { std::invoke(op, self, std::move(args)...); };
    using Posted = detail::Posted<decltype(f)>;
    if constexpr (detail::in_block<Posted>) {
      void* block = take_block();
      Posted* m;
      try {
        m = new (block) Posted(std::move(f));
      } catch (...) {
        give_back_block(block);
        throw;
      }
      try {
        enqueue(*m);
      } catch (...) {  // TaskStopped
        m->reject(*this, nullptr);
        throw;
      }
    } else {
      auto m = std::make_unique<Posted>(std::move(f));
      enqueue(*m);  // TaskStopped if stopped: m is freed
      m.release();  // the task owns it now
    }
  }

  template <class Op, class... Args>
    requires std::is_member_function_pointer_v<Op> && std::invocable<Op, detail::class_of_t<Op>&, Args&&...>
  auto call(Op op, Args&&... args) -> std::decay_t<std::invoke_result_t<Op, detail::class_of_t<Op>&, Args&&...>> {
    using C = detail::class_of_t<Op>;
    using R = std::decay_t<std::invoke_result_t<Op, C&, Args&&...>>;
    C& self = self_as<C>();
    if (handoff_ && try_enter()) {
      struct Leave {
        Task& task;
        ~Leave() { task.leave(); }
      } leave{*this};
      return std::invoke(op, self, std::forward<Args>(args)...);
    }
    check_not_self("call");
    auto f = [&]() -> R { return std::invoke(op, self, std::forward<Args>(args)...); };
    futures::Promise<R> reply{"reply"};
    detail::Awaited<R, decltype(f)> m{reply, f};
    enqueue(m);
    return reply.take();
  }

  // Refuses further messages, drains or rejects the queue, waits for the task's thread and
  // rethrows the task's failure. Returns the number of messages rejected.
  std::size_t stop(StopMode mode = StopMode::drain);

  // True once the task refuses messages (stopped, or failed).
  bool stopped() const noexcept;
  // Messages queued and not yet taken by the task's thread.
  std::size_t queued() const noexcept;

  std::string_view kind() const noexcept override { return "task"; }
  // "task 'name' (id N)" (id 0 until its first message starts its thread).
  std::string describe() const override;

 private:
  template <class C>
  C& self_as() {
    static_assert(std::is_base_of_v<Task, C>, "an operation must be a member function of a Task subclass");
    if (typeid(*this) == typeid(C)) return static_cast<C&>(*this);
    if (C* c = dynamic_cast<C*>(this)) return *c;
    throw_wrong_class(typeid(C));
  }
  [[noreturn]] void throw_wrong_class(const std::type_info& wanted) const;
  void check_not_self(const char* operation) const;

  template <class F>
  friend class detail::Posted;
  // A block for a send()'s message, kept or new; and its return once the message is gone.
  void* take_block();
  void give_back_block(void* block) noexcept;

  void enqueue(detail::Message& m);
  bool try_enter();  // claims an idle task for a hand-off call
  void leave() noexcept;
  void serve();  // the task's thread
  void fail(std::exception_ptr error);
  void reject_queue();  // spinlock not held
  std::string refusal(const char* operation) const;  // spinlock held

  Runtime* home_;
  const bool handoff_;
  // The task's thread sleeps here while it has nothing to serve; everything below is guarded
  // by the mailbox's spinlock.
  mutable SynchroObject mailbox_;
  detail::BlockCache blocks_;
  detail::Message* head_ = nullptr;
  detail::Message* tail_ = nullptr;
  std::size_t queued_ = 0;
  bool started_ = false;  // the thread was started (at the first message)
  bool busy_ = false;     // an operation runs: on the task's thread, or a hand-off caller's
  Thread* owner_ = nullptr;  // the hand-off caller running an operation, if any
  bool closed_ = false;   // refuses messages
  bool joined_ = false;   // stop() has joined (or is joining) the thread
  StopMode mode_ = StopMode::drain;
  std::string closed_by_;      // "stopped by thread 'x' (id 3)" / "failed: what"
  std::exception_ptr failure_;  // a send()'s operation threw
  std::size_t rejected_ = 0;   // by the task's thread, under StopMode::reject or a failure
};

template <class F>
void* detail::Posted<F>::release() noexcept {
  if constexpr (in_block<Posted>) {
    this->~Posted();
    return this;
  } else {
    delete this;
    return nullptr;
  }
}

template <class F>
void* detail::Posted<F>::execute(Task& home) {
  try {
    f_();
  } catch (...) {
    if (void* block = release()) home.give_back_block(block);
    throw;
  }
  return release();
}

template <class F>
bool detail::Posted<F>::reject(Task& home, std::exception_ptr) noexcept {
  if (void* block = release()) home.give_back_block(block);
  return true;
}

}  // namespace presto::actors
