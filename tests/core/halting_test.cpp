// Halting: run() returns when no thread is ready or running and no wake-up can come. Blocked
// survivors are a Deadlock listing each thread and what it waits on; an exception nobody can
// join ends the run; timers and KeepAlives keep the system up, and one runtime's timers serve
// run after run; an idle runtime uses no CPU,
// and its stats count the parks and wake-ups;
// Scheduler::halt() can be overridden to revive the system (as PSIM does); an IdlePoller's last
// waiter leaving never strands the halt check.

#include <chrono>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include <presto/idle_poller.hpp>

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

// A waiter signalled by a thread that then blocks, still holding the monitor, waits for the
// monitor now, not for the signal: the report must say so (the signal's wake-up, deferred
// until the signaller lets the monitor go, is not left pending while it sleeps).
TEST_CASE("a deadlock report shows a signalled waiter waiting for its monitor", "[core][halting]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  Runtime rt{presto::test::runtime_config(cfg)};
  Monitor m{"m"};
  Condition c{m, "c"};
  Semaphore never{0, "never"};
  try {
    rt.run([&] {
      bool waiting = false, go = false;
      auto waiter = fork(ThreadAttributes{.name = "waiter"}, [&] {
        Monitor::Entry e{m};
        waiting = true;
        c.wait(e, [&] { return go; });
      });
      while (true) {  // until the waiter waits on c
        {
          Monitor::Entry e{m};
          if (waiting) {
            go = true;
            c.signal();
            never.acquire();  // blocks forever, holding m
          }
        }
        this_thread::yield();
      }
    });
    FAIL("run() returned although every thread was blocked");
  } catch (const Deadlock& d) {
    const auto& blocked = d.blocked();
    REQUIRE(blocked.size() == 2);
    for (const auto& b : blocked) {
      if (b.thread.find("'waiter'") != std::string::npos) {
        CHECK_THAT(b.waiting_on, Contains("monitor 'm', held by thread 'main'"));
      } else {
        CHECK_THAT(b.thread, Contains("thread 'main'"));
        CHECK_THAT(b.waiting_on, Contains("semaphore 'never'"));
      }
    }
  }
  presto::test::check_no_leaks(rt);
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

TEST_CASE("one runtime serves timers run after run, also after runs that armed none or ended with one armed", "[core][halting]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  Runtime rt{presto::test::runtime_config(cfg)};
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    CHECK(rt.run([] { return 1; }) == 1);  // arms no timer: the timer thread is left asleep
    const auto start = Clock::now();
    CHECK(rt.run([] {
      sleep_for(2ms);
      return 2;
    }) == 2);
    CHECK(Clock::now() - start >= 2ms);
    CHECK(rt.run([] {
      Semaphore never{0, "never"}, soon{0, "soon"};
      auto releaser = fork([&] { soon.release(); });
      const bool timed_out = !never.try_acquire_for(1ms);
      const bool acquired = soon.try_acquire_for(1h);  // cancels its timer
      releaser.join();
      return timed_out && acquired ? 3 : 0;
    }) == 3);
    // Ended by an exception while a thread sleeps: the sleeper is abandoned, its timer cancelled.
    CHECK_THROWS_WITH(rt.run([]() -> int {
                        fork([] { sleep_for(1h); }).detach();
                        this_thread::yield();
                        throw std::logic_error("main failed");
                      }),
                      "main failed");
    CHECK(rt.stats().pending_timers == 0);
  }
  presto::test::check_no_leaks(rt);
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

TEST_CASE("stats count the parks of idle processors and their wake-ups", "[core][halting]") {
  // Each sleep leaves both processors with nothing to run: with no spinning first, they park,
  // and the timer's expiry wakes one to run the sleeper again.
  Runtime rt{{.processors = 2, .idle_spin = 0}};
  const RuntimeStats before = rt.stats();
  rt.run([] {
    for (int i = 0; i < 5; ++i) sleep_for(2ms);
  });
  const RuntimeStats after = rt.stats();
  CHECK(before.parks == 0);
  CHECK(before.wakeups == 0);
  CHECK(after.parks >= 5);
  CHECK(after.wakeups >= 5);
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

namespace {

// An IdlePoller that plays one interleaving, step by step, on two processors. A presto thread
// waits for its one event. The first processor to poll without blocking, A, delivers it, but
// only once the other, B, waits in a blocking poll; it then lets B's poll return, and lowers
// waiting() only when B has run the woken thread to its end, found waiting() still true at
// its halt check and parked in the poller again. A must then check for halting itself: if it
// parks instead, B's poll is never woken and the run never ends. A blocking poll that nobody
// wakes within kWatchdog counts as that missed check and returns, so that the test fails
// instead of hanging; if the event has not been delivered by then (no processor polled
// without blocking, which IdlePoller promises), that poll delivers it, so that the run ends.
// The steps themselves wait for each other, never for time. A failure prints the calls as
// they came, each with the processor that made it.
class ScriptedPoller final : public IdlePoller {
 public:
  static constexpr auto kWatchdog = std::chrono::seconds(10);

  ~ScriptedPoller() noexcept override = default;  // IdlePoller's is noexcept; event_'s is not

  void wait_for_event() {  // on the presto thread
    event_.spin_lock();
    waiting_.store(1, std::memory_order_seq_cst);
    event_.block();
  }

  void poll(Processor& p, bool block) noexcept override {
    std::unique_lock lock(mutex_);
    note(&p, block ? "enters a blocking poll" : "polls");
    if (block) {
      ++blocking_entries_;
      ++blocking_now_;
      changed_.notify_all();
      if (!changed_.wait_for(lock, kWatchdog, [&] { return woken_; })) {
        missed_wakeups_.push_back("a blocking poll was not woken within the watchdog's " +
                                  std::to_string(kWatchdog.count()) + " s");
      }
      note(&p, woken_ ? "returns from its blocking poll, woken" : "returns from its blocking poll, not woken");
      woken_ = false;
      --blocking_now_;
      if (!delivered_ && waiting_.load(std::memory_order_seq_cst) != 0) {  // the script cannot go on
        note(&p, "delivers the event, as no processor polled without blocking");
        delivered_ = true;
        deliver(lock);
        waiting_.store(0, std::memory_order_seq_cst);
      }
      return;
    }
    if (waiting_.load(std::memory_order_seq_cst) == 0 || delivered_) return;
    note(&p, "delivers the event");
    delivered_ = true;
    step(lock, "B waits in a blocking poll", [&] { return blocking_now_ > 0; });
    deliver(lock);
    const int entries = blocking_entries_;
    woken_ = true;  // B's poll returns; B runs the thread
    changed_.notify_all();
    step(lock, "B ran the thread and parked in the poller again",
         [&] { return blocking_entries_ > entries && blocking_now_ > 0; });
    waiting_.store(0, std::memory_order_seq_cst);  // the woken thread has ended: nobody waits
    note(&p, "lowers waiting()");
  }

  void wake() noexcept override {
    std::lock_guard lock(mutex_);
    note(Processor::current(), "calls wake()");
    woken_ = true;
    changed_.notify_all();
  }

  bool waiting() const noexcept override { return waiting_.load(std::memory_order_seq_cst) != 0; }

  std::vector<std::string> failures() {
    std::lock_guard lock(mutex_);
    std::vector<std::string> all = script_failures_;
    all.insert(all.end(), missed_wakeups_.begin(), missed_wakeups_.end());
    if (!all.empty()) all.push_back("the calls, in order:\n" + trace_);
    return all;
  }

 private:
  void deliver(std::unique_lock<std::mutex>& lock) {  // makes the waiting thread ready
    lock.unlock();
    event_.spin_lock();
    Thread* t = event_.recall();
    event_.spin_unlock();
    if (t != nullptr) t->wakeup(event_);  // may call wake(): mutex_ not held
    lock.lock();
  }

  void note(const Processor* p, const char* what) {  // mutex_ held
    trace_ += p != nullptr ? "  processor " + std::to_string(p->index()) : std::string("  a thread of no processor");
    trace_ += std::string(" ") + what + "\n";
  }

  template <class Pred>
  void step(std::unique_lock<std::mutex>& lock, const char* what, Pred done) {
    if (!changed_.wait_for(lock, kWatchdog, done)) script_failures_.push_back(std::string("step not reached: ") + what);
  }

  SynchroObject event_{"scripted event"};
  std::atomic<int> waiting_{0};
  std::mutex mutex_;
  std::condition_variable changed_;
  bool woken_ = false;
  bool delivered_ = false;
  int blocking_entries_ = 0;
  int blocking_now_ = 0;
  std::vector<std::string> script_failures_;
  std::vector<std::string> missed_wakeups_;
  std::string trace_;
};

}  // namespace

TEST_CASE("a poll that lets the last waiter go after the others parked still halts the run", "[core][halting]") {
  auto pool = GENERATE(presto::test::PoolKind::fifo, presto::test::PoolKind::lifo, presto::test::PoolKind::priority,
                       presto::test::PoolKind::local_queue, presto::test::PoolKind::local_lifo,
                       presto::test::PoolKind::shuffle);
  // With no spinning, each idle processor makes just the one non-blocking poll the script needs.
  const std::size_t idle_spin = GENERATE(RuntimeConfig{}.idle_spin, std::size_t{0});
  const presto::test::Config cfg{2, pool};
  INFO(cfg << ", idle_spin " << idle_spin);
  RuntimeConfig config = presto::test::runtime_config(cfg);
  config.idle_spin = idle_spin;
  Runtime rt{std::move(config)};
  auto& poller = static_cast<ScriptedPoller&>(rt.install_idle_poller(std::make_unique<ScriptedPoller>()));
  int got = rt.run([&] {
    poller.wait_for_event();
    return 1;
  });
  CHECK(got == 1);
  for (const std::string& failure : poller.failures()) FAIL_CHECK(failure);
  presto::test::check_no_leaks(rt);
}
