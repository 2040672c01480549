#pragma once
// Channel<T>: a Joyce/CSP synchronous channel. send(v) waits until a receiver takes v; recv()
// waits until a sender offers a value; the two threads meet (a rendezvous) and the value moves
// straight from one to the other. Any number of threads may send and receive on one channel;
// each value goes to exactly one receiver, and the waiters of each side are served in FIFO
// order.
//
//   presto::channels::Channel<int> c{"numbers"};
//   auto producer = presto::fork([&] { for (int i = 0; i < 3; ++i) c.send(i); c.close(); });
//   while (std::optional<int> v = c.recv()) use(*v);   // 0, 1, 2, then empty: closed
//
// Closing: close() wakes every waiting thread. recv() returns an empty optional once the
// channel is closed (and, for BufferedChannel, drained); send() on a closed channel throws
// ChannelClosed, naming the channel and the thread, and the value is not delivered. Closing
// twice is a UsageError. To wait on several channels at once, see poll() (poll.hpp).
//
// Works from presto threads and plain OS threads alike. T must be nothrow-move-constructible
// (values are moved while the channel's spinlock is held).

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <presto/channels/basic_channel.hpp>

namespace presto::channels {

template <class T>
class Channel : public BasicChannel {
  static_assert(std::is_nothrow_move_constructible_v<T>, "Channel<T> moves values under a spinlock");

 public:
  using value_type = T;

  // A rendezvous channel (capacity 0).
  explicit Channel(std::string name = {}) : Channel(0, std::move(name)) {}
  ~Channel() noexcept(false) override = default;

  // Waits until a receiver takes `value`. Throws ChannelClosed if the channel is closed
  // before that.
  void send(T value) { send_value(&value); }
  // Waits for a value; empty once the channel is closed (and drained).
  std::optional<T> recv() {
    std::optional<T> slot;
    recv_value(&slot);
    return slot;
  }
  // As send, but gives up at `deadline`: false if it passed first, and `value` is then left
  // as it was (moved from only when sent). Throws ChannelClosed as send.
  bool try_send_until(T& value, Clock::time_point deadline) { return send_value(&value, &deadline); }
  template <class Rep, class Period>
  bool try_send_for(T& value, const std::chrono::duration<Rep, Period>& timeout) {
    return try_send_until(value, Clock::now() + std::chrono::ceil<Clock::duration>(timeout));
  }
  // As send, but throws presto::Cancelled (the value not sent) if a stop is requested on
  // `token` first (presto/stop_token.hpp).
  void send(T value, const StopToken& token) { send_value(&value, nullptr, token); }
  // As recv, but gives up at `deadline`: empty if it passed first or the channel is closed
  // (closed() tells which: a closed channel stays closed).
  std::optional<T> try_recv_until(Clock::time_point deadline) {
    std::optional<T> slot;
    recv_value(&slot, &deadline);
    return slot;
  }
  template <class Rep, class Period>
  std::optional<T> try_recv_for(const std::chrono::duration<Rep, Period>& timeout) {
    return try_recv_until(Clock::now() + std::chrono::ceil<Clock::duration>(timeout));
  }
  // As recv, but throws presto::Cancelled if a stop is requested on `token` first.
  std::optional<T> recv(const StopToken& token) {
    std::optional<T> slot;
    recv_value(&slot, nullptr, token);
    return slot;
  }
  // Sends only if a receiver waits (or, buffered, there is room): false if it would wait, and
  // `value` is then left as it was (it is moved from only when sent). Throws ChannelClosed on
  // a closed channel.
  bool try_send(T& value) { return try_send_value(&value); }
  // Receives only if a value is ready; empty if it would wait or the channel is closed.
  std::optional<T> try_recv() {
    std::optional<T> slot;
    try_recv_value(&slot);
    return slot;
  }

 protected:
  // For BufferedChannel: a channel that holds up to `capacity` values no receiver has taken.
  Channel(std::size_t capacity, std::string name) : BasicChannel(capacity, std::move(name)), ring_(capacity) {}

 private:
  void move_value(void* from_value, void* to_slot) noexcept override {
    static_cast<std::optional<T>*>(to_slot)->emplace(std::move(*static_cast<T*>(from_value)));
  }
  std::size_t buffered() const noexcept override { return count_; }
  void buffer_push(void* from_value) noexcept override {
    ring_[(head_ + count_) % ring_.size()].emplace(std::move(*static_cast<T*>(from_value)));
    ++count_;
  }
  void buffer_pop(void* to_slot) noexcept override {
    std::optional<T>& front = ring_[head_];
    static_cast<std::optional<T>*>(to_slot)->emplace(std::move(*front));
    front.reset();
    head_ = (head_ + 1) % ring_.size();
    --count_;
  }

  // The buffer: a ring allocated once, so nothing allocates under the spinlock.
  std::vector<std::optional<T>> ring_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

}  // namespace presto::channels
