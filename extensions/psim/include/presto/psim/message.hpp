#pragma once
// Message: what logical processes send each other across links: a small payload chosen by the
// model (kind, value, real) and the stamps PSIM adds when it is sent (time, sender, order).
//
// Every message has a key, (time, depth, source, sequence), and PSIM delivers each LP's
// messages in increasing key order, on any number of processors and in the sequential
// simulator alike. depth counts zero-delay generations (a message sent at the sender's own
// time is one deeper than the event that sent it), so a message's key always exceeds the key
// of the event that caused it and simultaneous events are ordered the same way everywhere.

#include <compare>
#include <cstdint>
#include <limits>

namespace presto::psim {

class Link;

// Simulated time.
using Time = double;
inline constexpr Time kNever = std::numeric_limits<Time>::infinity();

// The total order of events: the same in every run of a model.
struct EventKey {
  Time time = 0;
  std::uint32_t depth = 0;
  std::uint32_t source = 0;
  std::uint64_t sequence = 0;
  auto operator<=>(const EventKey&) const = default;
};

struct Message {
  // The model's payload.
  std::int64_t kind = 0;
  std::int64_t value = 0;
  double real = 0;
  // Set by send()/schedule(): when it is received, the sender's clock when it was sent, who
  // sent it and how; link is nullptr for an event an LP scheduled for itself.
  Time time = 0;
  Time sent_at = 0;
  std::uint32_t source = 0;
  std::uint32_t depth = 0;
  std::uint64_t sequence = 0;
  const Link* link = nullptr;

  EventKey key() const noexcept { return {time, depth, source, sequence}; }
};

// The least key after k: grant(i, just_after(k)) grants the message of key k and nothing later.
constexpr EventKey just_after(EventKey k) noexcept {
  ++k.sequence;
  return k;
}

// Heap order for std::push_heap/pop_heap: the earliest key on top.
struct LaterKey {
  bool operator()(const Message& a, const Message& b) const noexcept {
    // The time alone unless it ties (finite times: the same order as the whole keys').
    if (a.time != b.time) return b.time < a.time;
    return b.key() < a.key();
  }
};

}  // namespace presto::psim
