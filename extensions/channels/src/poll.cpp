#include <algorithm>
#include <chrono>
#include <cstdint>

#include <presto/channels/basic_channel.hpp>
#include <presto/errors.hpp>
#include <presto/predicted_return.hpp>

#include "poll_gate.hpp"

namespace presto::channels::detail {

namespace {

// A cheap per-processor generator for the order in which a poll examines its cases. Per OS
// thread (not per presto thread) on purpose: any stream of numbers will do.
std::uint64_t next_random() noexcept {
  thread_local std::uint64_t state =
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) |
      1;
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

}  // namespace

std::string PollGate::describe() const {
  std::string text = "poll over";
  const char* separator = " ";
  for (const PollCase& c : cases_) {
    if (!c.enabled) continue;
    text += separator;
    text += c.is_send ? "send on " : "receive on ";
    text += c.waiter.orphaned ? std::string("a destroyed channel") : c.channel->describe();
    separator = ", ";
  }
  return text;
}

// poll: a predicted-return entry where there are such (as BasicChannel::recv_value; the
// name is libstdc++'s mangling of std::span).
#if PRESTO_PREDICTED_RETURN && defined(__GLIBCXX__)
PRESTO_PREDICTED_RETURN_ENTRY(
    "_ZN6presto8channels6detail4pollESt4spanINS1_8PollCaseELm18446744073709551615EES2_IjLm18446744073709551615EEb",
    "_ZN6presto8channels6detail9poll_bodyESt4spanINS1_8PollCaseELm18446744073709551615EES2_IjLm18446744073709551615EEb");
#else
std::size_t poll(std::span<PollCase> cases, std::span<std::uint32_t> order, bool wait) {
  return poll_body(cases, order, wait);
}
#endif

// A poll takes exactly one case. It locks every channel it polls (in address order, so polls
// never deadlock on each other), examines the enabled cases in a fresh random order and takes
// the first that can complete; this makes it fair. If none can, it records a waiter on each
// channel and sleeps on a PollGate; the first partner to claim the gate completes that case,
// and the thread, woken, unlinks its other waiters.
// Used: the entry calls it from assembly, which link-time optimization does not see.
[[gnu::used]] std::size_t poll_body(std::span<PollCase> cases, std::span<std::uint32_t> order, bool wait) {
  const std::size_t n = cases.size();
  std::uint32_t* scan = order.data();          // enabled cases, in random order
  std::uint32_t* by_channel = scan + n;        // the same, by channel address
  std::size_t m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (cases[i].enabled) scan[m++] = static_cast<std::uint32_t>(i);
  }
  if (m == 0) {
    if (!wait) return n;
    throw UsageError(Thread::current().describe() + " polled with every guard false: it would wait forever");
  }
  for (std::size_t k = m - 1; k > 0; --k) std::swap(scan[k], scan[next_random() % (k + 1)]);
  std::copy(scan, scan + m, by_channel);
  std::sort(by_channel, by_channel + m,
            [&](std::uint32_t a, std::uint32_t b) { return cases[a].channel < cases[b].channel; });
  auto for_each_channel = [&](auto&& f) {
    for (std::size_t k = 0; k < m; ++k) {
      BasicChannel* c = cases[by_channel[k]].channel;
      if (k == 0 || c != cases[by_channel[k - 1]].channel) f(*c);
    }
  };

  for_each_channel([](BasicChannel& c) { c.spin_lock(); });
  Wake wake;
  for (std::size_t k = 0; k < m; ++k) {
    PollCase& c = cases[scan[k]];
    const auto outcome = c.is_send ? c.channel->send_locked(c.value, wake) : c.channel->recv_locked(c.value, wake);
    if (outcome != BasicChannel::Outcome::would_block) {
      c.closed = outcome == BasicChannel::Outcome::closed;
      for_each_channel([](BasicChannel& ch) { ch.spin_unlock(); });
      wake.run();
      return scan[k];
    }
  }

  if (!wait) {
    for_each_channel([](BasicChannel& c) { c.spin_unlock(); });
    return n;
  }

  PollGate gate{cases};
  Thread& self = Thread::current();
  for (std::size_t k = 0; k < m; ++k) {
    PollCase& c = cases[scan[k]];
    c.waiter = Waiter{.thread = &self, .gate = &gate, .index = scan[k], .value = c.value};
    (c.is_send ? c.channel->senders_ : c.channel->receivers_).push_back(c.waiter);
  }
  gate.spin_lock();  // before the channels open: a partner that finds us waits until we sleep
  for_each_channel([](BasicChannel& c) { c.spin_unlock(); });
  gate.block();

  for_each_channel([&](BasicChannel& ch) {
    ch.spin_lock();
    for (std::size_t k = 0; k < m; ++k) {
      PollCase& c = cases[scan[k]];
      if (c.channel == &ch && c.waiter.linked) (c.is_send ? ch.senders_ : ch.receivers_).unlink(c.waiter);
    }
    ch.spin_unlock();
  });
  PollCase& taken = cases[gate.chosen];
  taken.closed = taken.waiter.closed;
  return gate.chosen;
}

}  // namespace presto::channels::detail
