#include <presto/channels/basic_channel.hpp>

#include <cstdio>
#include <exception>

#include <presto/errors.hpp>
#include <presto/predicted_return.hpp>

#include "poll_gate.hpp"

namespace presto::channels {

namespace detail {

void WaitList::push_back(Waiter& w) noexcept {
  w.prev = tail;
  w.next = nullptr;
  (tail != nullptr ? tail->next : head) = &w;
  tail = &w;
  w.linked = true;
}

void WaitList::unlink(Waiter& w) noexcept {
  (w.prev != nullptr ? w.prev->next : head) = w.next;
  (w.next != nullptr ? w.next->prev : tail) = w.prev;
  w.prev = w.next = nullptr;
  w.linked = false;
}

}  // namespace detail

using detail::Waiter;
using detail::Wake;

BasicChannel::BasicChannel(std::size_t capacity, std::string name)
    : SynchroObject(std::move(name)), capacity_(capacity) {}

BasicChannel::~BasicChannel() noexcept(false) {
  // Threads sleeping on the channel itself are SynchroObject's to report; pollers sleep on
  // their gates and are reported here. Either way they stay blocked.
  spin_lock();
  std::string pollers;
  for (detail::WaitList* list : {&senders_, &receivers_}) {
    while (Waiter* w = list->head) {
      list->unlink(*w);
      if (w->gate != nullptr) {
        pollers += " " + w->thread->describe();
        w->orphaned = true;  // its gate no longer names this channel (deadlock reports)
      }
    }
  }
  spin_unlock();
  if (pollers.empty()) {
    check_no_waiters();
    return;
  }
  std::string message = describe() + " destroyed by " + Thread::current().describe() + " while";
  try {
    check_no_waiters();
  } catch (const UsageError& e) {
    message = e.what();  // names the threads that sleep on the channel itself
    message += "; and";
  }
  message += " threads poll it:" + pollers;
  if (std::uncaught_exceptions() > 0) {
    std::fputs(("presto: " + message + "\n").c_str(), stderr);
    return;
  }
  throw UsageError(message);
}

bool BasicChannel::closed() const noexcept {
  auto& self = const_cast<BasicChannel&>(*this);
  self.spin_lock();
  const bool c = closed_;
  self.spin_unlock();
  return c;
}

Waiter* BasicChannel::claim(detail::WaitList& list, Wake& wake) noexcept {
  while (Waiter* w = list.head) {
    list.unlink(*w);
    if (w->gate == nullptr) {  // asleep on this channel, reached only through this queue
      // Not queued any more: it timed out or was cancelled and is withdrawing; pass it by.
      if (!recall(*w->thread)) continue;
      wake = {w->thread, this};
      return w;
    }
    detail::PollGate& gate = *w->gate;
    gate.spin_lock();  // held by the poller until it is switched out
    if (gate.fired) {  // another channel took this poll: pass its stale waiter by
      gate.spin_unlock();
      continue;
    }
    gate.fired = true;
    gate.chosen = w->index;
    gate.recall(*w->thread);
    gate.spin_unlock();
    wake = {w->thread, &gate};
    return w;
  }
  return nullptr;
}

BasicChannel::Outcome BasicChannel::send_locked(void* value, Wake& wake) {
  if (closed_) return Outcome::closed;
  if (Waiter* receiver = claim(receivers_, wake)) {  // then the buffer is empty: hand over
    move_value(value, receiver->value);
    return Outcome::done;
  }
  if (buffered() < capacity_) {
    buffer_push(value);
    return Outcome::done;
  }
  return Outcome::would_block;
}

BasicChannel::Outcome BasicChannel::recv_locked(void* slot, Wake& wake) {
  if (buffered() > 0) {
    buffer_pop(slot);
    if (Waiter* sender = claim(senders_, wake)) buffer_push(sender->value);  // refill, FIFO kept
    return Outcome::done;
  }
  if (Waiter* sender = claim(senders_, wake)) {
    move_value(sender->value, slot);
    return Outcome::done;
  }
  return closed_ ? Outcome::closed : Outcome::would_block;
}

// send_value and recv_value: predicted-return entries where there are such, so that a
// producer's loop and a consumer's, each blocking in its own place, are returned to predicted
// after the switch between them. The names are libstdc++'s manglings (of std::chrono and
// std::stop_token): with another standard library, plain functions.
#if PRESTO_PREDICTED_RETURN && defined(__GLIBCXX__)
#define PRESTO_CHANNELS_VALUE_ARGS                                                               \
  "EPvPKNSt6chrono10time_pointINS3_3_V212steady_clockENS3_8durationIlSt5ratioILl1ELl1000000000EEEEEERKSt10" \
  "stop_token"
PRESTO_PREDICTED_RETURN_ENTRY("_ZN6presto8channels12BasicChannel10send_value" PRESTO_CHANNELS_VALUE_ARGS,
                              "_ZN6presto8channels12BasicChannel15send_value_body" PRESTO_CHANNELS_VALUE_ARGS);
PRESTO_PREDICTED_RETURN_ENTRY("_ZN6presto8channels12BasicChannel10recv_value" PRESTO_CHANNELS_VALUE_ARGS,
                              "_ZN6presto8channels12BasicChannel15recv_value_body" PRESTO_CHANNELS_VALUE_ARGS);
#undef PRESTO_CHANNELS_VALUE_ARGS
#else
bool BasicChannel::send_value(void* value, const Clock::time_point* deadline, const StopToken& token) {
  return send_value_body(value, deadline, token);
}
bool BasicChannel::recv_value(void* slot, const Clock::time_point* deadline, const StopToken& token) {
  return recv_value_body(slot, deadline, token);
}
#endif

// Used: the entries call these from assembly, which link-time optimization does not see.
[[gnu::used]] bool BasicChannel::send_value_body(void* value, const Clock::time_point* deadline,
                                                 const StopToken& token) {
  CancellableWait waiting{*this, token};
  spin_lock();
  Wake wake;
  const Outcome outcome = send_locked(value, wake);
  if (outcome == Outcome::would_block) {
    Waiter self{.thread = &Thread::current(), .value = value};
    senders_.push_back(self);
    // A receiver takes the value, or close() marks us closed, or we give up.
    if (!settle_wait(waiting.block(deadline), self, senders_, waiting, "send")) return false;
    if (self.closed) throw_closed("sent on");
    return true;
  }
  spin_unlock();
  wake.run();
  if (outcome == Outcome::closed) throw_closed("sent on");
  return true;
}

[[gnu::used]] bool BasicChannel::recv_value_body(void* slot, const Clock::time_point* deadline,
                                                 const StopToken& token) {
  CancellableWait waiting{*this, token};
  spin_lock();
  Wake wake;
  if (recv_locked(slot, wake) == Outcome::would_block) {
    Waiter self{.thread = &Thread::current(), .value = slot};
    receivers_.push_back(self);
    // A sender fills the slot, or close() leaves it empty, or we give up.
    return settle_wait(waiting.block(deadline), self, receivers_, waiting, "recv");
  }
  spin_unlock();
  wake.run();
  return true;
}

bool BasicChannel::settle_wait(WaitStatus status, Waiter& self, detail::WaitList& list, CancellableWait& waiting,
                               const char* operation) {
  if (status == WaitStatus::woken) return true;
  // Given up: nobody took our record (a partner passes by a thread it cannot recall), so
  // nothing was transferred; take it off the queue if no partner did.
  spin_lock();
  if (self.linked) list.unlink(self);
  spin_unlock();
  if (status == WaitStatus::cancelled) waiting.throw_cancelled(operation);
  return false;
}

bool BasicChannel::try_send_value(void* value) {
  spin_lock();
  Wake wake;
  const Outcome outcome = send_locked(value, wake);
  spin_unlock();
  wake.run();
  if (outcome == Outcome::closed) throw_closed("sent on");
  return outcome == Outcome::done;
}

bool BasicChannel::try_recv_value(void* slot) {
  spin_lock();
  Wake wake;
  const Outcome outcome = recv_locked(slot, wake);
  spin_unlock();
  wake.run();
  return outcome != Outcome::would_block;
}

void BasicChannel::close() {
  spin_lock();
  if (closed_) {
    spin_unlock();
    throw UsageError(Thread::current().describe() + " closed " + describe() + ", which is already closed");
  }
  closed_ = true;
  // Claimed waiters are relinked on a local list (their records live until they are woken),
  // so nothing is allocated while the spinlock is held.
  detail::WaitList woken;
  Wake wake;
  for (detail::WaitList* list : {&receivers_, &senders_}) {
    while (Waiter* w = claim(*list, wake)) {
      w->closed = true;
      woken.push_back(*w);
    }
  }
  spin_unlock();
  while (Waiter* w = woken.head) {
    woken.unlink(*w);
    SynchroObject& on = w->gate != nullptr ? static_cast<SynchroObject&>(*w->gate) : *this;
    w->thread->wakeup(on);  // the last touch of w: it may be gone once the thread runs
  }
}

void BasicChannel::throw_closed(std::string_view operation) const {
  throw ChannelClosed(Thread::current().describe() + " " + std::string(operation) + " " + describe() +
                      ", which is closed; the value was not delivered");
}

}  // namespace presto::channels
