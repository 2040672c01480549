// Processor allocation policies (presto/allocation_policy.hpp): each policy's decisions for
// scripted inputs (a fake clock, barrier and run queue) follow the ASAT thesis's rules; a
// policy installed in a running runtime sizes parallel_for's team; misuse is reported.

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "test_support.hpp"

using namespace presto;
using namespace std::chrono_literals;

namespace {

// A scripted machine: time moves only when the test says, each barrier returns the next
// scripted passage (a good one when the script is empty), the run queue is what the test set.
class FakeEnvironment final : public AllocationEnvironment {
 public:
  std::chrono::nanoseconds now() override {
    ++clock_reads;
    return time;
  }
  std::chrono::nanoseconds timed_barrier(std::size_t processors) override {
    barriers.push_back(processors);
    if (passages.empty()) return 10us;
    const auto p = passages.front();
    passages.pop_front();
    return p;
  }
  std::size_t others_running() override {
    ++load_reads;
    return others;
  }
  std::size_t hardware_processors() override { return hardware; }

  std::chrono::nanoseconds time{0};
  std::deque<std::chrono::nanoseconds> passages;  // next barrier results
  std::vector<std::size_t> barriers;              // processors of each barrier run
  std::size_t others = 0;
  std::size_t hardware = 4;
  int clock_reads = 0;
  int load_reads = 0;
};

constexpr auto kGood = 50us;  // the thesis's balanced barrier: tens of microseconds
constexpr auto kBad = 10ms;   // a descheduled processor: a time slice

// One region entry `step` after the previous one.
std::size_t enter(AllocationPolicy& p, FakeEnvironment& env, std::size_t current, std::size_t limit,
                  std::chrono::nanoseconds step = 600ms) {
  env.time += step;
  return p.decide(current, limit, env);
}

}  // namespace

TEST_CASE("FixedAllocation keeps the count and reads nothing", "[allocation]") {
  FixedAllocation fixed;
  FakeEnvironment env;
  CHECK(fixed.decide(3, 4, env) == 3);
  CHECK(fixed.decide(6, 4, env) == 6);
  CHECK(env.clock_reads == 0);
  CHECK(env.barriers.empty());
  CHECK(fixed.describe() == "fixed");
}

TEST_CASE("ASAT evaluates at most once per eval, with one clock read otherwise", "[allocation]") {
  AsatAllocation asat;  // thesis defaults: eval 0.5 s
  FakeEnvironment env;
  CHECK(enter(asat, env, 4, 4, 0ns) == 4);  // the first region evaluates at once
  CHECK(env.barriers == std::vector<std::size_t>{4});
  for (int i = 0; i < 100; ++i) CHECK(enter(asat, env, 4, 4, 4ms) == 4);  // 0.4 s in all: none due
  CHECK(env.barriers.size() == 1);
  CHECK(env.clock_reads == 101);
  CHECK(enter(asat, env, 4, 4, 100ms) == 4);  // 0.5 s since the last evaluation
  CHECK(env.barriers.size() == 2);
}

TEST_CASE("ASAT drops one processor after BAD_TRIG bad barriers in a row", "[allocation]") {
  AsatAllocation asat;  // bad_trig 2
  FakeEnvironment env;
  env.passages = {kBad, kGood, kBad, kBad, kBad, kBad, kBad, kBad};
  CHECK(enter(asat, env, 4, 4) == 4);  // bad 1
  CHECK(asat.bad_count() == 1);
  CHECK(enter(asat, env, 4, 4) == 4);  // good: the bad count restarts
  CHECK(asat.bad_count() == 0);
  CHECK(enter(asat, env, 4, 4) == 4);  // bad 1
  CHECK(enter(asat, env, 4, 4) == 3);  // bad 2: drop one
  CHECK(asat.bad_count() == 0);
  CHECK(enter(asat, env, 3, 4) == 3);
  CHECK(enter(asat, env, 3, 4) == 2);
  CHECK(enter(asat, env, 2, 4) == 2);
  CHECK(enter(asat, env, 2, 4) == 1);
  // Never below one processor, however bad.
  env.passages = {kBad, kBad, kBad, kBad};
  for (int i = 0; i < 4; ++i) CHECK(enter(asat, env, 1, 4) == 1);
  CHECK(env.barriers.back() == 1);
}

TEST_CASE("ASAT probes one processor more after GOOD_TRIG good barriers, and grows if it passes",
          "[allocation]") {
  AsatAllocation asat;  // good_trig 15
  FakeEnvironment env;
  for (int i = 0; i < 14; ++i) CHECK(enter(asat, env, 2, 4) == 2);
  CHECK(env.barriers == std::vector<std::size_t>(14, 2));
  SECTION("a good probe adds the processor") {
    CHECK(enter(asat, env, 2, 4) == 3);
    CHECK(env.barriers.size() == 16);
    CHECK(env.barriers.back() == 3);  // the toe in the water: a barrier over 3
  }
  SECTION("a bad probe keeps the count, and the next probe waits another GOOD_TRIG") {
    env.passages = {kGood, kBad};
    CHECK(enter(asat, env, 2, 4) == 2);
    CHECK(env.barriers.back() == 3);
    CHECK(asat.good_count() == 0);
    for (int i = 0; i < 14; ++i) CHECK(enter(asat, env, 2, 4) == 2);
    CHECK(env.barriers.size() == 16 + 14);
    CHECK(enter(asat, env, 2, 4) == 3);
  }
}

TEST_CASE("ASAT never probes beyond its limit", "[allocation]") {
  AsatAllocation asat{{.good_trig = 1}};
  FakeEnvironment env;
  for (int i = 0; i < 5; ++i) CHECK(enter(asat, env, 2, 2) == 2);
  CHECK(env.barriers == std::vector<std::size_t>(5, 2));
}

TEST_CASE("ASAT follows the thesis's overhead run: load appears on 4 CPUs, one processor goes", "[allocation]") {
  // Figure 23's shape with Table 3's settings (BAD_TRIG 1, GOOD_TRIG 10, EVAL 1 s): 4
  // processors, one CPU-bound job arrives, the next bad barrier drops one; the load leaves and
  // ten good barriers later the probe over 4 passes.
  AsatAllocation asat{AsatParameters::kai_guide()};
  CHECK(asat.describe() == "asat(eval 1 s, bad 0.001 s, bad_trig 1, good_trig 10)");
  FakeEnvironment env;
  std::size_t n = 4;
  n = enter(asat, env, n, 4, 1s);
  CHECK(n == 4);
  env.passages = {kBad};
  n = enter(asat, env, n, 4, 1s);
  CHECK(n == 3);
  for (int i = 0; i < 9; ++i) n = enter(asat, env, n, 4, 1s);
  CHECK(n == 3);
  n = enter(asat, env, n, 4, 1s);
  CHECK(n == 4);
  CHECK(env.barriers.back() == 4);
}

TEST_CASE("LoadAllocation takes the processors the run queue leaves, once per interval", "[allocation]") {
  LoadAllocation load;  // 0.5 s
  FakeEnvironment env;
  env.hardware = 4;
  env.others = 1;
  CHECK(enter(load, env, 4, 4, 0ns) == 3);
  env.others = 3;
  CHECK(enter(load, env, 3, 4, 100ms) == 3);  // not due
  CHECK(env.load_reads == 1);
  CHECK(enter(load, env, 3, 4, 400ms) == 1);
  env.others = 9;  // more runnable threads than hardware: still one processor
  CHECK(enter(load, env, 1, 4) == 1);
  env.others = 0;
  CHECK(enter(load, env, 1, 4) == 4);
  CHECK(enter(load, env, 4, 2) == 2);  // never above the limit
  CHECK(env.barriers.empty());
  CHECK(load.describe() == "load(interval 0.5 s)");
}

TEST_CASE("HybridAllocation shrinks on the barrier and grows only when the OS has room", "[allocation]") {
  HybridAllocation hybrid{{.good_trig = 3}};
  FakeEnvironment env;
  env.hardware = 2;
  env.passages = {kBad, kBad};
  CHECK(enter(hybrid, env, 2, 2) == 2);
  CHECK(enter(hybrid, env, 2, 2) == 1);  // as ASAT
  CHECK(env.load_reads == 0);            // shrinking never reads the load
  SECTION("another job's thread holds the other CPU: no probe, no growth (no thrash)") {
    env.others = 1;
    for (int i = 0; i < 12; ++i) CHECK(enter(hybrid, env, 1, 2) == 1);
    CHECK(env.load_reads == 4);  // once per GOOD_TRIG window
    CHECK(env.barriers.size() == 2 + 12);
    for (std::size_t i = 2; i < env.barriers.size(); ++i) CHECK(env.barriers[i] == 1);  // never probed over 2
  }
  SECTION("the other job has gone: probe, and grow") {
    env.others = 0;
    CHECK(enter(hybrid, env, 1, 2) == 1);
    CHECK(enter(hybrid, env, 1, 2) == 1);
    CHECK(enter(hybrid, env, 1, 2) == 2);
    CHECK(env.barriers.back() == 2);
  }
  CHECK(hybrid.describe() == "hybrid(eval 0.5 s, bad 0.001 s, bad_trig 2, good_trig 3)");
}

TEST_CASE("Allocation parameters out of range are usage errors", "[allocation]") {
  CHECK_THROWS_AS(AsatAllocation({.eval = 0s}), UsageError);
  CHECK_THROWS_AS(AsatAllocation({.eval = -1s}), UsageError);
  CHECK_THROWS_AS(AsatAllocation({.bad = 0s}), UsageError);
  CHECK_THROWS_AS(AsatAllocation({.bad_trig = 0}), UsageError);
  CHECK_THROWS_WITH(AsatAllocation({.good_trig = 0}), Catch::Contains("good_trig"));
  CHECK_THROWS_AS(HybridAllocation({.eval = -5ms}), UsageError);
  CHECK_THROWS_AS(LoadAllocation(0s), UsageError);
  CHECK_THROWS_WITH(LoadAllocation(-1ms), Catch::Contains("interval"));
}

namespace {

// A policy that returns what the test scripts, counting its calls.
class ScriptedPolicy final : public AllocationPolicy {
 public:
  explicit ScriptedPolicy(std::size_t answer) : answer_(answer) {}
  std::size_t decide(std::size_t current, std::size_t limit, AllocationEnvironment&) override {
    ++calls;
    seen_current = current;
    seen_limit = limit;
    return answer_;
  }
  std::string describe() const override { return "scripted(" + std::to_string(answer_) + ")"; }
  std::atomic<int> calls{0};
  std::size_t seen_current = 0;
  std::size_t seen_limit = 0;

 private:
  std::size_t answer_;
};

// The distinct presto threads that ran a parallel_for over n indices, each index slow enough
// that every team member gets some. Told apart by id: a joined thread's control block may be
// reused by a later one (a member run by its joiner under lazy forks is made a thread only
// when it asks for Thread::current(), after an earlier member has ended and been released).
std::size_t team_size(std::size_t n) {
  std::mutex m;
  std::set<std::uint64_t> members;
  parallel_for(std::size_t{0}, n, [&](std::size_t) {
    const auto until = Clock::now() + 200us;
    while (Clock::now() < until) {
    }
    std::lock_guard lock(m);
    members.insert(Thread::current().id());
  }, Schedule::static_blocks());
  return members.size();
}

}  // namespace

TEST_CASE("A policy installed in a running runtime sizes parallel_for's team", "[allocation]") {
  const std::size_t processors = GENERATE(2, 4);
  INFO("processors " << processors);
  Runtime rt{{.processors = processors}};
  CHECK(rt.allocation_policy().describe() == "fixed");
  std::size_t before = 0, after = 0, count_after = 0, seen_limit = 0, seen_current = 0;
  std::string old_name;
  int calls = 0;
  rt.run([&] {
    before = team_size(64);
    auto mine = std::make_unique<ScriptedPolicy>(1);
    ScriptedPolicy* policy = mine.get();
    auto old = rt.set_allocation_policy(std::move(mine));
    old_name = old->describe();
    after = team_size(64);
    count_after = rt.processors();
    calls = policy->calls.load();
    seen_limit = policy->seen_limit;
    seen_current = policy->seen_current;
    rt.set_allocation_policy(std::make_unique<FixedAllocation>());
  });
  CHECK(before == processors);
  CHECK(old_name == "fixed");
  CHECK(after == 1);
  CHECK(count_after == 1);
  CHECK(calls == 1);
  CHECK(seen_limit == processors);  // the count when it was installed
  CHECK(seen_current == processors);
}

TEST_CASE("Allocation policy misuse: null, no processor, too many", "[allocation]") {
  Runtime rt{{.processors = 2}};
  CHECK_THROWS_AS(rt.set_allocation_policy(nullptr), UsageError);
  std::string zero, many;
  std::size_t count_after = 0;
  rt.run([&] {
    rt.set_allocation_policy(std::make_unique<ScriptedPolicy>(0));
    try {
      parallel_for(0, 8, [](int) {});
    } catch (const UsageError& e) {
      zero = e.what();
    }
    count_after = rt.processors();
    rt.set_allocation_policy(std::make_unique<ScriptedPolicy>(3));
    try {
      parallel_for(0, 8, [](int) {});
    } catch (const UsageError& e) {
      many = e.what();
    }
    rt.set_allocation_policy(std::make_unique<FixedAllocation>());
  });
  CHECK_THAT(zero, Catch::Contains("scripted(0)") && Catch::Contains("asked for 0 processors") &&
                       Catch::Contains("thread 'main'"));
  CHECK(count_after == 2);  // never left without a processor
  CHECK_THAT(many, Catch::Contains("asked for 3 processors (allowed: 1 to 2)"));
}

namespace {

// Tries to replace itself from inside decide(): misuse.
class SelfReplacingPolicy final : public AllocationPolicy {
 public:
  explicit SelfReplacingPolicy(Runtime& rt) : rt_(rt) {}
  std::size_t decide(std::size_t current, std::size_t, AllocationEnvironment&) override {
    rt_.set_allocation_policy(std::make_unique<FixedAllocation>());
    return current;
  }
  std::string describe() const override { return "self-replacing"; }

 private:
  Runtime& rt_;
};

}  // namespace

namespace {

// Probes over `probe` processors, then fails: the runtime must put its count back.
class FailingProbePolicy final : public AllocationPolicy {
 public:
  explicit FailingProbePolicy(std::size_t probe) : probe_(probe) {}
  std::size_t decide(std::size_t, std::size_t, AllocationEnvironment& env) override {
    env.timed_barrier(probe_);
    throw std::runtime_error("the policy failed after its probe");
  }
  std::string describe() const override { return "failing-probe(" + std::to_string(probe_) + ")"; }

 private:
  std::size_t probe_;
};

}  // namespace

TEST_CASE("A probe that cannot start a processor is a clear error; a failed policy leaves the count",
          "[allocation]") {
  Runtime rt{{.processors = 2}};
  std::string cannot_start, failed;
  std::size_t after_cannot = 0, after_failed = 0;
  rt.run([&] {
    rt.set_allocation_policy(std::make_unique<FailingProbePolicy>(100'000));  // beyond any capacity
    try {
      parallel_for(0, 4, [](int) {});
    } catch (const std::runtime_error& e) {
      cannot_start = e.what();
    }
    after_cannot = rt.processors();
    rt.set_allocation_policy(std::make_unique<FailingProbePolicy>(3));
    try {
      parallel_for(0, 4, [](int) {});
    } catch (const std::runtime_error& e) {
      failed = e.what();
    }
    after_failed = rt.processors();
    rt.set_allocation_policy(std::make_unique<FixedAllocation>());
  });
  CHECK_THAT(cannot_start, Catch::Contains("failing-probe(100000)") &&
                               Catch::Contains("could not start processor 99999"));
  CHECK(after_cannot == 2);
  CHECK(failed == "the policy failed after its probe");
  CHECK(after_failed == 2);  // the probe's third processor went again
}

TEST_CASE("Replacing the policy from inside its decide() is a usage error", "[allocation]") {
  Runtime rt{{.processors = 2}};
  std::string what;
  std::string after;
  rt.run([&] {
    rt.set_allocation_policy(std::make_unique<SelfReplacingPolicy>(rt));
    try {
      parallel_for(0, 4, [](int) {});
    } catch (const UsageError& e) {
      what = e.what();
    }
    rt.set_allocation_policy(std::make_unique<FixedAllocation>());  // the guard was released
    after = rt.allocation_policy().describe();
  });
  CHECK_THAT(what, Catch::Contains("set_allocation_policy called by thread 'main'") &&
                       Catch::Contains("inside self-replacing's decide()"));
  CHECK(after == "fixed");
}

namespace {

// Probes one processor more than it has at every region, then keeps its count.
class ProbingPolicy final : public AllocationPolicy {
 public:
  std::size_t decide(std::size_t current, std::size_t, AllocationEnvironment& env) override {
    passages.push_back(env.timed_barrier(current));
    passages.push_back(env.timed_barrier(current + 1));
    return current;
  }
  std::string describe() const override { return "probing"; }
  std::vector<std::chrono::nanoseconds> passages;
};

}  // namespace

TEST_CASE("The runtime's timed barrier runs over real processors, and a probe's processor goes again",
          "[allocation]") {
  const std::size_t processors = GENERATE(1, 2, 4);
  const auto pool = GENERATE(test::PoolKind::local_queue, test::PoolKind::fifo, test::PoolKind::shuffle);
  const test::Config config{processors, pool};
  INFO(config);
  Runtime rt{test::runtime_config(config)};
  auto owned = std::make_unique<ProbingPolicy>();
  ProbingPolicy* probing = owned.get();
  rt.set_allocation_policy(std::move(owned), processors + 1);
  std::atomic<long> sum{0};
  std::size_t count_after = 0;
  rt.run([&] {
    for (int r = 0; r < 5; ++r) parallel_for(0, 100, [&](int i) { sum += i; });
    count_after = rt.processors();
  });
  CHECK(sum == 5 * 4950);
  CHECK(count_after == processors);
  test::check_no_leaks(rt);
  REQUIRE(probing->passages.size() == 10);
  for (auto p : probing->passages) CHECK(p.count() > 0);
}

TEST_CASE("Built-in policies on real processors: every index runs, the count stays in range", "[allocation]") {
  const std::size_t processors = GENERATE(1, 2, 4);
  const int kind = GENERATE(0, 1, 2);
  const auto pool = GENERATE(test::PoolKind::local_queue, test::PoolKind::shuffle);
  const test::Config config{processors, pool};
  INFO(config << ", policy " << kind);
  Runtime rt{test::runtime_config(config)};
  std::unique_ptr<AllocationPolicy> policy;
  // Evaluate at every region, so that the barrier, the probe and /proc are all exercised.
  if (kind == 0) policy = std::make_unique<AsatAllocation>(AsatParameters{.eval = 1ns, .bad_trig = 1, .good_trig = 1});
  if (kind == 1) policy = std::make_unique<LoadAllocation>(1ns);
  if (kind == 2) policy = std::make_unique<HybridAllocation>(AsatParameters{.eval = 1ns, .bad_trig = 1, .good_trig = 1});
  rt.set_allocation_policy(std::move(policy));
  const int regions = static_cast<int>(test::scaled(40));
  std::atomic<long> sum{0};
  std::size_t lowest = processors, highest = 1;
  rt.run([&] {
    for (int r = 0; r < regions; ++r) {
      parallel_for(0, 1000, [&](int i) { sum.fetch_add(i, std::memory_order_relaxed); });
      lowest = std::min(lowest, rt.processors());
      highest = std::max(highest, rt.processors());
    }
  });
  CHECK(sum == regions * 499500L);
  CHECK(lowest >= 1);
  CHECK(highest <= processors);
  test::check_no_leaks(rt);
}

TEST_CASE("PRESTO_ALLOCATION selects a built-in policy", "[allocation]") {
  struct Unset {
    ~Unset() { ::unsetenv("PRESTO_ALLOCATION"); }
  } unset;
  ::setenv("PRESTO_ALLOCATION", "asat", 1);
  CHECK(Runtime{{.processors = 1}}.allocation_policy().describe() ==
        "asat(eval 0.5 s, bad 0.001 s, bad_trig 2, good_trig 15)");
  ::setenv("PRESTO_ALLOCATION", "hybrid", 1);
  CHECK_THAT(Runtime{{.processors = 1}}.allocation_policy().describe(), Catch::StartsWith("hybrid("));
  ::setenv("PRESTO_ALLOCATION", "load", 1);
  CHECK(Runtime{{.processors = 1}}.allocation_policy().describe() == "load(interval 0.5 s)");
  ::setenv("PRESTO_ALLOCATION", "fixed", 1);
  CHECK(Runtime{{.processors = 1, .allocation = std::make_unique<LoadAllocation>()}}.allocation_policy().describe() ==
        "fixed");  // the environment wins over the configuration
  ::setenv("PRESTO_ALLOCATION", "gang", 1);
  CHECK_THROWS_WITH(Runtime{{.processors = 1}}, Catch::Contains("PRESTO_ALLOCATION='gang'"));
}
