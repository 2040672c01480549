#pragma once
// PollGate: what a polling thread sleeps on while it waits on several channels at once. The
// first partner to claim the gate (under the gate's spinlock) sets `fired` and `chosen` and
// wakes the thread; later partners see `fired` and pass the thread's other waiters by.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include <presto/channels/basic_channel.hpp>
#include <presto/synchro_object.hpp>

namespace presto::channels::detail {

class PollGate final : public SynchroObject {
 public:
  explicit PollGate(std::span<const PollCase> cases) : cases_(cases) {}
  ~PollGate() noexcept(false) override { check_no_waiters(); }

  std::string_view kind() const noexcept override { return "poll"; }
  // "poll over receive on channel 'a', send on channel 'b'": deadlock reports name the cases.
  std::string describe() const override;

  // Guarded by the spinlock.
  bool fired = false;
  std::size_t chosen = 0;

 private:
  std::span<const PollCase> cases_;
};

}  // namespace presto::channels::detail
