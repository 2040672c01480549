// Per-thread scheduling properties (priority, deadline, affinity): their defaults, setting
// them, their reset when a control block is recycled; affinity honoured by every built-in
// pool on 1, 2 and 4 processors, also to a processor whose other threads keep yielding; an earliest-deadline-first pool (apps/live_scheduler) that
// conforms and, installed while threads run, makes the dispatch order follow the deadlines.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include <presto/testing/pool_conformance.hpp>

#include "edf_pool.hpp"
#include "test_support.hpp"

using namespace presto;
using namespace std::chrono_literals;

TEST_CASE("deadline and affinity: defaults, attributes, setters", "[sched][properties]") {
  Thread plain{"plain"};
  CHECK_FALSE(plain.deadline().has_value());
  CHECK_FALSE(plain.affinity().has_value());
  const Clock::time_point soon = Clock::now() + 5ms;
  Thread pinned{ThreadAttributes{.name = "pinned", .priority = 3, .deadline = soon, .affinity = 1}};
  CHECK(pinned.priority() == 3);
  CHECK(pinned.deadline() == soon);
  CHECK(pinned.affinity() == std::size_t{1});
  pinned.set_deadline(std::nullopt);
  pinned.set_affinity(std::nullopt);
  CHECK_FALSE(pinned.deadline().has_value());
  CHECK_FALSE(pinned.affinity().has_value());
  plain.set_affinity(7);  // no runtime yet: checked when it starts
  CHECK(plain.affinity() == std::size_t{7});
}

TEST_CASE("a recycled control block starts with the new thread's properties", "[sched][properties]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const Clock::time_point d = Clock::now() + 1h;
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    for (int round = 0; round < 20; ++round) {
      fork(ThreadAttributes{.priority = 5, .deadline = d, .affinity = 0}, [] {
        Thread::current().set_priority(9);
        Thread::current().set_deadline(Clock::time_point{});
      }).join();
      fork([&] {
        const Thread& me = Thread::current();
        record.expect(me.priority() == 0, "priority not reset");
        record.expect(!me.deadline().has_value(), "deadline not reset");
        record.expect(!me.affinity().has_value(), "affinity not reset");
      }).join();
    }
    record.expect(this_thread::runtime()->stats().threads_recycled > 0, "no control block was recycled");
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("an affinity outside the runtime's processors is a UsageError naming the thread", "[sched][properties]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  std::string fork_error, set_error;
  presto::test::run(cfg, [&] {
    try {
      fork(ThreadAttributes{.name = "far", .affinity = cfg.processors}, [] {}).join();
    } catch (const UsageError& e) {
      fork_error = e.what();
    }
    try {
      Thread::current().set_affinity(cfg.processors + 3);
    } catch (const UsageError& e) {
      set_error = e.what();
    }
  });
  CHECK(fork_error.find("'far'") != std::string::npos);
  CHECK(fork_error.find("processor " + std::to_string(cfg.processors)) != std::string::npos);
  CHECK(set_error.find("'main'") != std::string::npos);
}

TEST_CASE("every built-in pool runs a pinned thread only on its processor", "[sched][properties]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const int threads = 24, rounds = static_cast<int>(presto::test::scaled(40));
  presto::test::Record record;
  std::atomic<long> runs{0};
  presto::test::run(cfg, [&] {
    std::vector<JoinHandle<void>> hs;
    for (int i = 0; i < threads; ++i) {
      const std::size_t k = static_cast<std::size_t>(i) % cfg.processors;
      const bool pinned = i % 3 != 2;  // unpinned threads mixed in
      ThreadAttributes a{.name = "t" + std::to_string(i)};
      if (pinned) a.affinity = k;
      hs.push_back(fork(std::move(a), [&, k, pinned, i] {
        for (int r = 0; r < rounds; ++r) {
          const std::size_t here = Processor::current()->index();
          record.expect(!pinned || here == k, "thread " + std::to_string(i) + " pinned to " + std::to_string(k) +
                                                  " ran on processor " + std::to_string(here));
          runs.fetch_add(1, std::memory_order_relaxed);
          this_thread::yield();
        }
      }));
    }
    for (auto& h : hs) h.join();
  });
  PRESTO_CHECK_RECORD(record);
  CHECK(runs.load() == long{threads} * rounds);
}

TEST_CASE("a processor whose threads keep yielding still serves the threads pinned to it", "[sched][properties]") {
  // The dispatch path's own-queue shortcuts (a yield that swaps places in the processor's own
  // queue, a pop from it) must give way to a thread pinned to that processor: else the yielders
  // below would run among themselves until their bound. The bound counts the yields made on
  // the pinned thread's own processor once it was forked, not all yields: the other processors
  // may yield freely while the OS withholds a core from this one (4 processors on 2 cores).
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  constexpr long kBound = 200'000;
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    std::atomic<std::size_t> served{0};
    std::atomic<bool> stop{false};
    std::vector<std::atomic<bool>> forked(cfg.processors), ran(cfg.processors);
    std::vector<std::atomic<long>> yields_while_waiting(cfg.processors);
    std::vector<JoinHandle<void>> yielders;
    for (std::size_t i = 0; i < 2 * cfg.processors; ++i) {
      yielders.push_back(fork([&] {
        while (served.load() < cfg.processors && !stop.load(std::memory_order_relaxed)) {
          this_thread::yield();
          const std::size_t k = Processor::current()->index();
          if (!forked[k].load() || ran[k].load()) continue;
          if (yields_while_waiting[k].fetch_add(1, std::memory_order_relaxed) + 1 == kBound) {
            record.expect(false, "processor " + std::to_string(k) + " yielded " + std::to_string(kBound) +
                                     " times while the thread pinned to it waited");
            stop.store(true);
          }
        }
      }));
    }
    std::vector<JoinHandle<void>> pinned;
    for (std::size_t k = 0; k < cfg.processors; ++k) {
      ThreadAttributes a{.name = "pinned to " + std::to_string(k)};
      a.affinity = k;
      forked[k].store(true);
      pinned.push_back(fork(std::move(a), [&, k] {
        ran[k].store(true);
        served.fetch_add(1);
      }));
    }
    for (auto& h : yielders) h.join();
    for (auto& h : pinned) h.join();
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("set_affinity on a running thread takes effect when it next becomes ready", "[sched][properties]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    for (std::size_t k = 0; k < cfg.processors; ++k) {
      Monitor m{"handshake"};
      Condition woken{m, "woken"};
      std::atomic<bool> waiting{false};
      bool signalled = false;
      auto waker = fork([&] {
        while (!waiting.load()) this_thread::yield();
        Monitor::Entry e{m};  // only once the waiter has released it by waiting
        signalled = true;
        woken.signal();
      });
      Thread::current().set_affinity(k);
      {
        Monitor::Entry e{m};
        waiting.store(true);
        while (!signalled) woken.wait(e);
      }
      const std::size_t here = Processor::current()->index();
      record.expect(here == k, "after set_affinity(" + std::to_string(k) + ") woke on processor " + std::to_string(here));
      waker.join();
    }
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("the earliest-deadline-first pool conforms", "[sched][edf]") {
  const presto::testing::PoolConformanceOptions o = presto::test::conformance_options(2);
  INFO("seed " << o.seed);
  CHECK_NOTHROW(presto::testing::check_pool_conformance([] { return std::make_unique<EdfPool>(); }, o));
}

TEST_CASE("installed live, the EDF pool and a logging scheduler dispatch by deadline", "[sched][edf]") {
  // One processor, so the order of dispatch is the pool's order. Batch 1 runs under the
  // default FIFO pool in the order of creation; then the EDF pool and a logging scheduler are
  // installed while batch 2 is ready, and batch 2 runs by deadline, latest-created first.
  Runtime rt{{.processors = 1, .pool = std::make_unique<FifoPool>()}};
  const int n = 8;
  std::vector<int> before, after;
  std::vector<std::uint64_t> logged, expected_ids;
  rt.run([&] {
    const Clock::time_point base = Clock::now() + 1h;
    auto batch = [&](std::vector<int>& order) {
      std::vector<JoinHandle<void>> hs;
      for (int i = 0; i < n; ++i) {
        // deadlines in reverse order of creation; thread 3 has none (it runs last under EDF)
        ThreadAttributes a{.name = "job" + std::to_string(i)};
        if (i != 3) a.deadline = base - std::chrono::seconds(i);
        hs.push_back(fork(std::move(a), [&order, i] { order.push_back(i); }));
      }
      return hs;
    };
    for (auto& h : batch(before)) h.join();
    auto hs = batch(after);  // ready, not yet run: main has not given up the processor
    for (auto& h : hs) expected_ids.push_back(h.thread().id());
    auto old_scheduler = this_thread::runtime()->replace_scheduler(std::make_unique<LoggingScheduler>(nullptr));
    auto& logging = dynamic_cast<LoggingScheduler&>(this_thread::runtime()->scheduler());
    this_thread::runtime()->scheduler().replace_pool(std::make_unique<EdfPool>());
    for (auto& h : hs) h.join();
    logged = logging.dispatched();
  });
  CHECK(before == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(after == std::vector<int>{7, 6, 5, 4, 2, 1, 0, 3});
  CHECK(rt.scheduler().name() == "logging");
  CHECK(rt.scheduler().pool().name() == "earliest-deadline-first");
  // The scheduler saw each job of batch 2 dispatched, in the same order.
  std::vector<std::uint64_t> jobs;
  for (std::uint64_t id : logged) {
    if (std::find(expected_ids.begin(), expected_ids.end(), id) != expected_ids.end()) jobs.push_back(id);
  }
  std::vector<std::uint64_t> by_deadline;
  for (int i : {7, 6, 5, 4, 2, 1, 0, 3}) by_deadline.push_back(expected_ids[static_cast<std::size_t>(i)]);
  CHECK(jobs == by_deadline);
  presto::test::check_no_leaks(rt);
}
