// Timed and cancellable waits of the extensions: Future/Promise (wait_until, get(token),
// wait_any/when_any) and channels (send/recv with a deadline or a token), over every
// configuration.

#include <chrono>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>

#include <presto/channels/channels.hpp>
#include <presto/futures/future.hpp>
#include <presto/futures/promise.hpp>
#include <presto/futures/when_any.hpp>

#include "test_support.hpp"
#include "waits_support.hpp"

using namespace presto;
using namespace presto::futures;
using namespace std::chrono_literals;

TEST_CASE("futures: timed waits, get with a token, and values kept", "[waits][futures]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    Semaphore go{0, "go"};
    Future slow{[&] {
      go.acquire();
      return 42;
    }};
    record.expect(!slow.wait_for(1ms), "wait_for reported a future ready before its value");
    record.expect(!slow.ready(), "a timed-out wait made the future ready");

    StopSource stop;
    auto getter = fork([&, token = stop.get_token()]() -> std::string {
      try {
        return std::to_string(slow.get(token));
      } catch (const Cancelled& e) {
        return e.what();
      }
    });
    presto::test::await_blocked(getter.thread());
    stop.request_stop();
    const std::string message = getter.join();
    record.expect(message.find("future") != std::string::npos && message.find("cancelled") != std::string::npos,
                  "get(token) was not cancelled: '" + message + "'");

    go.release();
    record.expect(slow.wait_until(Clock::now() + 1h), "wait_until missed the value");
    record.expect(slow.get() == 42, "the value was lost after a cancelled get");
    record.expect(slow.get(StopToken{}) == 42, "get(token) on a ready future");

    Future<int> failing{[]() -> int { throw std::runtime_error("boom"); }};
    record.expect(failing.wait_until(Clock::now() + 1h), "an exception did not make the future ready");
    bool rethrown = false;
    try {
      failing.get(stop.get_token());  // ready: the stop does not matter
    } catch (const std::runtime_error& e) {
      rethrown = std::string(e.what()) == "boom";
    }
    record.expect(rethrown, "get(token) did not rethrow the computation's exception");

    Promise<int> never{"never"};
    record.expect(!never.wait_for(1ms), "an unsettled promise reported ready");
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("wait_any and when_any pick a ready future, without consuming it", "[waits][futures]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    Promise<int> a{"a"};
    Promise<std::string> b{"b"};
    Future<void> c{[] {}};
    c.wait();
    record.expect(wait_any(a, b, c) == 2, "the only ready argument was not chosen");

    Promise<int> d{"d"};
    record.expect(!wait_any_until(Clock::now() + 1ms, a, b, d).has_value(), "wait_any_until chose an unsettled promise");

    auto setter = fork([&] { b.set_value("second"); });
    auto winner = when_any(a, b);
    record.expect(winner.get() == 1, "when_any did not choose the settled promise");
    record.expect(b.get() == "second", "when_any consumed the value");
    setter.join();

    StopSource stop;
    auto waiter = fork([&, token = stop.get_token()] {
      try {
        wait_any(token, a, d);
      } catch (const Cancelled&) {
        return true;
      }
      return false;
    });
    presto::test::await_blocked(waiter.thread());
    stop.request_stop();
    record.expect(waiter.join(), "wait_any(token) was not cancelled");

    Semaphore hold{0, "hold"};  // before the futures: they wait on it until they are destroyed
    std::deque<Future<int>> range;
    for (int i = 0; i < 4; ++i) {
      range.emplace_back([&hold, i] {
        if (i != 3) hold.acquire();
        return i;
      });
    }
    const std::size_t first = wait_any(range);
    record.expect(first == 3 && range[first].get() == 3, "the range form chose a future still running");
    hold.release(3);
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("many watchers racing settlements: every wait_any wakes once, on a ready argument", "[waits][futures][race]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const std::size_t iterations = presto::test::scaled(150);
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    for (std::size_t i = 0; i < iterations; ++i) {
      Promise<int> p{"p"}, q{"q"};
      StopSource stop;
      auto waiter = fork([&, token = stop.get_token()]() -> int {
        try {
          return static_cast<int>(wait_any(token, p, q));
        } catch (const Cancelled&) {
          return -1;
        }
      });
      auto set_p = fork([&] { p.set_value(1); });
      auto set_q = fork([&] { q.set_value(2); });
      auto canceller = fork([&] {
        if (i % 3 == 0) stop.request_stop();
      });
      const int chosen = waiter.join();
      set_p.join();
      set_q.join();
      canceller.join();
      record.expect(chosen == -1 ? i % 3 == 0 : (chosen == 0 ? p.ready() : q.ready()),
                    "iteration " + std::to_string(i) + ": wait_any returned " + std::to_string(chosen));
    }
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("channels: send and recv with a deadline give up cleanly", "[waits][channels]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    channels::Channel<std::string> c{"words"};
    std::string word = "kept";
    record.expect(!c.try_send_for(word, 1ms), "a send without a receiver succeeded");
    record.expect(word == "kept", "a timed-out send moved the value away");
    record.expect(!c.try_recv_for(1ms).has_value(), "a recv without a sender got a value");

    auto receiver = fork([&] { return c.try_recv_until(Clock::now() + 1h); });
    presto::test::await_blocked(receiver.thread());
    record.expect(c.try_send_until(word, Clock::now() + 1h), "a timed send missed a waiting receiver");
    record.expect(receiver.join() == std::optional<std::string>("kept"), "the receiver did not get the value");

    channels::BufferedChannel<int> b{1, "one slot"};
    int v = 1;
    record.expect(b.try_send_for(v, 1ms), "a send into free room waited");
    v = 2;
    record.expect(!b.try_send_for(v, 1ms), "a send into a full buffer succeeded");
    record.expect(b.recv(StopToken{}) == 1, "the buffered value was lost");
    b.close();
    record.expect(!b.try_recv_for(1h).has_value() && b.closed(), "a closed, drained channel made recv wait");
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("channels: a value racing a stop is delivered exactly once or not at all", "[waits][channels][race]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const std::size_t iterations = presto::test::scaled(150);
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    for (std::size_t i = 0; i < iterations; ++i) {
      channels::Channel<int> c{"raced"};
      StopSource stop;
      const int value = static_cast<int>(i);
      const bool cancel_sender = i % 2 == 0;  // alternately the sender's and the receiver's wait
      auto sender = fork([&, token = stop.get_token()] {
        try {
          if (cancel_sender) {
            c.send(value, token);
          } else {
            c.send(value);
          }
          return true;
        } catch (const Cancelled&) {
          return false;
        }
      });
      auto receiver = fork([&, token = stop.get_token()]() -> std::optional<int> {
        try {
          return cancel_sender ? c.recv() : c.recv(token);
        } catch (const Cancelled&) {
          return std::nullopt;
        }
      });
      auto canceller = fork([&] { stop.request_stop(); });
      canceller.join();
      const std::string where = "iteration " + std::to_string(i) + ": ";
      if (cancel_sender) {
        const bool sent = sender.join();
        if (!sent) c.send(-1);  // the receiver still waits: it must get this one, not the value
        const std::optional<int> got = receiver.join();
        record.expect(got == (sent ? value : -1), where + "the value was lost or duplicated");
      } else {
        const std::optional<int> got = receiver.join();
        if (!got) record.expect(c.recv() == value, where + "the sender's value went nowhere");
        record.expect(sender.join(), where + "the uncancelled sender failed");
        if (got) record.expect(*got == value, where + "the receiver got a wrong value");
      }
    }
  });
  PRESTO_CHECK_RECORD(record);
}
