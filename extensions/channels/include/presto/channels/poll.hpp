#pragma once
// poll(): Joyce's polling statement (CSP's guarded alternative, Go's select). It waits until
// at least one of its cases can complete, takes exactly one, and runs that case's handler:
//
//   bool more = true;
//   while (more) {
//     poll(on_recv(data, [&](std::optional<int> v) { if (v) use(*v); else more = false; }),
//          on_send(out, 42, [&](bool delivered) { ... }).when(ready_to_send));
//   }
//
// - on_recv(c, f): receive from c; f(std::optional<T>) gets the value, or an empty optional
//   if c is closed (the case is then ready at once, as a closed channel never blocks).
// - on_send(c, v, f): send v on c; f(bool) gets true when a receiver took v, false if c is
//   closed (v not delivered).
// - .when(guard): the case takes part only if guard is true (Joyce's Boolean guard). A poll
//   whose every guard is false would wait forever: UsageError.
//
// Exactly one case is taken; the values of the other send cases stay with the caller and no
// other receive case consumes anything. When several cases are ready, each is equally likely
// to be taken (the cases are examined in a fresh random order), so no channel starves.
// Returns the index of the case taken. Cases may name the same channel more than once.
// Works from presto threads and plain OS threads.
//
// try_poll(cases...) is the same choice without waiting (Go's select with a default case):
// it takes one ready case and returns its index, or returns std::nullopt and runs no handler
// if none can complete now (or every guard is false). Joyce's 1988 kernel polled this way,
// re-entering the poller in its ready queue until a case was ready:
//   while (!try_poll(cases...)) presto::this_thread::yield();
// which never blocks, so it spins (and is never reported as deadlocked) if no partner comes.

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

#include <presto/channels/basic_channel.hpp>
#include <presto/channels/channel.hpp>

namespace presto::channels {

template <class T, class F>
class RecvCase {
 public:
  RecvCase(Channel<T>& channel, F handler) : channel_(&channel), handler_(std::move(handler)) {}
  RecvCase&& when(bool guard) && {
    enabled_ = guard;
    return std::move(*this);
  }

  // For poll().
  detail::PollCase erase() { return {.channel = channel_, .is_send = false, .enabled = enabled_, .value = &slot_}; }
  void fire(bool /*closed: the slot is empty*/) { handler_(std::move(slot_)); }

 private:
  Channel<T>* channel_;
  F handler_;
  bool enabled_ = true;
  std::optional<T> slot_;
};

template <class T, class F>
class SendCase {
 public:
  SendCase(Channel<T>& channel, T value, F handler)
      : channel_(&channel), value_(std::move(value)), handler_(std::move(handler)) {}
  SendCase&& when(bool guard) && {
    enabled_ = guard;
    return std::move(*this);
  }

  // For poll().
  detail::PollCase erase() { return {.channel = channel_, .is_send = true, .enabled = enabled_, .value = &value_}; }
  void fire(bool closed) { handler_(!closed); }

 private:
  Channel<T>* channel_;
  T value_;
  F handler_;
  bool enabled_ = true;
};

template <class T, class F>
  requires std::invocable<std::decay_t<F>&, std::optional<T>>
RecvCase<T, std::decay_t<F>> on_recv(Channel<T>& channel, F&& handler) {
  return {channel, std::forward<F>(handler)};
}

template <class T, class U, class F>
  requires std::convertible_to<U, T> && std::invocable<std::decay_t<F>&, bool>
SendCase<T, std::decay_t<F>> on_send(Channel<T>& channel, U&& value, F&& handler) {
  return {channel, T(std::forward<U>(value)), std::forward<F>(handler)};
}

namespace detail {
template <class... Cases>
std::size_t run_poll(bool wait, Cases&... cases) {
  constexpr std::size_t n = sizeof...(Cases);
  std::array<PollCase, n> erased{cases.erase()...};
  std::array<std::uint32_t, 2 * n> order;
  const std::size_t taken = poll(erased, order, wait);
  std::size_t index = 0;
  ((index++ == taken ? cases.fire(erased[taken].closed) : void()), ...);
  return taken;
}
}  // namespace detail

template <class... Cases>
  requires(sizeof...(Cases) > 0)
std::size_t poll(Cases&&... cases) {
  return detail::run_poll(true, cases...);
}

template <class... Cases>
  requires(sizeof...(Cases) > 0)
std::optional<std::size_t> try_poll(Cases&&... cases) {
  const std::size_t taken = detail::run_poll(false, cases...);
  if (taken == sizeof...(Cases)) return std::nullopt;
  return taken;
}

}  // namespace presto::channels
