// PSIM's scheduler hooks: the user-written schedulers of apps/psim_schedulers (lowest timestamp
// first, Chandy-Misra's minimal grant, a YAWNS-style window) give every LP the sequential
// simulator's history on 1, 2 and 4 processors with both protocols, also when the scheduler
// is replaced while the model runs; a scheduler that throws, grants an unsafe message or
// leaves a deadlock unresolved ends the run with a SchedulerError naming it and the LP.

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <presto/psim/phold.hpp>
#include <presto/psim/sequential_simulator.hpp>
#include <presto/psim/simulation.hpp>
#include <presto/psim/simulation_scheduler.hpp>
#include <presto/testing/pool_conformance.hpp>

#include "captured_log.hpp"
#include "psim_schedulers.hpp"
#include "psim_test_models.hpp"
#include "test_support.hpp"

using namespace presto;
using namespace presto::psim;
using namespace psim_test;

namespace {

// PHOLD-like, with a callback every `every` events of LP 0 (the PSIM runs swap the scheduler
// there; the sequential run has none).
class Hopper final : public LogicalProcess {
 public:
  Hopper(std::string name, std::uint32_t index, Time lookahead, const std::function<void()>* every_tenth)
      : LogicalProcess(std::move(name)), random_(77, index), lookahead_(lookahead), callback_(every_tenth) {}
  std::vector<HistoryEntry> history;

 protected:
  void initialize() override {
    schedule(Message{.value = index()}, 0.5);
    schedule(Message{.value = index() + 100}, 1.0);
  }
  void handle(const Message& m) override {
    history.push_back({m.time, m.source, m.value});
    if (callback_ != nullptr && *callback_ && index() == 0 && history.size() % 10 == 0) (*callback_)();
    const Time delay = lookahead_ + 0.25 * static_cast<Time>(random_.below(4));
    if (random_.uniform() < 0.5) {
      send(*outputs()[random_.below(outputs().size())], Message{.value = m.value}, delay);
    } else {
      schedule(Message{.value = m.value}, delay == 0 ? 0.5 : delay);
    }
  }

 private:
  Random random_;
  Time lookahead_;
  const std::function<void()>* callback_;
};

void build_hoppers(Simulation& sim, Time lookahead, const std::function<void()>* callback) {
  std::vector<Hopper*> lps;
  for (std::uint32_t i = 0; i < 6; ++i) lps.push_back(&sim.add<Hopper>("hopper-" + std::to_string(i), i, lookahead, callback));
  for (auto* a : lps) {
    for (auto* b : lps) {
      if (a != b) sim.connect(*a, *b, lookahead);
    }
  }
}

Histories hopper_histories(const Simulation& sim) {
  Histories h;
  for (std::size_t i = 0; i < sim.size(); ++i) h.push_back(static_cast<Hopper&>(sim.process(i)).history);
  return h;
}

}  // namespace

TEST_CASE("every user-written scheduler gives every LP the sequential simulator's history", "[psim][scheduler]") {
  const Time end = 50;
  const Time lookahead = GENERATE(0.0, 0.5);
  Simulation reference{{.end_time = end}};
  build_phold(reference, phold_config(lookahead, 4242));
  const SimulationStats seq = SequentialSimulator{reference}.run();
  const Histories expected = phold_histories(reference);
  REQUIRE(seq.events > 300);

  const std::size_t processors = GENERATE(1, 2, 4);
  const auto inner = GENERATE(presto::test::PoolKind::local_queue, presto::test::PoolKind::shuffle);
  const presto::test::Config cfg{processors, inner};
  for (std::string_view name : psim_schedulers::kNames) {
    for (Protocol protocol : kProtocols) {
      INFO(cfg << ", scheduler " << name << ", " << to_string(protocol) << ", lookahead " << lookahead);
      auto [histories, stats] = presto::test::run(cfg, [&] {
        Simulation sim{{.protocol = protocol, .end_time = end, .check_grants = true}};
        build_phold(sim, phold_config(lookahead, 4242));
        SimulationStats s = sim.run(psim_schedulers::make(name, presto::test::make_pool(inner)));
        return std::pair{phold_histories(sim), s};
      });
      CHECK(histories == expected);
      CHECK(stats.events == seq.events);
      if (name == "minimal" && protocol == Protocol::deadlock_recovery && lookahead > 0) {
        // One message per break against PSIM's window: more breaks than a third of the events.
        CHECK(stats.deadlocks() * 3 > stats.events);
      }
      if (name == "windowed") CHECK(stats.partial_deadlocks == 0);  // it waits for the barrier
    }
  }
}

TEST_CASE("a scheduler replaced while the model runs leaves every LP's history unchanged", "[psim][scheduler]") {
  const Time end = 40;
  const Time lookahead = GENERATE(0.0, 0.5);
  Simulation reference{{.end_time = end}};
  build_hoppers(reference, lookahead, nullptr);
  SequentialSimulator{reference}.run();
  const Histories expected = hopper_histories(reference);
  REQUIRE(expected[0].size() > 60);

  const std::size_t processors = GENERATE(1, 2, 4);
  const presto::test::Config cfg{processors, presto::test::PoolKind::shuffle};
  for (Protocol protocol : kProtocols) {
    INFO(cfg << ", " << to_string(protocol) << ", lookahead " << lookahead);
    // Nothing is logged at warn or above: a replaced pool's drain once reported a thread lost
    // that was only a partial deadlock's pending retry.
    presto::test::CapturedLog log{"psim-replace", spdlog::level::warn};
    RuntimeConfig config = presto::test::runtime_config(cfg);
    config.logger = log.logger();
    Runtime rt{std::move(config)};
    auto [histories, swaps, names] = rt.run([&] {
      Simulation sim{{.protocol = protocol, .end_time = end, .check_grants = true}};
      std::size_t swaps = 0;
      std::string names;
      // LP 0, every tenth event: the next scheduler of the list replaces the current one.
      const std::function<void()> swap = [&] {
        const std::string_view next = psim_schedulers::kNames[(swaps + 1) % psim_schedulers::kNames.size()];
        std::unique_ptr<SimulationScheduler> old = sim.replace_scheduler(psim_schedulers::make(next));
        names += std::string(old->name()) + ">";
        ++swaps;
      };
      build_hoppers(sim, lookahead, &swap);
      sim.run(psim_schedulers::make(psim_schedulers::kNames[0]));
      return std::tuple{hopper_histories(sim), swaps, names};
    });
    CHECK(histories == expected);
    CHECK(swaps == expected[0].size() / 10);
    CHECK(names.find("psim scheduler>lowest-timestamp-first>chandy-misra-minimal>windowed>") == 0);
    CHECK(log.text() == "");  // on failure, prints what was logged
    presto::test::check_no_leaks(rt);
  }
}

namespace {

class ThrowingScheduler final : public SimulationScheduler {
 public:
  std::string_view name() const noexcept override { return "throwing"; }

 protected:
  void resolve_deadlock(DeadlockView&) override { throw std::runtime_error("boom"); }
};

class GreedyScheduler final : public SimulationScheduler {  // grants everything: unsafe
 public:
  std::string_view name() const noexcept override { return "greedy"; }

 protected:
  void resolve_deadlock(DeadlockView& view) override {
    for (std::size_t i = 0; i < view.size(); ++i) view.grant(i, EventKey{kNever});
  }
};

class IdleScheduler final : public SimulationScheduler {  // never grants, never ends
 public:
  std::string_view name() const noexcept override { return "idle"; }

 protected:
  void resolve_deadlock(DeadlockView&) override {}
  bool end_simulation(const DeadlockView&) override { return false; }
};

std::string failure_of(const presto::test::Config& cfg, std::unique_ptr<SimulationScheduler> (*make)()) {
  return presto::test::run(cfg, [&] {
    Simulation sim{{.protocol = Protocol::deadlock_recovery, .end_time = 50}};
    build_phold(sim, phold_config(0.5, 4242));
    try {
      sim.run(make());
    } catch (const SchedulerError& e) {
      return std::string(e.what());
    }
    return std::string("no SchedulerError");
  });
}

}  // namespace

TEST_CASE("a scheduler that throws, grants unsafely or leaves a deadlock is reported by name", "[psim][scheduler]") {
  const presto::test::Config cfg{static_cast<std::size_t>(GENERATE(1, 2, 4)), presto::test::PoolKind::shuffle};
  INFO(cfg);
  const std::string threw = failure_of(cfg, []() -> std::unique_ptr<SimulationScheduler> { return std::make_unique<ThrowingScheduler>(); });
  CHECK(threw.find("psim scheduler 'throwing' threw from a deadlock hook: boom") == 0);
  // The report says where the deadlock was; it names the logical process holding the earliest
  // message when one does (a deadlock whose blocked LPs hold no pending message names none).
  CHECK(threw.find(" deadlock, floor t=") != std::string::npos);
  if (const auto named = threw.find("logical process '"); named != std::string::npos) {
    CHECK(threw.find("logical process 'phold-") == named);
  }

  const std::string greedy = failure_of(cfg, []() -> std::unique_ptr<SimulationScheduler> { return std::make_unique<GreedyScheduler>(); });
  CHECK(greedy.find("psim scheduler 'greedy' granted logical process 'phold-") == 0);
  CHECK(greedy.find("an earlier message can still reach it") != std::string::npos);

  const std::string idle = failure_of(cfg, []() -> std::unique_ptr<SimulationScheduler> { return std::make_unique<IdleScheduler>(); });
  CHECK(idle.find("psim scheduler 'idle' left a total deadlock unresolved") == 0);
}

TEST_CASE("replace_scheduler outside a run, or with a used scheduler, is a UsageError", "[psim][scheduler]") {
  Simulation sim{{.end_time = 5}};
  CHECK_THROWS_WITH(sim.replace_scheduler(std::make_unique<SimulationScheduler>()),
                    Catch::Contains("the simulation is not running"));
  CHECK_THROWS_AS(sim.replace_scheduler(nullptr), UsageError);
}

TEST_CASE("LowestTimestampFirstPool keeps the ThreadPool contract", "[psim][scheduler]") {
  // Outside a simulation every thread has the same key: the harness checks that none is lost
  // or duplicated, also across live replacement.
  INFO("seed " << presto::test::seed());
  CHECK_NOTHROW(presto::testing::check_pool_conformance(
      [] { return std::make_unique<psim_schedulers::LowestTimestampFirstPool>(); },
      {.threads = presto::test::scaled(400), .yields = 8, .pairs = 16, .rounds = 50, .replacements = 20,
       .seed = presto::test::seed()}));
}
