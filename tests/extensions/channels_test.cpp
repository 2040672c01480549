// presto::channels: rendezvous ordering, buffered capacity, poll (exactly one case, guards,
// fairness), close waking every waiter, plain OS threads, misuse and leaks, over every
// configuration (1, 2 and 4 processors x every pool).

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <presto/channels/channels.hpp>

#include "test_support.hpp"
#include "two_sites.hpp"

using namespace presto;
using namespace presto::channels;

namespace {

// Yields until every thread of `hs` is blocked; bounded, so a bug fails instead of hanging.
template <class H>
bool wait_until_blocked(const std::vector<H>& hs) {
  for (long spin = 0; spin < 10'000'000; ++spin) {
    if (std::all_of(hs.begin(), hs.end(), [](const H& h) { return h.thread().state() == ThreadState::blocked; })) {
      return true;
    }
    this_thread::yield();
  }
  return false;
}

// A value that counts its live instances, to prove channels neither leak nor double-free.
struct Counted {
  static inline std::atomic<long> live{0};
  int v = 0;
  explicit Counted(int value) : v(value) { ++live; }
  Counted(Counted&& o) noexcept : v(o.v) { ++live; }
  Counted(const Counted&) = delete;
  Counted& operator=(Counted&&) = delete;
  ~Counted() { --live; }
};

}  // namespace

TEST_CASE("a rendezvous send waits for its receiver, and values arrive in order", "[channels]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const int n = static_cast<int>(presto::test::scaled(2000));
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    Channel<int> c{"numbers"};
    int probe = 7;
    record.expect(!c.try_send(probe), "try_send succeeded with no receiver on a rendezvous channel");
    std::atomic<bool> sent{false};
    std::vector<JoinHandle<void>> sender;
    sender.push_back(fork([&] {
      c.send(41);
      sent = true;
    }));
    record.expect(wait_until_blocked(sender), "the sender never blocked");
    record.expect(!sent, "send returned before any receiver came");
    record.expect(c.recv() == 41, "wrong value");
    sender[0].join();
    record.expect(sent, "sender not done after join");

    auto producer = fork([&] {
      for (int i = 0; i < n; ++i) c.send(i);
      c.close();
    });
    int expected = 0;
    while (std::optional<int> v = c.recv()) {
      record.expect(*v == expected, "out of order: got " + std::to_string(*v) + ", expected " + std::to_string(expected));
      ++expected;
    }
    producer.join();
    record.expect(expected == n, "received " + std::to_string(expected) + " of " + std::to_string(n));
  });
  PRESTO_CHECK_RECORD(record);
}

// The partner a channel operation serves is handed off (SynchroObject::wakeup_handoff): on one
// processor with the built-in pool it is not made ready by the operation but runs when its
// server next leaves the processor, here its next sleep; a poller likewise, through its gate.
TEST_CASE("a rendezvous on one processor leaves the served partner to its server's next sleep", "[channels]") {
  auto pool = GENERATE(presto::test::PoolKind::local_queue, presto::test::PoolKind::local_eager,
                       presto::test::PoolKind::fifo);
  auto partner = GENERATE(0, 1, 2);  // a receiver, a sender, a poller receiving
  const presto::test::Config cfg{1, pool};
  INFO(cfg << ", partner " << partner);
  const bool built_in = pool != presto::test::PoolKind::fifo;
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    Channel<int> c{"c"};
    Channel<int> idle{"idle"};
    Channel<int> back{"back"};
    int got = 0;
    std::vector<JoinHandle<void>> hs;
    hs.push_back(fork([&] {
      if (partner == 0) {
        got = *c.recv();
      } else if (partner == 1) {
        c.send(5);
        got = 5;
      } else {
        poll(on_recv(c, [&](std::optional<int> v) { got = *v; }), on_recv(idle, [](std::optional<int>) {}));
      }
      back.send(got);
    }));
    record.expect(wait_until_blocked(hs), "the partner never blocked");
    if (partner == 1) {
      record.expect(c.recv() == 5, "wrong value");
    } else {
      c.send(5);
    }
    const std::size_t ready = Runtime::current()->stats().ready_threads;
    record.expect(ready == (built_in ? 0u : 1u), "after the rendezvous, " + std::to_string(ready) +
                                                     " thread(s) ready, where " + (built_in ? "0" : "1") +
                                                     " were expected");
    record.expect(back.recv() == 5, "the partner's value");  // our sleep: the partner runs
    hs[0].join();
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("many senders and receivers: each value delivered exactly once, per-sender order kept", "[channels]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const int senders = 6, receivers = 5, n = static_cast<int>(presto::test::scaled(400));
  const auto capacity = GENERATE(as<std::size_t>{}, 0, 3);
  INFO("capacity " << capacity);
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    std::unique_ptr<Channel<int>> c =
        capacity == 0 ? std::make_unique<Channel<int>>("c") : std::make_unique<BufferedChannel<int>>(capacity, "c");
    std::vector<std::vector<int>> got(receivers);
    std::vector<JoinHandle<void>> rs, ss;
    for (int r = 0; r < receivers; ++r) {
      rs.push_back(fork([&, r] {
        while (std::optional<int> v = c->recv()) got[r].push_back(*v);
      }));
    }
    for (int s = 0; s < senders; ++s) {
      ss.push_back(fork([&, s] {
        for (int i = 0; i < n; ++i) c->send(s * n + i);
      }));
    }
    for (auto& h : ss) h.join();
    c->close();
    for (auto& h : rs) h.join();
    std::vector<int> all;
    for (const auto& g : got) {
      std::vector<int> last(senders, -1);
      for (int v : g) {
        record.expect(v % n > last[v / n], "a receiver saw sender " + std::to_string(v / n) + " out of order");
        last[v / n] = v % n;
      }
      all.insert(all.end(), g.begin(), g.end());
    }
    std::sort(all.begin(), all.end());
    bool exact = all.size() == static_cast<std::size_t>(senders * n);
    for (std::size_t i = 0; exact && i < all.size(); ++i) exact = all[i] == static_cast<int>(i);
    record.expect(exact, "values lost or duplicated: " + std::to_string(all.size()) + " received");
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("a buffered channel holds up to its capacity, in FIFO order, and drains after close", "[channels]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    BufferedChannel<int> c{3, "buffer"};
    record.expect(c.capacity() == 3, "capacity");
    for (int i = 0; i < 3; ++i) record.expect(c.try_send(i), "try_send failed below capacity");
    int extra = 3;
    record.expect(!c.try_send(extra), "try_send succeeded on a full buffer");
    // A blocked sender is refilled into the buffer in order when a receiver makes room.
    std::vector<JoinHandle<void>> blocked;
    blocked.push_back(fork([&] { c.send(3); }));
    record.expect(wait_until_blocked(blocked), "a send on a full buffer did not block");
    for (int i = 0; i < 2; ++i) record.expect(c.recv() == i, "FIFO order broken");
    blocked[0].join();
    c.close();
    record.expect(c.closed(), "closed() false after close");
    record.expect(c.recv() == 2 && c.recv() == 3, "buffered values lost at close");
    record.expect(!c.recv().has_value(), "recv on a closed, drained channel returned a value");
    record.expect(!c.try_recv().has_value(), "try_recv on a closed, drained channel returned a value");
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("close wakes every waiting receiver, sender and poller with a clear result", "[channels]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    Channel<int> in{"in"}, out{"out"};
    std::atomic<int> receivers_closed{0}, senders_closed{0}, pollers_closed{0};
    std::vector<JoinHandle<void>> hs;
    for (int i = 0; i < 4; ++i) {
      hs.push_back(fork([&] {
        if (!in.recv()) ++receivers_closed;
      }));
      hs.push_back(fork([&, i] {
        try {
          out.send(i);
        } catch (const ChannelClosed& e) {
          record.expect(std::string(e.what()).find("channel 'out'") != std::string::npos,
                        std::string("ChannelClosed does not name the channel: ") + e.what());
          ++senders_closed;
        }
      }));
      hs.push_back(fork([&, i] {
        poll(on_recv(in, [&](std::optional<int> v) { pollers_closed += v ? 0 : 1; }),
             on_send(out, i, [&](bool delivered) { pollers_closed += delivered ? 0 : 1; }));
      }));
    }
    record.expect(wait_until_blocked(hs), "not every thread blocked");
    in.close();
    out.close();
    for (auto& h : hs) h.join();
    record.expect(receivers_closed == 4, "a receiver was not told the channel closed");
    record.expect(senders_closed == 4, "a sender did not get ChannelClosed");
    record.expect(pollers_closed == 4, "a poller was not told the channel closed");
    // After close: send throws, recv is empty, poll takes the closed case, close again is misuse.
    bool threw = false;
    try {
      in.send(1);
    } catch (const ChannelClosed&) {
      threw = true;
    }
    record.expect(threw, "send on a closed channel did not throw");
    record.expect(!in.recv().has_value(), "recv on a closed channel returned a value");
    bool misuse = false;
    try {
      in.close();
    } catch (const UsageError& e) {
      misuse = std::string(e.what()).find("already closed") != std::string::npos;
    }
    record.expect(misuse, "closing twice was not a UsageError");
  });
  PRESTO_CHECK_RECORD(record);
}

// send, recv and poll are predicted-return entries on x86-64 System V: they may return to
// their callers by a jump after a switch. Wherever they return, the caller's registers and
// stack are as a call leaves them.
TEST_CASE("channel partners blocking from different call sites keep their registers", "[channels][poll]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const int rounds = static_cast<int>(presto::test::scaled(2000));
  presto::test::Record record;
  std::array<std::uint64_t, 2> by_value{}, by_poll{};
  presto::test::run(cfg, [&] {
    Channel<int> ping{"ping"}, pong{"pong"}, idle{"idle"};
    by_value = presto::test::from_two_sites(
        rounds, record,
        [&] {
          ping.send(1);
          record.expect(pong.recv() == 2, "pong lost its value");
        },
        [&] {
          record.expect(ping.recv() == 1, "ping lost its value");
          pong.send(2);
        });
    by_poll = presto::test::from_two_sites(
        rounds, record,
        [&] {
          ping.send(3);
          poll(on_recv(pong, [&](std::optional<int> v) { record.expect(v == 4, "pong lost its value"); }),
               on_recv(idle, [&](std::optional<int>) { record.expect(false, "an idle channel was taken"); }));
        },
        [&] {
          poll(on_recv(ping, [&](std::optional<int> v) { record.expect(v == 3, "ping lost its value"); }));
          pong.send(4);
        });
  });
  presto::test::check_two_sites(record, by_value, rounds);
  presto::test::check_two_sites(record, by_poll, rounds);
}

TEST_CASE("poll takes exactly one ready case and leaves the others untouched", "[channels][poll]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    Channel<int> a{"a"}, b{"b"};
    std::vector<JoinHandle<void>> senders;
    senders.push_back(fork([&] { a.send(1); }));
    senders.push_back(fork([&] { b.send(2); }));
    record.expect(wait_until_blocked(senders), "senders did not block");
    int handled = 0, sum = 0;
    for (int round = 0; round < 2; ++round) {
      poll(on_recv(a, [&](std::optional<int> v) { ++handled, sum += v.value_or(100); }),
           on_recv(b, [&](std::optional<int> v) { ++handled, sum += v.value_or(100); }));
      record.expect(handled == round + 1, "poll ran more or fewer than one handler");
      if (round == 0) {
        record.expect(presto::test::has_waiters(a) != presto::test::has_waiters(b),
                      "after one poll, not exactly one sender was still waiting");
      }
    }
    record.expect(sum == 3, "poll lost or duplicated a value");
    for (auto& h : senders) h.join();

    // A disabled case is never taken, even when ready; a poll with nothing enabled is misuse.
    BufferedChannel<int> ready{1, "ready"};
    int one = 1;
    record.expect(ready.try_send(one), "fill");
    auto sender = fork([&] { a.send(5); });
    std::size_t taken = poll(on_recv(ready, [](std::optional<int>) {}).when(false),
                             on_recv(a, [&](std::optional<int> v) { record.expect(v == 5, "wrong value"); }));
    record.expect(taken == 1, "a disabled case was taken");
    sender.join();
    bool misuse = false;
    try {
      poll(on_recv(ready, [](std::optional<int>) {}).when(false));
    } catch (const UsageError& e) {
      misuse = std::string(e.what()).find("every guard false") != std::string::npos;
    }
    record.expect(misuse, "a poll with every guard false was not a UsageError");
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("pollers that send and receive, against each other and plain threads, lose nothing", "[channels][poll]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const int per_poller = static_cast<int>(presto::test::scaled(300)), pollers = 4;
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    // Senders poll over {a, b}; receivers poll over {a, b}, or receive from one only.
    Channel<int> a{"a"}, b{"b"};
    std::atomic<long> sent_sum{0}, received_sum{0}, received_count{0};
    std::atomic<bool> closing{false};
    std::vector<JoinHandle<void>> hs;
    for (int p = 0; p < pollers; ++p) {
      hs.push_back(fork([&, p] {
        for (int i = 0; i < per_poller; ++i) {
          const int v = p * per_poller + i;
          poll(on_send(a, v, [&](bool ok) { sent_sum += ok ? v : -1'000'000; }),
               on_send(b, v, [&](bool ok) { sent_sum += ok ? v : -1'000'000; }));
        }
      }));
    }
    const long total = static_cast<long>(pollers) * per_poller;
    auto take = [&](std::optional<int> v) {
      if (v) received_sum += *v, ++received_count;
    };
    for (int r = 0; r < 3; ++r) {
      hs.push_back(fork([&, r] {
        // Bounded: stops when every value was received (the last receivers see closed).
        for (;;) {
          if (r == 0) {
            auto v = a.recv();
            if (!v) return;
            take(v);
          } else {
            bool closed = false;
            poll(on_recv(a, [&](std::optional<int> v) { closed = !v, take(v); }),
                 on_recv(b, [&](std::optional<int> v) { closed = !v, take(v); }));
            if (closed) return;
          }
          if (received_count == total && !closing.exchange(true)) {
            a.close(), b.close();  // the others wake with "closed"
            return;
          }
        }
      }));
    }
    for (auto& h : hs) h.join();
    record.expect(received_count == total, "values lost: " + std::to_string(received_count.load()));
    record.expect(sent_sum == received_sum, "a value was delivered twice or a send reported wrongly");
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("poll is fair: when both cases are always ready, each is taken about half the time", "[channels][poll]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const int rounds = 2000;  // binomial: sd = 22 picks; the bounds are 9 sd away
  auto counts = presto::test::run(cfg, [&] {
    BufferedChannel<int> a{1, "a"}, b{1, "b"};
    std::array<int, 2> picks{0, 0};
    for (int i = 0; i < rounds; ++i) {
      int x = 0, y = 1;
      (void)a.try_send(x);  // refill whichever was taken; the other stays full
      (void)b.try_send(y);
      poll(on_recv(a, [&](std::optional<int>) { ++picks[0]; }), on_recv(b, [&](std::optional<int>) { ++picks[1]; }));
    }
    return picks;
  });
  CHECK(counts[0] + counts[1] == rounds);
  CHECK(counts[0] > rounds * 0.4);
  CHECK(counts[1] > rounds * 0.4);
}

TEST_CASE("try_poll takes a ready case or none, never waiting; Joyce's requeue polling loses nothing", "[channels][poll]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const int n = static_cast<int>(presto::test::scaled(300));
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    Channel<int> a{"a"}, b{"b"};
    int handled = 0;
    auto none = try_poll(on_recv(a, [&](std::optional<int>) { ++handled; }), on_send(b, 1, [&](bool) { ++handled; }));
    record.expect(!none && handled == 0, "try_poll took a case nobody was ready for");
    record.expect(!try_poll(on_recv(a, [&](std::optional<int>) { ++handled; }).when(false)),
                  "try_poll with every guard false took a case");
    // Joyce 1988: the poller re-enters the ready queue until a sender is ready.
    auto sender = [&](Channel<int>& c, int base) {
      for (int i = 0; i < n; ++i) c.send(base + i);
      c.close();
    };
    auto sa = fork(sender, std::ref(a), 0);
    auto sb = fork(sender, std::ref(b), n);
    long sum = 0;
    bool a_open = true, b_open = true;
    while (a_open || b_open) {
      while (!try_poll(on_recv(a, [&](std::optional<int> v) { v ? void(sum += *v) : void(a_open = false); }).when(a_open),
                       on_recv(b, [&](std::optional<int> v) { v ? void(sum += *v) : void(b_open = false); }).when(b_open))) {
        this_thread::yield();
      }
    }
    sa.join();
    sb.join();
    const long expected = static_cast<long>(2 * n) * (2 * n - 1) / 2;
    record.expect(sum == expected, "requeue polling lost or duplicated values: " + std::to_string(sum));
    record.expect(handled == 0, "a handler ran for a case not taken");
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("a poll handler's exception propagates, and the channels stay usable", "[channels][poll]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    BufferedChannel<int> c{2, "c"};
    c.send(1);
    c.send(2);
    bool threw = false;
    try {
      poll(on_recv(c, [](std::optional<int>) { throw std::runtime_error("handler failed"); }));
    } catch (const std::runtime_error& e) {
      threw = std::string(e.what()) == "handler failed";
    }
    record.expect(threw, "the handler's exception did not reach the poller");
    record.expect(c.recv() == 2, "the channel lost its state after a throwing handler");
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("channels work between plain OS threads and between OS threads and presto threads", "[channels][os]") {
  const int n = static_cast<int>(presto::test::scaled(2000));
  SECTION("no runtime at all: OS threads ping-pong and poll") {
    Channel<int> ping{"ping"}, pong{"pong"};
    BufferedChannel<int> side{4, "side"};
    long sum = 0;
    std::thread other([&] {
      while (auto v = ping.recv()) pong.send(*v + 1);
    });
    for (int i = 0; i < n; ++i) {
      ping.send(i);
      poll(on_recv(pong, [&](std::optional<int> v) { sum += v.value_or(-1); }),
           on_recv(side, [&](std::optional<int>) { sum -= 1'000'000; }));
    }
    ping.close();
    other.join();
    CHECK(sum == static_cast<long>(n) * (n + 1) / 2);
  }
  SECTION("a presto receiver and an OS-thread sender") {
    auto cfg = GENERATE(presto::test::configs());
    INFO(cfg);
    Channel<int> c{"from outside"};
    Runtime rt{presto::test::runtime_config(cfg)};
    long sum = 0;
    std::thread outside;
    rt.run([&] {
      KeepAlive alive = rt.keep_alive();  // the OS thread may wake us: do not halt meanwhile
      outside = std::thread([&, alive = std::move(alive)]() mutable {
        for (int i = 1; i <= n; ++i) c.send(i);
        c.close();
        alive.reset();
      });
      auto receiver = fork([&] {
        while (auto v = c.recv()) sum += *v;
      });
      receiver.join();
    });
    outside.join();
    presto::test::check_no_leaks(rt);
    CHECK(sum == static_cast<long>(n) * (n + 1) / 2);
  }
}

TEST_CASE("channels leak no values: every instance sent, buffered or dropped is destroyed", "[channels]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    {
      Channel<Counted> c{"counted"};
      BufferedChannel<Counted> buffered{8, "counted buffer"};
      auto producer = fork([&] {
        for (int i = 0; i < 100; ++i) c.send(Counted{i});
        for (int i = 0; i < 5; ++i) buffered.send(Counted{i});  // left in the buffer
        c.close();
      });
      long sum = 0;
      while (auto v = c.recv()) sum += v->v;
      producer.join();
      record.expect(sum == 4950, "wrong sum");
      bool threw = false;
      try {
        c.send(Counted{1});
      } catch (const ChannelClosed&) {
        threw = true;
      }
      record.expect(threw, "send on a closed channel did not throw");
    }
    record.expect(Counted::live == 0, std::to_string(Counted::live.load()) + " values leaked");
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("misuse is a UsageError naming the object", "[channels]") {
  try {
    BufferedChannel<int> c{0, "empty"};
    FAIL("capacity 0 accepted");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()).find("buffered channel 'empty'") != std::string::npos);
  }
}

TEST_CASE("a deadlocked poll is reported with the channels it waits on", "[channels][poll]") {
  Runtime rt{{.processors = 1}};
  try {
    rt.run([] {
      Channel<int> a{"left"}, b{"right"};
      poll(on_recv(a, [](std::optional<int>) {}), on_send(b, 1, [](bool) {}));
    });
    FAIL("no deadlock reported");
  } catch (const Deadlock& d) {
    REQUIRE(d.blocked().size() == 1);
    const std::string& on = d.blocked()[0].waiting_on;
    CHECK(on.find("receive on channel 'left'") != std::string::npos);
    CHECK(on.find("send on channel 'right'") != std::string::npos);
  }
}

TEST_CASE("destroying a channel threads wait on names them; they stay blocked and are reported", "[channels]") {
  Runtime rt{{.processors = 2}};
  std::string message, deadlock;
  try {
    rt.run([&] {
      auto doomed = std::make_unique<Channel<int>>("doomed");
      std::vector<JoinHandle<void>> hs;
      hs.push_back(fork(ThreadAttributes{.name = "receiver"}, [&] { (void)doomed->recv(); }));
      hs.push_back(fork(ThreadAttributes{.name = "poller"}, [&] {
        poll(on_recv(*doomed, [](std::optional<int>) {}), on_recv(*doomed, [](std::optional<int>) {}));
      }));
      if (!wait_until_blocked(hs)) return;
      try {
        delete doomed.release();  // unique_ptr::reset is noexcept: it would terminate instead
      } catch (const UsageError& e) {
        message = e.what();
      }
      for (auto& h : hs) h.detach();
    });
  } catch (const Deadlock& d) {
    deadlock = d.what();
  }
  using Catch::Matchers::Contains;
  CHECK_THAT(message, Contains("channel 'doomed' destroyed by thread 'main'") &&
                          Contains("wait on it: thread 'receiver'") && Contains("and threads poll it: thread 'poller'"));
  CHECK_THAT(deadlock, Contains("thread 'receiver'") && Contains("thread 'poller'") &&
                           Contains("poll over receive on a destroyed channel"));
  presto::test::check_no_leaks(rt);
}
