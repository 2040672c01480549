#pragma once
// BasicChannel: the untyped machinery of a CSP channel (Joyce, Brinch Hansen 1987): a
// SynchroObject whose spinlock guards a queue of waiting senders, a queue of waiting receivers,
// an optional buffer and a closed flag. Channel<T> and BufferedChannel<T> (channel.hpp,
// buffered_channel.hpp) give it a type; applications use those, and poll() (poll.hpp).
//
// Matching follows the Joyce kernel: the thread that arrives second finds its partner in the
// channel's queue, moves the value straight from the sender's frame into the receiver's, makes
// the partner ready and keeps running (a hand-off: SynchroObject::wakeup_handoff). A thread
// that finds no partner records itself (a Waiter on its own stack) and sleeps on the channel;
// a polling thread records one Waiter on every channel it polls and sleeps on its own
// PollGate, and the first partner to claim the gate takes exactly one of its cases.
//
// Timed and cancellable operations give up cleanly: a thread that times out or is cancelled
// leaves its record in the queue until it takes it out, and a partner that finds such a record
// passes it by (it cannot recall the thread), so a value is either transferred and the
// operation succeeds, or it is not and the operation reports the time-out or the Cancelled.
//
// Closing (close()) is explicit and final: every waiting receiver wakes with "closed" (an empty
// optional), every waiting sender wakes with "closed" (send throws ChannelClosed; its value
// was not delivered), and later operations see the same. Values already buffered can still be
// received after close. Closing twice is a UsageError.
//
// Every operation works from presto threads and from plain OS threads (which park).
// Destroying a channel while threads wait on it raises UsageError naming it (SynchroObject's
// rule); the waiters stay blocked.

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include <presto/stop_token.hpp>
#include <presto/synchro_object.hpp>
#include <presto/thread.hpp>

namespace presto::channels {

// Thrown by send (and reported to poll's send handlers as `false`) when the channel is closed.
class ChannelClosed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class BasicChannel;

namespace detail {

class PollGate;

// One thread's wish to send or receive on one channel, kept on that thread's stack while it
// waits in the channel's queue. Guarded by the channel's spinlock.
struct Waiter {
  Thread* thread = nullptr;
  PollGate* gate = nullptr;  // nullptr: the thread sleeps on the channel itself
  std::size_t index = 0;     // the poll case this waiter stands for
  void* value = nullptr;     // sender: the T to move from; receiver: the std::optional<T> to fill
  bool closed = false;       // woken by close(), nothing transferred
  bool linked = false;
  bool orphaned = false;     // the channel was destroyed while this poller waited on it
  Waiter* prev = nullptr;
  Waiter* next = nullptr;
};

// An intrusive FIFO of waiters.
struct WaitList {
  Waiter* head = nullptr;
  Waiter* tail = nullptr;
  bool empty() const noexcept { return head == nullptr; }
  void push_back(Waiter& w) noexcept;
  void unlink(Waiter& w) noexcept;
};

// A thread to make ready once the channel's spinlock is released: the partner the caller has
// served, which may take the caller's processor when it next sleeps
// (SynchroObject::wakeup_handoff).
struct Wake {
  Thread* thread = nullptr;
  SynchroObject* on = nullptr;
  void run() const {
    if (thread != nullptr) on->wakeup_handoff(*thread);
  }
};

// One case of a poll, untyped: what poll.hpp hands to the core.
struct PollCase {
  BasicChannel* channel = nullptr;
  bool is_send = false;
  bool enabled = true;
  void* value = nullptr;  // as Waiter::value
  bool closed = false;    // out: the case was taken because the channel is closed
  Waiter waiter{};
};

// Runs a poll over `cases` (see poll.hpp); `order` is scratch of twice their number. Returns
// the index of the one case taken; if `wait` is false and no case can complete now, returns
// cases.size() and takes none.
std::size_t poll(std::span<PollCase> cases, std::span<std::uint32_t> order, bool wait);
// poll's work: on x86-64 System V, poll is an entry into it that returns to its caller
// predicted after a switch (<presto/predicted_return.hpp>).
[[gnu::visibility("hidden")]] std::size_t poll_body(std::span<PollCase> cases, std::span<std::uint32_t> order,
                                                    bool wait);

}  // namespace detail

class BasicChannel : public SynchroObject {
 public:
  ~BasicChannel() noexcept(false) override;

  // Closes the channel and wakes every waiter with "closed". UsageError if already closed.
  void close();
  bool closed() const noexcept;
  // 0 for a rendezvous channel.
  std::size_t capacity() const noexcept { return capacity_; }

  std::string_view kind() const noexcept override { return "channel"; }

 protected:
  BasicChannel(std::size_t capacity, std::string name);

  // Blocking send of the value at `value` (a T, moved from when delivered). Throws
  // ChannelClosed if the channel is or becomes closed first, Cancelled if a stop is requested
  // on `token` first; false if `deadline` (if any) passed first (nothing sent).
  bool send_value(void* value, const Clock::time_point* deadline = nullptr, const StopToken& token = {});
  // Blocking receive into `slot` (an empty std::optional<T>); leaves it empty if the channel
  // is closed and drained. Cancelled and deadlines as send_value (false: nothing received).
  bool recv_value(void* slot, const Clock::time_point* deadline = nullptr, const StopToken& token = {});
  // Non-blocking forms: false if the operation would have to wait.
  bool try_send_value(void* value);
  bool try_recv_value(void* slot);

  // The typed part, called with the spinlock held; they must not block or throw except from
  // T's move constructor (a throwing move is not supported by the channel).
  virtual void move_value(void* from_value, void* to_slot) noexcept = 0;
  virtual std::size_t buffered() const noexcept = 0;
  virtual void buffer_push(void* from_value) noexcept = 0;
  virtual void buffer_pop(void* to_slot) noexcept = 0;

 private:
  friend std::size_t detail::poll_body(std::span<detail::PollCase>, std::span<std::uint32_t>, bool);
  enum class Outcome { done, closed, would_block };

  // send_value's and recv_value's work: on x86-64 System V those two are entries into these
  // that return to their callers predicted after a switch (<presto/predicted_return.hpp>).
  [[gnu::visibility("hidden")]] bool send_value_body(void* value, const Clock::time_point* deadline,
                                                     const StopToken& token);
  [[gnu::visibility("hidden")]] bool recv_value_body(void* slot, const Clock::time_point* deadline,
                                                     const StopToken& token);

  // Spinlock held. Try to complete the operation now; `wake` gets the partner to wake.
  Outcome send_locked(void* value, detail::Wake& wake);
  Outcome recv_locked(void* slot, detail::Wake& wake);
  // Spinlock held. Take the longest waiter of `list` that still wants to be taken, unlinked
  // and recalled; nullptr if none.
  detail::Waiter* claim(detail::WaitList& list, detail::Wake& wake) noexcept;
  [[noreturn]] void throw_closed(std::string_view operation) const;
  // After a blocking wait on the channel: true if a partner (or close) woke us; else withdraws
  // `self` from `list` and returns false (timed out) or throws Cancelled.
  bool settle_wait(WaitStatus status, detail::Waiter& self, detail::WaitList& list, CancellableWait& waiting,
                   const char* operation);

  std::size_t capacity_;
  bool closed_ = false;
  detail::WaitList senders_;
  detail::WaitList receivers_;
};

}  // namespace presto::channels
