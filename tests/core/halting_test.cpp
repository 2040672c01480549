// Halting: run() returns when no thread is ready or running and no wake-up can come. Blocked
// survivors are a Deadlock listing each thread and what it waits on; an exception nobody can
// join ends the run; timers and KeepAlives keep the system up; an idle runtime uses no CPU;
// Scheduler::halt() can be overridden to revive the system (as PSIM does).

#include <chrono>
#include <ctime>
#include <stdexcept>
#include <thread>

#include "test_support.hpp"

using namespace presto;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

}  // namespace

TEST_CASE("run() waits for every thread, joined or not", "[core][halting]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  std::atomic<int> finished{0};
  presto::test::run(cfg, [&] {
    for (int i = 0; i < 50; ++i) {
      fork([&] {
        for (int k = 0; k < 10; ++k) this_thread::yield();
        ++finished;
      }).detach();
    }
  });  // main returns at once; the run ends only when the detached threads are done
  CHECK(finished == 50);
}

TEST_CASE("a deadlock lists every blocked thread and what it waits on", "[core][halting]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  Runtime rt{presto::test::runtime_config(cfg)};
  Monitor left{"left fork"}, right{"right fork"};
  Barrier both_hold{2, "both hold"};
  try {
    rt.run([&] {
      auto a = fork(ThreadAttributes{.name = "plato"}, [&] {
        Monitor::Entry l{left};
        both_hold.arrive_and_wait();
        Monitor::Entry r{right};
      });
      auto b = fork(ThreadAttributes{.name = "kant"}, [&] {
        Monitor::Entry r{right};
        both_hold.arrive_and_wait();
        Monitor::Entry l{left};
      });
      a.join();
      b.join();
    });
    FAIL("run() returned although every thread was blocked");
  } catch (const Deadlock& d) {
    const auto& blocked = d.blocked();
    REQUIRE(blocked.size() == 3);
    CHECK_THAT(blocked[0].thread, Contains("thread 'main'"));
    CHECK_THAT(blocked[0].waiting_on, Contains("thread 'plato'"));
    CHECK_THAT(blocked[1].thread, Contains("thread 'plato'"));
    CHECK_THAT(blocked[1].waiting_on, Contains("monitor 'right fork', held by thread 'kant'"));
    CHECK_THAT(blocked[2].thread, Contains("thread 'kant'"));
    CHECK_THAT(blocked[2].waiting_on, Contains("monitor 'left fork', held by thread 'plato'"));
    CHECK_THAT(std::string(d.what()), Contains("deadlock: the system halted with 3 threads blocked forever") &&
                                          Contains("thread 'plato'") && Contains("waits on monitor 'right fork'"));
  }
  presto::test::check_no_leaks(rt);  // the survivors were abandoned and freed
}

TEST_CASE("an exception nobody can join ends run() with that exception", "[core][halting]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  Runtime rt{presto::test::runtime_config(cfg)};
  Semaphore never{0, "never"};
  CHECK_THROWS_WITH(rt.run([&] {
                      fork(ThreadAttributes{.name = "doomed"}, [] { throw std::runtime_error("unhandled in doomed"); })
                          .detach();
                      never.acquire();  // the run must not wait for this
                    }),
                    "unhandled in doomed");
  presto::test::check_no_leaks(rt);
}

TEST_CASE("the first thread's exception propagates from run()", "[core][halting]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  Runtime rt{presto::test::runtime_config(cfg)};
  Semaphore never{0, "never"};
  CHECK_THROWS_WITH(rt.run([&]() -> int {
                      fork([&] { never.acquire(); }).detach();  // abandoned when main fails
                      throw std::logic_error("main failed");
                    }),
                    "main failed");
  presto::test::check_no_leaks(rt);
  // The runtime can run again.
  CHECK(rt.run([] { return 5; }) == 5);
}

TEST_CASE("pending timers keep the system up; the last one lets it halt", "[core][halting]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  auto start = Clock::now();
  std::atomic<int> woke{0};  // outlives main's stack: the sleepers finish after main returns
  int done = presto::test::run(cfg, [&] {
    for (int i = 0; i < 8; ++i) {
      fork([&, i] {
        sleep_for(std::chrono::milliseconds(2 * i + 1));
        ++woke;
      }).detach();
    }
    sleep_for(1ms);
    return 0;
  });
  CHECK(done == 0);
  CHECK(woke == 8);
  CHECK(Clock::now() - start >= 15ms);  // the longest sleeper was waited for
}

TEST_CASE("a KeepAlive lets an OS thread wake presto threads later", "[core][halting]") {
  Runtime rt{{.processors = 2}};
  KeepAlive alive = rt.keep_alive();
  Semaphore from_outside{0, "from outside"};
  std::thread outside([&] {
    std::this_thread::sleep_for(30ms);
    from_outside.release();  // an external thread wakes a presto thread
    alive.reset();           // and lets the runtime halt
  });
  int got = rt.run([&] {
    from_outside.acquire();
    return 1;
  });
  outside.join();
  CHECK(got == 1);
  presto::test::check_no_leaks(rt);

  // Without one, the same wait is a deadlock at once.
  Runtime rt2{{.processors = 2}};
  CHECK_THROWS_AS(rt2.run([&] { from_outside.acquire(); }), Deadlock);
}

TEST_CASE("an idle runtime uses no CPU", "[core][halting]") {
  // Every processor idles for 200 ms while threads wait on a timer and on an external event.
  Runtime rt{{.processors = 4}};
  KeepAlive alive = rt.keep_alive();
  Semaphore external{0, "external event"};
  double cpu_during_wait = 0;
  std::thread outside([&] {
    std::this_thread::sleep_for(250ms);
    external.release();
    alive.reset();
  });
  rt.run([&] {
    auto timer = fork([] { sleep_for(200ms); });
    auto waiter = fork([&] { external.acquire(); });
    sleep_for(20ms);  // let every processor settle into idle
    const double before = process_cpu_ms();
    sleep_for(200ms);
    cpu_during_wait = process_cpu_ms() - before;
    timer.join();
    waiter.join();
  });
  outside.join();
  INFO("process CPU time during a 200 ms idle wait on 4 processors: " << cpu_during_wait << " ms");
  CHECK(cpu_during_wait < 20.0);  // parked processors; a busy one would burn 200 ms each
}

TEST_CASE("Scheduler::halt can revive a halted system", "[core][halting]") {
  // A scheduler that, like PSIM's, breaks a "deadlock" by waking one blocked thread.
  struct Reviver final : Scheduler {
    SynchroObject* stuck = nullptr;
    int revivals = 0;
    void halt() override {
      if (stuck == nullptr) return Scheduler::halt();
      stuck->spin_lock();
      Thread* t = stuck->recall();
      stuck->spin_unlock();
      if (t == nullptr) return Scheduler::halt();
      ++revivals;
      t->wakeup(*stuck);
    }
  };
  auto reviver = std::make_unique<Reviver>();
  Reviver* r = reviver.get();
  Runtime rt{{.processors = 2, .scheduler = std::move(reviver)}};
  SynchroObject event{"event"};
  r->stuck = &event;
  int rounds = rt.run([&] {
    int n = 0;
    for (int i = 0; i < 3; ++i) {
      event.spin_lock();
      event.block();  // nobody else will ever wake us: only halt() does
      ++n;
    }
    return n;
  });
  CHECK(rounds == 3);
  CHECK(r->revivals == 3);
  presto::test::check_no_leaks(rt);
}
