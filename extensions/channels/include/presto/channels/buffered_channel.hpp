#pragma once
// BufferedChannel<T>: a channel that holds up to `capacity` values. send() waits only while the
// buffer is full, recv() only while it is empty; values arrive in the order they were sent.
// After close(), receivers still drain the buffered values, then get an empty optional.
// Everything else is Channel<T>'s contract.

#include <cstddef>
#include <string>
#include <string_view>

#include <presto/channels/channel.hpp>
#include <presto/errors.hpp>

namespace presto::channels {

template <class T>
class BufferedChannel : public Channel<T> {
 public:
  // UsageError if capacity is 0 (use Channel<T> for a rendezvous).
  explicit BufferedChannel(std::size_t capacity, std::string name = {}) : Channel<T>(capacity, std::move(name)) {
    if (capacity == 0) {
      throw UsageError(this->describe() + " created with capacity 0; use Channel for a rendezvous");
    }
  }
  std::string_view kind() const noexcept override { return "buffered channel"; }
};

}  // namespace presto::channels
