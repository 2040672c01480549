#pragma once
// Cancellation: StopSource, StopToken and CancellableWait.
//
// A StopToken is std::stop_token itself, so a std::jthread's token works too. A StopSource
// makes tokens and requests the stop:
//
//   presto::StopSource stop;
//   auto worker = presto::fork([&, token = stop.get_token()] {
//     try {
//       for (;;) items.acquire(token);        // waits, unless a stop is requested
//     } catch (const presto::Cancelled& e) {  // "acquire on semaphore 'items' by thread ..."
//     }
//   });
//   stop.request_stop();                      // wakes the worker wherever it waits
//
// Every blocking operation of the core and the extensions has an overload taking a StopToken
// (Lock::lock, Condition::wait, Semaphore::acquire, Barrier::arrive_and_wait, Thread::join,
// this_thread::sleep_for, Future::get, channel send/recv, presto::io's operations through their
// Deadline, PSIM's LogicalProcess::receive, ...). Given a token whose stop was
// requested, before or during the wait, it throws presto::Cancelled (errors.hpp) in the waiting
// thread; the thread then no longer waits and holds nothing it did not hold before the call.
// A wake-up that races with the stop is never lost: if the operation's partner (a release, a
// signal, a sender) reached the thread first, the operation completes normally and the stop is
// seen by the next one. Operations without a token are unchanged and pay nothing for this.
//
// Request stops through presto::StopSource rather than std::stop_source when the requesting
// code runs on a presto thread with preemption on (RuntimeConfig::quantum): it runs the wake-ups
// in a NonPreemptable region, which std::stop_source::request_stop cannot do. From plain OS
// threads (a std::jthread's own stop, a signal-handling thread) either works.
//
// CancellableWait is the public interface for implementers of blocking operations (a new
// SynchroObject, an I/O wait): it makes the thread's waits on one SynchroObject honour a token.
//
//   void MyObject::acquire(const StopToken& token) {
//     CancellableWait wait{*this, token};      // spinlock NOT held: it may run the stop now
//     spin_lock();
//     while (!available()) {
//       if (wait.block() == WaitStatus::cancelled) wait.throw_cancelled("acquire");
//       spin_lock();                           // woken: check again
//     }
//     take(); spin_unlock();
//   }
//
// Contract: construct it on the waiting thread's stack before taking the object's spinlock,
// and use it only on that thread, for waits on that object, while it lives. A stop requested
// while it lives wakes the thread if it sleeps on the object (the waking side takes the
// object's spinlock, then recall()s the thread: the usual waker's protocol, so a waker that
// recall()ed it first wins and the wait reports `woken`). The destructor unregisters from the
// token and, if a stop is being requested on another OS thread at that moment, waits until
// that request has finished with this object (a few instructions: the request runs
// non-preemptably). With a token that can never be stopped (a default StopToken), it costs
// one branch.

#include <atomic>
#include <optional>
#include <stop_token>
#include <string_view>

#include <presto/errors.hpp>
#include <presto/synchro_object.hpp>

namespace presto {

using StopToken = std::stop_token;

// std::stop_source, with request_stop run non-preemptably (see above).
class StopSource {
 public:
  StopSource() = default;
  explicit StopSource(std::nostopstate_t) noexcept : source_(std::nostopstate) {}

  StopToken get_token() const noexcept { return source_.get_token(); }
  // Requests the stop and wakes every thread waiting with one of its tokens; false if a stop
  // was already requested. Callable from any presto thread or OS thread.
  bool request_stop() noexcept;
  bool stop_requested() const noexcept { return source_.stop_requested(); }
  bool stop_possible() const noexcept { return source_.stop_possible(); }
  // The std::stop_source inside, e.g. to hand to code that takes one.
  const std::stop_source& std_source() const noexcept { return source_; }

 private:
  std::stop_source source_;
};

// How a wait ended.
enum class WaitStatus {
  woken,      // a waker recall()ed the thread (the operation may proceed)
  timed_out,  // the deadline passed first; the thread no longer waits
  cancelled,  // a stop was requested first; the thread no longer waits
};

class CancellableWait {
 public:
  // Spinlock of `object` NOT held (see the contract above). The calling thread is the waiter.
  CancellableWait(SynchroObject& object, const StopToken& token);
  CancellableWait(const CancellableWait&) = delete;
  CancellableWait& operator=(const CancellableWait&) = delete;
  ~CancellableWait() = default;  // the stop_callback's destructor unregisters (and waits)

  // True once a stop was requested. Read it with the object's spinlock held to decide not to
  // wait at all (block() does so itself).
  bool stop_requested() const noexcept { return requested_.load(std::memory_order_relaxed); }

  // Spinlock held on entry, NOT held on return (as SynchroObject::block). Sleeps on the object
  // until woken, until `deadline` (if given) or until a stop is requested; returns which. A
  // stop requested before the call returns `cancelled` without sleeping.
  WaitStatus block(const Clock::time_point* deadline = nullptr);
  WaitStatus block_until(Clock::time_point deadline) { return block(&deadline); }

  // Throws Cancelled naming the object and the calling thread. Spinlock NOT held.
  [[noreturn]] void throw_cancelled(std::string_view operation) const;

 private:
  struct OnStop {
    CancellableWait* wait;
    void operator()() const noexcept { wait->on_stop(); }
  };
  void on_stop() noexcept;

  SynchroObject& object_;
  Thread& thread_;
  std::atomic<bool> requested_{false};
  bool cancelled_ = false;  // the stop recall()ed the thread; guarded by the object's spinlock
  std::optional<std::stop_callback<OnStop>> callback_;  // last: registered once all is set
};

}  // namespace presto
