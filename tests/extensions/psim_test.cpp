// PSIM: every LP's history is the sequential simulator's, on 1, 2 and 4 processors, under
// every inner pool, with either protocol; a closed queueing network agrees with exact MVA;
// deadlocks are broken and counted; misuse is reported.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <presto/psim/detail/ready_yield_gate.hpp>
#include <presto/psim/mva.hpp>
#include <presto/psim/phold.hpp>
#include <presto/psim/queueing_network.hpp>
#include <presto/psim/sequential_simulator.hpp>
#include <presto/psim/simulation.hpp>
#include <presto/psim/simulation_pool.hpp>
#include <presto/testing/pool_conformance.hpp>

#include "psim_test_models.hpp"
#include "test_support.hpp"

using namespace presto;
using namespace presto::psim;
using namespace psim_test;

namespace {

// A model full of simultaneous events and zero-delay messages: delays are 0, 1 or 2.
class TieProcess final : public LogicalProcess {
 public:
  TieProcess(std::string name, std::uint32_t index) : LogicalProcess(std::move(name)), random_(99, index) {}
  std::vector<HistoryEntry> history;

 protected:
  void initialize() override { schedule(Message{.value = index()}, 1); }
  void handle(const Message& m) override {
    history.push_back({m.time, m.source, m.value});
    Time delay = static_cast<Time>(random_.below(3));
    if (random_.uniform() < 0.6) {
      send(*outputs()[random_.below(outputs().size())], Message{.value = m.value}, delay);
    } else {
      schedule(Message{.value = m.value}, delay == 0 ? 1 : delay);
    }
  }

 private:
  Random random_;
};

void build_ties(Simulation& sim) {
  std::vector<TieProcess*> lps;
  for (std::uint32_t i = 0; i < 5; ++i) lps.push_back(&sim.add<TieProcess>("tie-" + std::to_string(i), i));
  for (auto* a : lps) {
    for (auto* b : lps) {
      if (a != b) sim.connect(*a, *b, 0);
    }
  }
}

Histories tie_histories(const Simulation& sim) {
  Histories h;
  for (std::size_t i = 0; i < sim.size(); ++i) h.push_back(static_cast<TieProcess&>(sim.process(i)).history);
  return h;
}

QueueingNetworkConfig network(std::uint64_t seed, Time warmup) {
  return QueueingNetworkConfig{
      .stations = {{"terminals", 4.0, true}, {"cpu", 0.5, false}, {"disk1", 0.8, false}, {"disk2", 0.6, false}},
      .classes = {{"batch", 4, {0, 1, 2}}, {"interactive", 3, {0, 1, 3}}},
      .transit = 0.05,
      .warmup = warmup,
      .seed = seed,
      .record = warmup == 0,
  };
}

}  // namespace

TEST_CASE("PHOLD histories equal the sequential simulator's in every configuration", "[psim]") {
  const Time end = 60;
  const Time lookahead = GENERATE(0.0, 0.5);
  {
    Simulation reference{{.end_time = end}};
    build_phold(reference, phold_config(lookahead));
    SimulationStats seq = SequentialSimulator{reference}.run();
    const Histories expected = phold_histories(reference);
    REQUIRE(seq.events > 500);

    auto cfg = GENERATE(presto::test::configs());
    for (Protocol protocol : kProtocols) {
      INFO(cfg << ", " << to_string(protocol) << ", lookahead " << lookahead);
      auto [histories, stats] = presto::test::run(cfg, [&] {
        Simulation sim{{.protocol = protocol, .end_time = end}};
        build_phold(sim, phold_config(lookahead));
        SimulationStats s = sim.run(presto::test::make_pool(cfg.pool));
        return std::pair{phold_histories(sim), s};
      });
      CHECK(histories == expected);
      CHECK(stats.events == seq.events);
      // An LP held back yields instead of sleeping only under null messages: on one processor
      // always (with lookahead, PHOLD's LPs are held back there often), on more while its
      // sender runs (Simulation::yields_instead; the next test case).
      if (protocol == Protocol::deadlock_recovery) {
        CHECK(stats.yields == 0);
      } else if (cfg.processors == 1 && lookahead > 0) {
        CHECK(stats.yields > 0);
      }
      if (protocol == Protocol::deadlock_recovery) {
        CHECK(stats.null_messages == 0);
        CHECK(stats.partial_deadlocks > 0);  // broken by the SimulationPool's get()
        // With lookahead, a break restarts every LP with a message in the window it proves
        // safe, not one: far fewer breaks than events.
        if (lookahead > 0) CHECK(stats.deadlocks() * 2 < stats.events);
      } else if (lookahead > 0) {
        CHECK(stats.null_messages > 0);
        CHECK(stats.total_deadlocks == 0);
      }
    }
  }
}

TEST_CASE("PHOLD histories stay the sequential simulator's while the processor count changes", "[psim]") {
  // Null messages pull every input at a horizon scan on one processor and only the owed ones
  // on more (Simulation::refresh_horizon reads the count at each scan): a thread switches the
  // count between 1 and 3 all through the run, so LPs scan both ways, and between scans.
  // (Not deadlock recovery: a thread that is always ready keeps the pool from ever finding
  // nothing to run, which is when it breaks a partial deadlock, so that model would wait for
  // the switcher to give up.)
  const Time end = 60;
  Simulation reference{{.end_time = end}};
  build_phold(reference, phold_config(0.5));
  SimulationStats seq = SequentialSimulator{reference}.run();
  const Histories expected = phold_histories(reference);
  INFO("seed " << presto::test::seed());
  presto::Runtime rt{presto::RuntimeConfig{.processors = 1, .seed = presto::test::seed()}};
  std::atomic<bool> done{false};
  std::uint64_t switches = 0;
  auto [histories, stats] = rt.run([&] {
    auto switcher = presto::fork([&] {
      for (std::uint64_t i = 0; i < 100'000 && !done.load(std::memory_order_acquire); ++i) {
        rt.set_processors(i % 2 == 0 ? 3 : 1);
        ++switches;
        presto::this_thread::yield();
      }
    });
    Simulation sim{{.protocol = Protocol::null_messages, .end_time = end}};
    build_phold(sim, phold_config(0.5));
    SimulationStats s = sim.run();
    done.store(true, std::memory_order_release);
    switcher.join();
    rt.set_processors(1);
    return std::pair{phold_histories(sim), s};
  });
  CHECK(histories == expected);
  CHECK(stats.events == seq.events);
  CHECK(stats.null_messages > 0);
  CHECK(switches >= 2);  // the count did change while the model ran
}

TEST_CASE("simultaneous and zero-delay events are ordered the same everywhere", "[psim]") {
  const Time end = 40;
  Simulation reference{{.end_time = end}};
  build_ties(reference);
  SequentialSimulator{reference}.run();
  const Histories expected = tie_histories(reference);
  REQUIRE(expected[0].size() > 10);

  auto cfg = GENERATE(presto::test::configs());
  for (Protocol protocol : kProtocols) {
    INFO(cfg << ", " << to_string(protocol));
    auto [histories, stats] = presto::test::run(cfg, [&] {
      Simulation sim{{.protocol = protocol, .end_time = end}};
      build_ties(sim);
      SimulationStats s = sim.run(presto::test::make_pool(cfg.pool));
      return std::pair{tie_histories(sim), s};
    });
    CHECK(histories == expected);
    if (protocol == Protocol::null_messages) {
      // Zero lookahead: null messages cannot advance past a tie; the scheduler's halt breaks
      // the total deadlock that follows (the pool leaves null-message runs alone).
      CHECK(stats.partial_deadlocks == 0);
      CHECK(stats.total_deadlocks > 0);
    }
  }
}

TEST_CASE("a queueing network's station histories equal the sequential simulator's", "[psim]") {
  const Time end = 200;
  const QueueingNetworkConfig net = network(7, 0);
  const Histories reference = sequential_station_histories(net, end);
  auto cfg = GENERATE(presto::test::configs());
  for (Protocol protocol : kProtocols) {
    INFO(cfg << ", " << to_string(protocol));
    CHECK(psim_station_histories(cfg, protocol, net, end) == reference);
  }
}

TEST_CASE("a closed queueing network agrees with exact MVA within confidence intervals", "[psim]") {
  const Time warmup = 100, end = 2100;
  const int replications = 10;
  const QueueingNetworkConfig shape = network(1, warmup);
  const MvaResult exact = exact_mva(mva_model(shape));
  const std::size_t C = shape.classes.size(), K = shape.stations.size();

  std::vector<NetworkMeasures> runs;
  for (int r = 0; r < replications; ++r) {
    const QueueingNetworkConfig net = network(1000 + static_cast<std::uint64_t>(r), warmup);
    runs.push_back(presto::test::run({.processors = 2}, [&] {
      Simulation sim{{.protocol = r % 2 == 0 ? Protocol::null_messages : Protocol::deadlock_recovery, .end_time = end}};
      std::vector<Station*> stations;
      build_queueing_network(sim, net, stations);
      sim.run();
      return measure(net, stations, end);
    }));
  }
  // 99% Student-t interval over independent replications (t(0.995, 9) = 3.25).
  auto check_interval = [&](const char* what, double mva, auto sample) {
    double mean = 0, var = 0;
    for (int r = 0; r < replications; ++r) mean += sample(runs[static_cast<std::size_t>(r)]) / replications;
    for (int r = 0; r < replications; ++r) var += std::pow(sample(runs[static_cast<std::size_t>(r)]) - mean, 2) / (replications - 1);
    double half = 3.25 * std::sqrt(var / replications);
    INFO(what << ": simulated " << mean << " +- " << half << ", exact MVA " << mva);
    CHECK(std::abs(mean - mva) <= half);
  };
  for (std::size_t c = 0; c < C; ++c) {
    check_interval("throughput", exact.throughput[c], [c](const NetworkMeasures& m) { return m.throughput[c]; });
    for (std::size_t k = 0; k < K; ++k) {
      if (exact.queue[c][k] == 0) continue;
      check_interval("queue length", exact.queue[c][k], [c, k](const NetworkMeasures& m) { return m.queue[c][k]; });
    }
  }
}

TEST_CASE("exact MVA matches a hand-solved network; Schweitzer approximates it", "[psim]") {
  // One class, two customers, two queues of demand 1: by symmetry X = 2/3, Q = 1 each.
  MvaModel m{.delay_station = {false, false}, .demand = {{1.0, 1.0}}, .population = {2}, .think = {}};
  MvaResult r = exact_mva(m);
  CHECK(r.throughput[0] == Approx(2.0 / 3.0));
  CHECK(r.queue[0][0] == Approx(1.0));
  MvaResult s = schweitzer_mva(m);
  CHECK(s.throughput[0] == Approx(r.throughput[0]).epsilon(0.1));
  // The multi-class network of the simulation test: Schweitzer within 10% of exact.
  MvaModel net = mva_model(network(1, 100));
  MvaResult e = exact_mva(net), a = schweitzer_mva(net);
  for (std::size_t c = 0; c < e.throughput.size(); ++c) CHECK(a.throughput[c] == Approx(e.throughput[c]).epsilon(0.1));
}

namespace {

// Process style: two sources with interleaved times, one sink that must see them merged.
class Source final : public LogicalProcess {
 public:
  Source(std::string name, Time first) : LogicalProcess(std::move(name)), first_(first) {}

 protected:
  void body() override {
    Link& out = *outputs().front();
    for (int i = 0; i < 50; ++i) send(out, Message{.value = i}, i == 0 ? first_ : 2.0);
  }

 private:
  Time first_;
};

class Sink final : public LogicalProcess {
 public:
  using LogicalProcess::LogicalProcess;
  std::vector<Time> times;

 protected:
  void body() override {
    while (auto m = receive()) times.push_back(m->time);
  }
};

// Sends one message after spinning for `busy` of wall time in initialize().
class SlowSender final : public LogicalProcess {
 public:
  SlowSender(std::string name, std::chrono::milliseconds busy) : LogicalProcess(std::move(name)), busy_(busy) {}

 protected:
  void initialize() override {
    // Asleep first, having made no progress: a receiver that yielded on us (null messages, one
    // processor) finds our bound unchanged and sleeps before we start.
    presto::this_thread::sleep_for(std::chrono::milliseconds(1));
    const auto until = std::chrono::steady_clock::now() + busy_;
    while (std::chrono::steady_clock::now() < until) {
    }
    send(*outputs().front(), Message{}, 1.0);
  }

 private:
  std::chrono::milliseconds busy_;
};

class PastSender final : public LogicalProcess {
 public:
  using LogicalProcess::LogicalProcess;

 protected:
  void initialize() override { send(*outputs().front(), Message{}, 0.5); }  // lookahead is 1
};

// Tries each delay on schedule() and on its first output link (lookahead 1) and keeps what
// each attempt said: "ok" or the UsageError's message.
class DelayProbe final : public LogicalProcess {
 public:
  using LogicalProcess::LogicalProcess;
  std::vector<std::string> scheduled, sent;

 protected:
  void initialize() override {
    for (Time d : {0.0, 2.5, -0.5, std::nan(""), HUGE_VAL, -HUGE_VAL}) {
      scheduled.push_back(attempt([&] { schedule(Message{}, d); }));
    }
    for (Time d : {1.0, 0.999, std::nan(""), HUGE_VAL}) {
      sent.push_back(attempt([&] { send(*outputs().front(), Message{}, d); }));
    }
  }

 private:
  template <class F>
  static std::string attempt(F f) {
    try {
      f();
      return "ok";
    } catch (const UsageError& e) {
      return e.what();
    }
  }
};

}  // namespace

TEST_CASE("a delay that is not a finite time at or past the lookahead is refused; the boundary is not", "[psim]") {
  Simulation sim{{.end_time = 10}};
  auto& probe = sim.add<DelayProbe>("probe");
  auto& sink = sim.add<Sink>("sink");
  sim.connect(probe, sink, 1.0);
  SequentialSimulator{sim}.run();
  REQUIRE(probe.scheduled.size() == 6);
  CHECK(probe.scheduled[0] == "ok");  // to itself: no lookahead, so 0 is allowed
  CHECK(probe.scheduled[1] == "ok");
  CHECK_THAT(probe.scheduled[2],
             Catch::Matchers::Contains("'probe' sent a message into the past: delay -0.5 at time 0"));
  CHECK_THAT(probe.scheduled[3], Catch::Matchers::Contains("delay nan"));
  CHECK_THAT(probe.scheduled[4], Catch::Matchers::Contains("delay inf"));
  CHECK_THAT(probe.scheduled[5], Catch::Matchers::Contains("delay -inf"));
  REQUIRE(probe.sent.size() == 4);
  CHECK(probe.sent[0] == "ok");  // exactly the lookahead
  CHECK_THAT(probe.sent[1], Catch::Matchers::Contains("delay 0.999 at time 0 on psim link 'probe->sink' (lookahead 1)"));
  CHECK_THAT(probe.sent[2], Catch::Matchers::Contains("delay nan"));
  CHECK_THAT(probe.sent[3], Catch::Matchers::Contains("delay inf"));
  // Only the accepted ones were queued: two scheduled, one sent, every one before the end.
  CHECK(probe.stats().scheduled == 2);
  CHECK(probe.stats().messages_sent == 1);
  CHECK(probe.stats().events == 2);
  CHECK(sink.stats().events == 1);
}

TEST_CASE("receive merges input links in timestamp order (process style)", "[psim]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  std::vector<Time> times = presto::test::run(cfg, [&] {
    Simulation sim{{.end_time = 1000}};
    auto& a = sim.add<Source>("a", 1.0);
    auto& b = sim.add<Source>("b", 1.5);
    auto& sink = sim.add<Sink>("sink");
    sim.connect(a, sink, 1.0);
    sim.connect(b, sink, 1.0);
    sim.run(presto::test::make_pool(cfg.pool));
    return sink.times;
  });
  // Every send of a source happens at its time 0: all its messages go out at 1.0 (or 1.5),
  // then 2.0 for the rest; the sink sees all 100, sorted.
  CHECK(times.size() == 100);
  CHECK(std::is_sorted(times.begin(), times.end()));
}

TEST_CASE("an LP's blocked time is the wall time it slept in receive(), when measured", "[psim]") {
  // One processor, FIFO: the sink (added first) runs first and sleeps on its input until the
  // sender, after a short sleep and 20 ms of work, sends; so it sleeps at least those 20 ms,
  // and no longer than the run. Under null messages it first yields once (the sender may be
  // about to move: Simulation::yields_instead), then sleeps, the sender's bound unchanged.
  // Unmeasured (SimulationConfig::measure_blocked_time off, the default), it reads 0.
  const auto busy = std::chrono::milliseconds(20);
  for (Protocol protocol : kProtocols) {
    INFO(to_string(protocol));
    presto::test::Config cfg{1, presto::test::PoolKind::fifo};
    const auto run = [&](bool measured) {
      return presto::test::run(cfg, [&] {
        Simulation sim{{.protocol = protocol, .end_time = 10, .measure_blocked_time = measured}};
        auto& sink = sim.add<Sink>("sink");
        auto& sender = sim.add<SlowSender>("sender", busy);
        sim.connect(sender, sink, 1.0);
        SimulationStats s = sim.run(presto::test::make_pool(cfg.pool));
        return std::pair{s, sink.times};
      });
    };
    const SimulationStats unmeasured = run(false).first;
    CHECK(unmeasured.processes[0].blocks >= 1);
    CHECK(unmeasured.blocked_time.count() == 0);
    auto [stats, sink_times] = run(true);
    CHECK(sink_times.size() == 1);
    const ProcessStats& sink = stats.processes[0];
    REQUIRE(sink.blocks >= 1);
    CHECK(sink.yields == (protocol == Protocol::null_messages ? 1U : 0U));
    CHECK(sink.blocked_time >= busy);
    CHECK(sink.blocked_time.count() <= static_cast<std::int64_t>(stats.seconds * 1e9 * 1.05) + 1000);
    CHECK(stats.blocked_time == sink.blocked_time + stats.processes[1].blocked_time);
  }
}

// A sink that starts receiving once `go` is set, yielding until then (never asleep before
// its receive: a sleep in receive() is then its only one).
class GoSink final : public LogicalProcess {
 public:
  GoSink(std::string name, const std::atomic<bool>& go) : LogicalProcess(std::move(name)), go_(go) {}
  std::vector<Time> times;

 protected:
  void initialize() override {
    while (!go_.load(std::memory_order_acquire)) presto::this_thread::yield();
  }
  void handle(const Message& m) override { times.push_back(m.time); }

 private:
  const std::atomic<bool>& go_;
};

// Sends one message once released: spinning until then (running all along), or asleep on a
// semaphore.
class HeldSender final : public LogicalProcess {
 public:
  HeldSender(std::string name, bool spin, const std::atomic<bool>& released, presto::Semaphore& wake)
      : LogicalProcess(std::move(name)), spin_(spin), released_(released), wake_(wake) {}

 protected:
  void initialize() override {
    if (spin_) {
      while (!released_.load(std::memory_order_acquire)) {
      }
    } else {
      wake_.acquire();
    }
    send(*outputs().front(), Message{}, 1.0);
  }

 private:
  bool spin_;
  const std::atomic<bool>& released_;
  presto::Semaphore& wake_;
};

// An LP with nothing to do: it ends at once, its outputs closed.
class Idle final : public LogicalProcess {
 public:
  using LogicalProcess::LogicalProcess;

 protected:
  void handle(const Message&) override {}
};

TEST_CASE("on several processors a held-back LP yields while its sender runs and to a ready one if it has many inputs", "[psim]") {
  // Null messages on 2 processors: the sink and a helper thread on processor 0, the sender on
  // processor 1. The helper lets the sink receive only once the sender spins (runs), sleeps, or
  // waits in the ready pool behind a spinner that holds processor 1, and releases the sender
  // only once the sink sleeps, so the sender's state is known when the sink finds its input
  // held back: running, the sink yields once (the sender's bound has not moved when it looks
  // again), then sleeps; asleep, it sleeps at once; ready, it yields once if it has more than
  // Simulation::kMoveScan inputs (its others from LPs that have ended), else sleeps at once.
  enum class Sender { runs, sleeps, ready };
  for (const Sender mode : {Sender::runs, Sender::sleeps, Sender::ready}) {
    for (const std::size_t inputs : {std::size_t{1}, Simulation::kMoveScan + 1}) {
      INFO((mode == Sender::runs ? "the sender runs" : mode == Sender::sleeps ? "the sender sleeps" : "the sender is ready")
           << ", the sink has " << inputs << " inputs");
      presto::Runtime rt{{.processors = 2}};
      const auto [sink_stats, times, first_yields] = rt.run([&] {
        Simulation sim{{.protocol = Protocol::null_messages, .end_time = 10}};
        std::atomic<bool> go{false}, released{false}, spin{true};
        std::uint64_t yields_before_sleep = 0;
        presto::Semaphore wake{0};
        auto& sink = sim.add<GoSink>("sink", go);
        auto& sender = sim.add<HeldSender>("sender", mode == Sender::runs, released, wake);
        sim.connect(sender, sink, 1.0);
        std::vector<Idle*> ended;
        for (std::size_t k = 1; k < inputs; ++k) {
          ended.push_back(&sim.add<Idle>("idle " + std::to_string(k)));
          sim.connect(*ended.back(), sink, 1.0);
          ended.back()->set_affinity(0);
        }
        sink.set_affinity(0);
        sender.set_affinity(1);
        auto helper = presto::fork(ThreadAttributes{.affinity = 0}, [&] {
          const ThreadState awaited = mode == Sender::runs ? ThreadState::running : ThreadState::blocked;
          while (sender.state() != awaited) presto::this_thread::yield();
          std::optional<JoinHandle<void>> spinner;
          if (mode == Sender::ready) {  // processor 1 held while the sender is made ready there
            spinner = presto::fork(ThreadAttributes{.affinity = 1}, [&] {
              while (spin.load(std::memory_order_acquire)) {
              }
            });
            while (spinner->thread().state() != ThreadState::running) presto::this_thread::yield();
            wake.release();
            while (sender.state() != ThreadState::ready) presto::this_thread::yield();
          }
          for (Idle* lp : ended) {
            while (lp->state() != ThreadState::terminated) presto::this_thread::yield();
          }
          go.store(true, std::memory_order_release);
          while (sink.state() != ThreadState::blocked) presto::this_thread::yield();
          // Its yields before this first sleep: once released, the sender may still be
          // running, about to end, when the sink looks again, and the sink may yield then too.
          yields_before_sleep = sink.stats().yields;
          if (mode == Sender::runs) {
            released.store(true, std::memory_order_release);
          } else if (mode == Sender::sleeps) {
            wake.release();
          } else {
            spin.store(false, std::memory_order_release);
            spinner->join();
          }
        });
        SimulationStats s = sim.run();
        helper.join();
        return std::tuple{s.processes[0], sink.times, yields_before_sleep};
      });
      CHECK(times == std::vector<Time>{1.0});
      CHECK(sink_stats.blocks >= 1);
      const bool yields = mode == Sender::runs || (mode == Sender::ready && inputs > Simulation::kMoveScan);
      CHECK(first_yields == (yields ? 1U : 0U));
    }
  }
}

TEST_CASE("an LP stops yielding to ready senders after 4 wasted yields in a row and tries again later", "[psim]") {
  // Simulation::yields_instead asks an LP's gate before yielding to a ready sender, and tells
  // it whether the sender had moved when the yield returned.
  using Gate = presto::psim::detail::ReadyYieldGate;
  Gate gate;
  const auto miss = [&](int times) {
    for (int i = 0; i < times; ++i) {
      REQUIRE(gate.open());
      gate.note(false);
    }
  };
  const auto shut_for = [&] {  // asks refused before one is let through
    int refused = 0;
    while (!gate.open() && refused <= Gate::kSkips) ++refused;
    return refused;
  };
  miss(Gate::kMisses - 1);
  REQUIRE(gate.open());
  gate.note(true);  // a yield that let the sender move: the count starts again
  miss(Gate::kMisses - 1);
  CHECK(gate.open());
  gate.note(false);  // the fourth in a row
  CHECK(shut_for() == Gate::kSkips);
  gate.note(false);  // the one let through was wasted too: shut again
  CHECK(shut_for() == Gate::kSkips);
  gate.note(true);  // this time it paid: open from now on
  for (int i = 0; i < 3 * Gate::kSkips; ++i) REQUIRE(gate.open());
}

// Handles one event, scheduled to itself at `at`.
class SelfTimed final : public LogicalProcess {
 public:
  SelfTimed(std::string name, Time at) : LogicalProcess(std::move(name)), at_(at) {}
  std::vector<Time> times;

 protected:
  void initialize() override { schedule(Message{}, at_); }
  void handle(const Message& m) override { times.push_back(m.time); }

 private:
  Time at_;
};

// Ticks at `first`, first + 1, ... up to `last` (events to itself) and sends nothing: only its
// bound moves. Each tick before an LP's `below` first waits (bounded) until that LP sleeps, so
// that the null message of the next tick finds it asleep; each tick ends with a yield, so that
// tickers sharing a processor take turns.
class Ticker final : public LogicalProcess {
 public:
  struct Sleeper {
    const LogicalProcess* lp;
    Time below;
  };
  Ticker(std::string name, Time last, std::vector<Sleeper> sleepers, Time first = 1.0)
      : LogicalProcess(std::move(name)), first_(first), last_(last), sleepers_(std::move(sleepers)) {}
  std::uint64_t waits_run_out = 0;

 protected:
  void initialize() override { schedule(Message{}, first_); }
  void handle(const Message& m) override {
    for (const Sleeper& s : sleepers_) {
      if (m.time >= s.below) continue;
      std::uint64_t spins = 0;
      while (s.lp->state() != ThreadState::blocked && ++spins < 200'000'000) {
      }
      waits_run_out += static_cast<std::uint64_t>(spins == 200'000'000);
    }
    if (m.time + 1.0 <= last_) schedule(Message{}, 1.0);
    presto::this_thread::yield();
  }

 private:
  Time first_;
  Time last_;
  std::vector<Sleeper> sleepers_;
};

TEST_CASE("a null message that leaves its receiver held back by the same link is taken asleep and passed on",
          "[psim]") {
  // Null messages on 2 processors. The relay (processor 0) has its event at 50 and two inputs:
  // from the ticker (processor 1; lookahead 1), whose bound moves a tick at a time, and from
  // an LP that ends at once (lookahead 100). The tail (processor 0) has its event at 30 and
  // waits on the relay (lookahead 1). Each tick's null message finds the relay asleep and still
  // held back by the ticker's link below 50: it raises that link's clock and the relay's bound
  // without waking it, and passes the bound on to the tail, which it also finds asleep and held
  // back, below 30. So each wakes only when its event is safe, or to end: no rewait.
  presto::Runtime rt{{.processors = 2}};
  const auto [stats, relay_times, tail_times, runs_out] = rt.run([&] {
    Simulation sim{{.protocol = Protocol::null_messages, .end_time = 100}};
    auto& relay = sim.add<SelfTimed>("relay", 50.0);
    auto& tail = sim.add<SelfTimed>("tail", 30.0);
    auto& ended = sim.add<Sink>("ended");
    auto& ticker = sim.add<Ticker>("ticker", 60.0, std::vector<Ticker::Sleeper>{{&relay, 49.0}, {&tail, 28.0}});
    sim.connect(ticker, relay, 1.0);
    sim.connect(ended, relay, 100.0);
    sim.connect(relay, tail, 1.0);
    relay.set_affinity(0);
    tail.set_affinity(0);
    ended.set_affinity(0);
    ticker.set_affinity(1);
    SimulationStats s = sim.run();
    return std::tuple{s, relay.times, tail.times, ticker.waits_run_out};
  });
  CHECK(relay_times == std::vector<Time>{50.0});
  CHECK(tail_times == std::vector<Time>{30.0});
  CHECK(runs_out == 0);
  CHECK(stats.deadlocks() == 0);
  const ProcessStats& relay = stats.processes[0];
  const ProcessStats& tail = stats.processes[1];
  INFO("relay: " << relay.passed_on << " passed on, " << relay.blocks << " blocks; tail: " << tail.passed_on
                 << " passed on, " << tail.blocks << " blocks");
  CHECK(relay.passed_on >= 40);
  CHECK(tail.passed_on >= 20);
  CHECK(relay.rewaits == 0);
  CHECK(tail.rewaits == 0);
  CHECK(stats.passed_on == relay.passed_on + tail.passed_on);
}

TEST_CASE("a receiver that a null message leaves held back by another link is moved to it asleep", "[psim]") {
  // As above, with two tickers taking turns on processor 1 and feeding the relay (processor 0),
  // at 1, 2, 3, ... and at 1.5, 2.5, ...: each tick's null message raises the link the relay
  // sleeps on above the other, which holds it back from then on. The relay has two inputs (at
  // most Simulation::kMoveScan): the sender refreshes its horizon and moves its sleep to the
  // other link, and it wakes for its event at 50 and to end. One ticker's end may wake it
  // while the other still holds it back, once (ThreadSanitizer's runs: the second ticker ended
  // with the relay asleep on its link, the first's link at 61). Without the moves it was
  // woken, and slept again, at every tick (98 rewaits).
  presto::Runtime rt{{.processors = 2}};
  const auto [stats, relay_times, runs_out] = rt.run([&] {
    Simulation sim{{.protocol = Protocol::null_messages, .end_time = 100}};
    auto& relay = sim.add<SelfTimed>("relay", 50.0);
    auto& first = sim.add<Ticker>("first", 60.0, std::vector<Ticker::Sleeper>{{&relay, 49.0}});
    auto& second = sim.add<Ticker>("second", 60.0, std::vector<Ticker::Sleeper>{{&relay, 49.0}}, 1.5);
    sim.connect(first, relay, 1.0);
    sim.connect(second, relay, 1.0);
    relay.set_affinity(0);
    first.set_affinity(1);
    second.set_affinity(1);
    SimulationStats s = sim.run();
    return std::tuple{s, relay.times, first.waits_run_out + second.waits_run_out};
  });
  CHECK(relay_times == std::vector<Time>{50.0});
  CHECK(runs_out == 0);
  CHECK(stats.deadlocks() == 0);
  const ProcessStats& relay = stats.processes[0];
  INFO("relay: " << relay.passed_on << " passed on, " << relay.blocks << " blocks");
  CHECK(relay.passed_on >= 80);
  CHECK(relay.rewaits <= 1);
}

TEST_CASE("rewaits counts an LP's sleeps right after a wake-up that left its next message unsafe", "[psim]") {
  // One processor, FIFO, deadlock recovery. The sink (added first) runs first and sleeps on the
  // first of its two inputs (both clocks 1). Source a sends its 50 messages and ends: the first
  // delivery wakes the sink. The slow sender sleeps 1 ms before it sends; the sink runs
  // meanwhile, finds that input's clock still 1, below its earliest message (2.0), and sleeps
  // again, on it: a rewait. The slow sender's message and end wake it for good.
  presto::test::Config cfg{1, presto::test::PoolKind::fifo};
  auto [stats, sink_times] = presto::test::run(cfg, [&] {
    Simulation sim{{.protocol = Protocol::deadlock_recovery, .end_time = 1000}};
    auto& sink = sim.add<Sink>("sink");
    auto& a = sim.add<Source>("a", 5.0);
    auto& slow = sim.add<SlowSender>("slow", std::chrono::milliseconds(0));
    sim.connect(a, sink, 1.0);
    sim.connect(slow, sink, 1.0);
    SimulationStats s = sim.run(presto::test::make_pool(cfg.pool));
    return std::pair{s, sink.times};
  });
  CHECK(sink_times.size() == 51);
  CHECK(std::is_sorted(sink_times.begin(), sink_times.end()));
  const ProcessStats& sink = stats.processes[0];
  CHECK(sink.blocks == 2);
  CHECK(sink.rewaits == 1);
  CHECK(stats.rewaits == 1);
  CHECK(stats.blocks == 2);
}

TEST_CASE("sending into the past and other misuse raise UsageError naming the LP", "[psim]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  std::string message = presto::test::run(cfg, [&] {
    Simulation sim{{.end_time = 10}};
    auto& p = sim.add<PastSender>("hasty");
    auto& sink = sim.add<Sink>("sink");
    sim.connect(p, sink, 1.0);
    try {
      sim.run(presto::test::make_pool(cfg.pool));
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  });
  CHECK(message.find("'hasty'") != std::string::npos);
  CHECK(message.find("into the past") != std::string::npos);

  Simulation seq{{.end_time = 10}};
  auto& a = seq.add<Sink>("a");
  auto& b = seq.add<Sink>("b");
  Link& ab = seq.connect(a, b, 1.0);
  CHECK_THROWS_AS(seq.connect(a, a, 1.0), UsageError);
  CHECK_THROWS_WITH(seq.connect(b, a, std::nan("")), Catch::Matchers::Contains("lookahead nan on 'b->a'"));
  CHECK_THROWS_WITH(seq.connect(b, a, -0.5), Catch::Matchers::Contains("lookahead -0.5 on 'b->a'"));
  CHECK_THROWS_WITH(seq.connect(b, a, HUGE_VAL), Catch::Matchers::Contains("lookahead inf on 'b->a'"));
  CHECK_THROWS_AS(b.send(ab, Message{}, 1.0), UsageError);  // not running
  SequentialSimulator{seq}.run();  // runs initialize() and handle() only: nothing happens
  CHECK_THROWS_AS(SequentialSimulator{seq}.run(), UsageError);  // a simulation runs once
}

namespace {

class Observer final : public LogicalProcess {
 public:
  using LogicalProcess::LogicalProcess;
  std::string scheduler, pool, misuse;

 protected:
  void body() override {
    scheduler = std::string(Runtime::current()->scheduler().name());
    pool = std::string(Runtime::current()->scheduler().pool().name());
    Link& theirs = *inputs().front();  // an input link: not ours to send on
    try {
      send(theirs, Message{}, 1.0);
    } catch (const UsageError& e) {
      misuse = e.what();
    }
  }
};

}  // namespace

TEST_CASE("Simulation::run installs PSIM's scheduler and pool on the running runtime, then restores them",
          "[psim]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  auto [inside, after, misuse] = presto::test::run(cfg, [&] {
    Simulation sim{{.end_time = 10}};
    auto& a = sim.add<Observer>("observer");
    auto& b = sim.add<Sink>("other");
    sim.connect(b, a, 1.0);
    const std::string before = std::string(Runtime::current()->scheduler().pool().name());
    sim.run(presto::test::make_pool(cfg.pool));
    const Scheduler& now = Runtime::current()->scheduler();
    std::string restored = std::string(now.name()) + " / " + std::string(now.pool().name());
    if (before != now.pool().name()) restored += " (was " + before + ")";
    return std::tuple{a.scheduler + " / " + a.pool, restored, a.misuse};
  });
  const std::string pool_name{presto::test::make_pool(cfg.pool)->name()};
  CHECK(inside == "psim scheduler / psim(" + pool_name + ")");
  CHECK(after == "scheduler / " + pool_name);
  CHECK(misuse.find("'observer'") != std::string::npos);
  CHECK(misuse.find("not one of its output links") != std::string::npos);
}

TEST_CASE("SimulationPool keeps the ThreadPool contract around every inner pool", "[psim]") {
  // Outside a simulation's deadlocks it is its inner pool: the conformance harness checks that
  // no thread is lost or duplicated, also across live replacement.
  for (auto kind : {presto::test::PoolKind::fifo, presto::test::PoolKind::lifo, presto::test::PoolKind::priority,
                    presto::test::PoolKind::local_queue, presto::test::PoolKind::shuffle}) {
    INFO("inner pool " << presto::test::name(kind) << ", seed " << presto::test::seed());
    CHECK_NOTHROW(presto::testing::check_pool_conformance(
        [&] { return std::make_unique<SimulationPool>(presto::test::make_pool(kind)); },
        {.threads = presto::test::scaled(400), .yields = 8, .pairs = 16, .rounds = 50, .replacements = 20,
         .seed = presto::test::seed()}));
  }
}
