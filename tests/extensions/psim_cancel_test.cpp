// PSIM's receive honours a StopToken: a stop before the call or while the LP sleeps throws
// Cancelled naming the link, the LP and its thread; a stop racing message arrivals loses or
// repeats no message; a cancelled LP may not send until it receives again; one that lets
// Cancelled escape ends the simulation; one stuck elsewhere afterwards is reported by the
// runtime's Deadlock, not blamed on the scheduler. Over 1, 2 and 4 processors, every inner
// pool and both protocols.

#include <algorithm>
#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <presto/psim/simulation.hpp>
#include <presto/psim/simulation_scheduler.hpp>

#include "psim_test_models.hpp"
#include "test_support.hpp"

using namespace presto;
using namespace presto::psim;
using namespace psim_test;
using Catch::Matchers::Contains;

namespace {

// Process style: waits until `open` is counted down, then sends `count` messages at 1, 2, ...
class Gate final : public LogicalProcess {
 public:
  Gate(std::string name, Latch& open, int count) : LogicalProcess(std::move(name)), open_(open), count_(count) {}

 protected:
  void body() override {
    open_.wait();
    for (int i = 1; i <= count_; ++i) send(*outputs().front(), Message{.value = i}, i);
  }

 private:
  Latch& open_;
  int count_;
};

// Receives with a stopped token, then with one stopped while it sleeps, then opens the gate
// and receives everything, first retrying with the stopped token until a message is safe.
class Cancelling final : public LogicalProcess {
 public:
  Cancelling(std::string name, Latch& open, StopSource& during)
      : LogicalProcess(std::move(name)), open_(open), during_(during) {}
  std::string early, late, misuse;
  std::atomic<bool> waiting_during{false};
  std::vector<Time> times;
  std::uint64_t retries = 0;
  bool returned_with_stopped_token = false;

 protected:
  void body() override {
    StopSource stopped;
    stopped.request_stop();
    try {
      (void)receive(stopped.get_token());
    } catch (const Cancelled& e) {
      early = e.what();
    }
    try {
      schedule(Message{}, 1);  // not until a receive returns a message
    } catch (const UsageError& e) {
      misuse = e.what();
    }
    waiting_during = true;
    try {
      (void)receive(during_.get_token());
    } catch (const Cancelled& e) {
      late = e.what();
    }
    open_.count_down();
    // The token is consulted only when the LP would sleep: once the gate's first message is
    // safe, a stopped token still receives it.
    for (std::uint64_t i = 0; i < 1'000'000; ++i) {
      try {
        if (auto m = receive(stopped.get_token())) {
          returned_with_stopped_token = true;
          times.push_back(m->time);
        }
        break;
      } catch (const Cancelled&) {
        ++retries;
      }
      this_thread::yield();  // outside the handler (see Quitter)
    }
    schedule(Message{}, 0.5);  // allowed again
    while (auto m = receive()) {
      if (m->link != nullptr) times.push_back(m->time);
    }
  }

 private:
  Latch& open_;
  StopSource& during_;
};

}  // namespace

TEST_CASE("receive(token): a stop before or during the wait throws Cancelled naming the link, the LP and its thread",
          "[psim][cancel]") {
  auto cfg = GENERATE(presto::test::configs());
  for (Protocol protocol : kProtocols) {
    INFO(cfg << ", " << to_string(protocol));
    Latch open{1, "gate"};
    StopSource during;
    Simulation sim{{.protocol = protocol, .end_time = 100}};
    auto& sink = sim.add<Cancelling>("sink", open, during);
    auto& gate = sim.add<Gate>("gate", open, 5);
    sim.connect(gate, sink, 1.0);
    SimulationStats stats = presto::test::run(cfg, [&] {
      auto runner = fork([&] { return sim.run(presto::test::make_pool(cfg.pool)); });
      // Bounded by the sink's progress: it sleeps in its second receive once this holds.
      while (!(sink.waiting_during && sink.state() == ThreadState::blocked)) this_thread::yield();
      during.request_stop();
      return runner.join();
    });
    CHECK_THAT(sink.early, Contains("receive of logical process 'sink' at t=0 on psim link 'gate->sink' by thread 'sink' (id") &&
                               Contains("was cancelled"));
    CHECK_THAT(sink.late, Contains("receive of logical process 'sink' at t=0 on psim link 'gate->sink' by thread 'sink'") &&
                              Contains("was cancelled"));
    CHECK_THAT(sink.misuse, Contains("logical process 'sink' called schedule at t=0 after its receive() was cancelled"));
    CHECK(sink.returned_with_stopped_token);
    CHECK(sink.times == std::vector<Time>{1, 2, 3, 4, 5});  // every message, once, in order
    const ProcessStats& s = stats.processes[0];
    CHECK(s.cancellations == 2 + sink.retries);
    CHECK(s.unreceived == 0);
    CHECK(s.events == 6);  // five from the gate and the one it scheduled
  }
}

namespace {

// Event style: sends to every output at exponential intervals and records what it sent.
class Emitter final : public LogicalProcess {
 public:
  Emitter(std::string name, std::uint64_t seed, Time lookahead)
      : LogicalProcess(std::move(name)), random_(seed), lookahead_(lookahead) {}
  std::vector<Time> sent;

 protected:
  void initialize() override { schedule({}, random_.exponential(1.0)); }
  void handle(const Message&) override {
    const Time delay = lookahead_ + random_.exponential(1.0);
    sent.push_back(now() + delay);
    send(*outputs().front(), Message{}, delay);
    schedule({}, random_.exponential(0.5));
    if (yields_() % 4 == 0) this_thread::yield();  // lets the stopper in; not the model's randomness
  }

 private:
  Random random_;
  std::minstd_rand yields_{static_cast<std::uint32_t>(presto::test::seed())};
  Time lookahead_;
};

// Receives with token j until it is cancelled, then with token j + 1, ...; acknowledges each
// cancellation (and its end) on `acks`.
class Stoppable final : public LogicalProcess {
 public:
  Stoppable(std::string name, std::vector<StopSource>& sources, Semaphore& acks)
      : LogicalProcess(std::move(name)), sources_(sources), acks_(acks) {}
  std::vector<Time> times;
  std::atomic<bool> finished{false};
  std::uint64_t cancels = 0;

 protected:
  void body() override {
    std::size_t j = 0;
    for (;;) {
      try {
        auto m = j < sources_.size() ? receive(sources_[j].get_token()) : receive();
        if (!m) break;
        times.push_back(m->time);
      } catch (const Cancelled&) {
        ++cancels;
        ++j;
        acks_.release();
      }
    }
    finished = true;
    acks_.release();
  }

 private:
  std::vector<StopSource>& sources_;
  Semaphore& acks_;
};

}  // namespace

TEST_CASE("a stop racing message arrivals: each message is received exactly once, in order, or stays queued",
          "[psim][cancel]") {
  auto cfg = GENERATE(presto::test::configs());
  const Time end = 150;
  for (Protocol protocol : kProtocols) {
    INFO(cfg << ", " << to_string(protocol));
    std::vector<StopSource> sources(60);
    Semaphore acks{0, "acks"};
    Simulation sim{{.protocol = protocol, .end_time = end}};
    auto& sink = sim.add<Stoppable>("sink", sources, acks);
    auto& a = sim.add<Emitter>("a", presto::test::seed() ^ 1, 0.5);
    auto& b = sim.add<Emitter>("b", presto::test::seed() ^ 2, 0.25);
    sim.connect(a, sink, 0.5);
    sim.connect(b, sink, 0.25);
    std::uint64_t stops = 0;
    SimulationStats stats = presto::test::run(cfg, [&] {
      auto runner = fork([&] { return sim.run(presto::test::make_pool(cfg.pool)); });
      std::mt19937_64 random(presto::test::seed());
      for (auto& source : sources) {
        for (auto n = random() % 4; n > 0; --n) this_thread::yield();
        source.request_stop();
        ++stops;
        acks.acquire();  // the sink was cancelled (or ended)
        if (sink.finished) break;
      }
      return runner.join();
    });
    std::vector<Time> expected;
    for (const auto* e : {&a, &b}) {
      for (Time t : e->sent) {
        if (t < end) expected.push_back(t);
      }
    }
    std::sort(expected.begin(), expected.end());
    REQUIRE(expected.size() > 100);
    CHECK(sink.times == expected);
    CHECK(sink.cancels <= stops);
    CHECK(stats.processes[0].cancellations == sink.cancels);
    CHECK(stats.processes[0].unreceived == 0);
  }
}

namespace {

// Sends one message on its output at `delay`, then receives with a stopped token (cancelled:
// nothing is safe yet), counts `cancelled` down, then does what `after` says.
class Quitter final : public LogicalProcess {
 public:
  enum class After { rethrow, finish, block };
  Quitter(std::string name, Time delay, After after, Latch* cancelled = nullptr, Semaphore* never = nullptr)
      : LogicalProcess(std::move(name)), delay_(delay), after_(after), cancelled_(cancelled), never_(never) {}

 protected:
  void body() override {
    send(*outputs().front(), Message{}, delay_);
    StopSource stop;
    stop.request_stop();
    try {
      (void)receive(stop.get_token());
      return;
    } catch (const Cancelled&) {
      if (cancelled_ != nullptr) cancelled_->count_down();
      if (after_ == After::rethrow) throw;
    }
    // Not inside the handler: a thread must not block or yield while it handles an exception
    // (the C++ runtime keeps the exceptions being handled per OS thread, not per presto thread).
    if (after_ == After::block) never_->acquire();
  }

 private:
  Time delay_;
  After after_;
  Latch* cancelled_;
  Semaphore* never_;
};

// Waits for `first` (if any), sends one message at `delay` (if positive), then receives all.
class Echo final : public LogicalProcess {
 public:
  Echo(std::string name, Latch* first = nullptr, Time delay = 0)
      : LogicalProcess(std::move(name)), first_(first), delay_(delay) {}
  std::vector<Time> times;

 protected:
  void body() override {
    if (first_ != nullptr) first_->wait();
    if (delay_ > 0) send(*outputs().front(), Message{}, delay_);
    while (auto m = receive()) times.push_back(m->time);
  }

 private:
  Latch* first_;
  Time delay_;
};

class Leaver final : public LogicalProcess {
 public:
  explicit Leaver(std::string name, Latch* leave = nullptr) : LogicalProcess(std::move(name)), leave_(leave) {}

 protected:
  void body() override {
    if (leave_ != nullptr) leave_->wait();
  }

 private:
  Latch* leave_;
};

// Sends one message at t=0, then ends: its receive() (it has no inputs) delivers the message
// and returns at once. Then opens `delivered`.
class OneShot final : public LogicalProcess {
 public:
  OneShot(std::string name, Latch& delivered) : LogicalProcess(std::move(name)), delivered_(delivered) {}

 protected:
  void body() override {
    send(*outputs().front(), Message{}, 1.0);
    while (receive()) {
    }
    delivered_.count_down();
  }

 private:
  Latch& delivered_;
};

}  // namespace

TEST_CASE("a cancelled LP that lets Cancelled escape ends the simulation; one that returns releases its neighbours",
          "[psim][cancel]") {
  auto cfg = GENERATE(presto::test::configs());
  for (Protocol protocol : kProtocols) {
    INFO(cfg << ", " << to_string(protocol));
    {
      Simulation sim{{.protocol = protocol, .end_time = 10}};
      auto& q = sim.add<Quitter>("quitter", 5.0, Quitter::After::rethrow);
      auto& e = sim.add<Echo>("echo");
      sim.connect(q, e, 1.0);
      sim.connect(e, q, 1.0);
      std::string what = presto::test::run(cfg, [&] {
        try {
          sim.run(presto::test::make_pool(cfg.pool));
        } catch (const Cancelled& c) {
          return std::string(c.what());
        }
        return std::string("no Cancelled");
      });
      CHECK_THAT(what, Contains("receive of logical process 'quitter' at t=0 on psim link 'echo->quitter'"));
      CHECK(q.stats().cancellations == 1);
    }
    {
      // The quitter's body returns: its output link is closed, so the echo is not blocked
      // forever and receives the message sent before the cancellation.
      Simulation sim{{.protocol = protocol, .end_time = 10}};
      auto& q = sim.add<Quitter>("quitter", 5.0, Quitter::After::finish);
      auto& e = sim.add<Echo>("echo");
      sim.connect(q, e, 1.0);
      sim.connect(e, q, 1.0);
      SimulationStats stats = presto::test::run(cfg, [&] { return sim.run(presto::test::make_pool(cfg.pool)); });
      CHECK(e.times == std::vector<Time>{5.0});
      CHECK(stats.processes[0].cancellations == 1);
      CHECK(stats.processes[0].unreceived == 0);
    }
    {
      // What an LP that returned early never received is counted, not silently dropped.
      Simulation sim{{.protocol = protocol, .end_time = 10}};
      auto& l = sim.add<Leaver>("leaver");
      auto& e = sim.add<Echo>("echo", nullptr, 1.0);
      sim.connect(e, l, 1.0);
      SimulationStats stats = presto::test::run(cfg, [&] { return sim.run(presto::test::make_pool(cfg.pool)); });
      CHECK(stats.processes[0].unreceived == 1);
      CHECK(stats.processes[1].unreceived == 0);
    }
    {
      // The same for a message delivered but never taken in: the leaver ends only once the
      // message waits in its inbox.
      Simulation sim{{.protocol = protocol, .end_time = 10}};
      Latch delivered{1, "delivered"};
      auto& l = sim.add<Leaver>("leaver", &delivered);
      auto& o = sim.add<OneShot>("one-shot", delivered);
      sim.connect(o, l, 1.0);
      SimulationStats stats = presto::test::run(cfg, [&] { return sim.run(presto::test::make_pool(cfg.pool)); });
      CHECK(stats.processes[0].unreceived == 1);
      CHECK(stats.processes[0].events == 0);
      CHECK(stats.processes[1].unreceived == 0);
    }
  }
}

namespace {

// What ReportingScheduler saw.
struct Findings {
  std::string report;
  std::vector<std::string> waits;
  int deadlocks = 0;
};

// PSIM's scheduler, but the first Deadlock its halt() raises (SimulationScheduler::halt falls
// through to Scheduler::halt's report) is kept and resolved by releasing `never`, so that the
// run ends normally instead of abandoning the threads (whose stacks are dropped unwound).
class ReportingScheduler final : public SimulationScheduler {
 public:
  ReportingScheduler(std::unique_ptr<ThreadPool> inner, Semaphore& never, Findings& findings)
      : SimulationScheduler(std::move(inner)), never_(never), findings_(findings) {}

  void halt() override {
    try {
      SimulationScheduler::halt();
    } catch (const Deadlock& d) {
      if (++findings_.deadlocks > 1) throw;
      findings_.report = d.what();
      for (const auto& b : d.blocked()) findings_.waits.push_back(b.thread + " waits on " + b.waiting_on);
      never_.release();  // wakes the quitter: run() goes on
    }
  }

 private:
  Semaphore& never_;
  Findings& findings_;
};

}  // namespace

TEST_CASE("a cancelled LP stuck on another object is in the runtime's Deadlock report, beside the LP waiting for it",
          "[psim][cancel]") {
  auto cfg = GENERATE(presto::test::configs());
  for (Protocol protocol : kProtocols) {
    INFO(cfg << ", " << to_string(protocol));
    Semaphore never{0, "never"};
    Latch cancelled{1, "cancelled"};
    Findings found;
    // Once the quitter is cancelled (its message to the echo at t=5 delivered), the echo sends
    // it t=3: the earliest message, held by an LP out of receive. The echo's t=5 cannot be
    // granted (the quitter may still receive t=3 and answer at t=4), so both stay blocked.
    Simulation sim{{.protocol = protocol, .end_time = 10}};
    auto& q = sim.add<Quitter>("quitter", 5.0, Quitter::After::block, &cancelled, &never);
    auto& e = sim.add<Echo>("echo", &cancelled, 3.0);
    sim.connect(q, e, 1.0);
    sim.connect(e, q, 1.0);
    SimulationStats stats = presto::test::run(cfg, [&] {
      return sim.run(std::make_unique<ReportingScheduler>(presto::test::make_pool(cfg.pool), never, found));
    });
    INFO(found.report);
    CHECK(found.deadlocks == 1);
    const auto has = [&](const char* thread, const char* object) {
      return std::any_of(found.waits.begin(), found.waits.end(), [&](const std::string& w) {
        return w.find(thread) != std::string::npos && w.find(object) != std::string::npos;
      });
    };
    CHECK(has("thread 'quitter'", "semaphore 'never'"));
    CHECK(has("thread 'echo'", "psim link 'quitter->echo'"));
    CHECK_THAT(found.report, !Contains("psim scheduler"));
    // Released, the quitter returned: its output closed, the echo received t=5; the quitter
    // never received the echo's t=3, and that is counted.
    CHECK(e.times == std::vector<Time>{5.0});
    CHECK(stats.processes[0].unreceived == 1);
    CHECK(stats.processes[0].cancellations == 1);
  }
}
