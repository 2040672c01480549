// Misuse raises presto::UsageError naming the object and the thread, before any state was
// changed, so the program can go on: exiting a monitor or unlocking a lock one does not hold,
// waiting or signalling without the monitor, starting a thread twice, joining twice or
// joining oneself, destroying an object with waiters, waking a thread that is not asleep.

#include <algorithm>
#include <memory>
#include <string>
#include <thread>

#include <spdlog/spdlog.h>

#include "test_support.hpp"

using namespace presto;
using Catch::Matchers::Contains;

namespace {

// Runs `f` in a presto thread and returns the message of the UsageError it throws ("" if none).
template <class F>
std::string usage_error_of(F f, std::size_t processors = 2) {
  Runtime rt{{.processors = processors}};
  std::string message = rt.run([&] {
    try {
      f();
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  });
  presto::test::check_no_leaks(rt);
  return message;
}

}  // namespace

TEST_CASE("exiting a monitor one does not hold", "[core][misuse]") {
  std::string never_held = usage_error_of([] {
    Monitor m{"buffer"};
    m.exit();
  });
  CHECK_THAT(never_held, Contains("thread 'main' (id 1)") && Contains("monitor 'buffer'") &&
                             Contains("does not hold") && Contains("nobody holds it"));

  std::string held_by_other = usage_error_of([] {
    Monitor m{"buffer"};
    Semaphore held{0}, done{0};
    auto owner = fork(ThreadAttributes{.name = "owner"}, [&] {
      Monitor::Entry e{m};
      held.release();
      done.acquire();
    });
    held.acquire();
    struct Release {
      Semaphore& done;
      JoinHandle<void>& owner;
      ~Release() {
        done.release();
        owner.join();
      }
    } release{done, owner};
    m.exit();
  });
  CHECK_THAT(held_by_other, Contains("monitor 'buffer'") && Contains("held by thread 'owner'"));
}

TEST_CASE("unlocking a Lock one does not hold, and relocking one held", "[core][misuse]") {
  CHECK_THAT(usage_error_of([] {
               Lock l{"table lock"};
               l.unlock();
             }),
             Contains("released lock 'table lock'") && Contains("thread 'main'"));
  CHECK_THAT(usage_error_of([] {
               Lock l{"table lock"};
               l.lock();
               struct Unlock {
                 Lock& l;
                 ~Unlock() { l.unlock(); }
               } unlock{l};
               l.lock();
             }),
             Contains("tried to acquire lock 'table lock', which it already holds"));
}

TEST_CASE("waiting on or signalling a condition without its monitor", "[core][misuse]") {
  CHECK_THAT(usage_error_of([] {
               Monitor m{"buffer"};
               Condition c{m, "nonempty"};
               c.signal();
             }),
             Contains("called signal on condition 'nonempty' of monitor 'buffer' without holding monitor 'buffer'"));
  CHECK_THAT(usage_error_of([] {
               Monitor m{"buffer"}, other{"other"};
               Condition c{m, "nonempty"};
               Monitor::Entry e{other};
               c.wait(e);
             }),
             Contains("with an entry of monitor 'other'"));
  CHECK_THAT(usage_error_of([] {
               Monitor m{"buffer"};
               Condition c{m, "nonempty"};
               Monitor::Entry e{m};
               m.exit();  // the guard's monitor is no longer held
               struct Reenter {
                 Monitor& m;
                 ~Reenter() { m.entry(); }
               } reenter{m};
               c.wait(e);
             }),
             Contains("called wait on condition 'nonempty'") && Contains("without holding monitor 'buffer'"));
}

TEST_CASE("starting a thread twice", "[core][misuse]") {
  CHECK_THAT(usage_error_of([] {
               Thread t{"twice"};
               t.start([] {});
               struct Join {
                 Thread& t;
                 ~Join() { t.join(); }
               } join{t};
               t.start([] {});
             }),
             Contains("thread 'twice'") && Contains("was already started"));
}

TEST_CASE("joining twice, joining oneself, joining a thread never started", "[core][misuse]") {
  CHECK_THAT(usage_error_of([] {
               Thread t{"joinee"};
               t.start([] {});
               t.join();
               t.join();
             }),
             Contains("cannot join thread 'joinee'") && Contains("already joined"));
  CHECK_THAT(usage_error_of([] {
               auto h = fork([] {});
               h.join();
               h.join();
             }),
             Contains("called JoinHandle::join on the handle of thread '<unnamed>' (id ") &&
                 Contains("already joined or detached"));
  CHECK_THAT(usage_error_of([] {  // the whole name, however long
               auto h = fork(ThreadAttributes{.name = "a worker with a long and descriptive name"}, [] {});
               h.join();
               JoinHandle<void> moved = std::move(h);  // the name goes with the handle
               moved.join();
             }),
             Contains("the handle of thread 'a worker with a long and descriptive name' (id "));
  CHECK_THAT(usage_error_of([] {
               auto h = fork(ThreadAttributes{.name = "double-joined"}, [] {});
               h.join();
               h.join();
             }),
             Contains("called JoinHandle::join on the handle of thread 'double-joined' (id ") &&
                 Contains("already joined or detached"));
  CHECK_THAT(usage_error_of([] {
               auto h = fork(ThreadAttributes{.name = "detached"}, [] {});
               h.detach();
               h.detach();
             }),
             Contains("JoinHandle::detach on the handle of thread 'detached'"));
  CHECK_THAT(usage_error_of([] { Thread::current().join(); }), Contains("thread 'main' (id 1) tried to join itself"));
  CHECK_THAT(usage_error_of([] {
               Thread t{"idle"};
               t.join();
             }),
             Contains("cannot join thread 'idle'") && Contains("never started"));
}

TEST_CASE("destroying a monitor or a condition threads wait on", "[core][misuse]") {
  // The waiter is left blocked on the destroyed object: it is reported, then abandoned.
  Runtime rt{{.processors = 2}};
  std::string message;
  std::string deadlock;
  try {
    rt.run([&] {
      auto m = std::make_unique<Monitor>("doomed");
      m->entry();
      auto waiter = fork(ThreadAttributes{.name = "waiter"}, [&] { Monitor::Entry e{*m}; });
      while (!presto::test::has_waiters(*m)) this_thread::yield();
      try {
        delete m.release();  // unique_ptr::reset is noexcept: it would terminate instead
      } catch (const UsageError& e) {
        message = e.what();
      }
      waiter.detach();
    });
  } catch (const Deadlock& d) {
    deadlock = d.what();
  }
  CHECK_THAT(message, Contains("monitor 'doomed' destroyed by thread 'main'") && Contains("thread 'waiter'"));
  CHECK_THAT(deadlock, Contains("thread 'waiter'") && Contains("an object that was destroyed"));
  presto::test::check_no_leaks(rt);

  Runtime rt2{{.processors = 1}};
  std::string condition_message;
  CHECK_THROWS_AS(rt2.run([&] {
                    Monitor m{"m"};
                    auto c = std::make_unique<Condition>(m, "doomed condition");
                    auto waiter = fork(ThreadAttributes{.name = "sleeper"}, [&] {
                      Monitor::Entry e{m};
                      c->wait(e);
                    });
                    while (!presto::test::has_waiters(*c)) this_thread::yield();
                    try {
                      delete c.release();
                    } catch (const UsageError& e) {
                      condition_message = e.what();
                    }
                    waiter.detach();
                  }),
                  Deadlock);
  CHECK_THAT(condition_message, Contains("condition 'doomed condition' of monitor 'm' destroyed") &&
                                    Contains("thread 'sleeper'"));
}

TEST_CASE("waking a thread that is not asleep", "[core][misuse]") {
  CHECK_THAT(usage_error_of([] {
               SynchroObject so{"event"};
               Thread::current().wakeup(so);
             }),
             Contains("tried to wake thread 'main' (id 1) from synchro object 'event'") && Contains("not asleep"));
}

TEST_CASE("putting another thread to sleep, or yielding it", "[core][misuse]") {
  CHECK_THAT(usage_error_of([] {
               Thread t{"other"};
               t.yield();
             }),
             Contains("tried to make thread 'other'") && Contains("yield"));
  CHECK_THAT(usage_error_of([] {
               SynchroObject so{"event"};
               Thread t{"other"};
               so.spin_lock();
               t.sleep(so);  // releases the spinlock before throwing
             }),
             Contains("tried to put thread 'other'") && Contains("to sleep"));
}

TEST_CASE("presto::fork and Thread::start outside a presto thread", "[core][misuse]") {
  CHECK_THROWS_WITH(fork([] {}), Contains("presto::fork called on external thread") && Contains("Runtime::fork"));
  Thread t{"orphan"};
  CHECK_THROWS_WITH(t.start([] {}), Contains("start of thread 'orphan'") && Contains("Runtime::start"));
  CHECK(t.state() == ThreadState::created);  // nothing changed
}

TEST_CASE("join<R> with the wrong result type", "[core][misuse]") {
  CHECK_THAT(usage_error_of([] {
               Thread t{"typed"};
               t.start([] { return 42; });
               t.join<std::string>();
             }),
             Contains("join<R>() on thread 'typed'"));
}

TEST_CASE("bad environment values are refused with the variable's name", "[core][misuse]") {
  const std::size_t hardware = std::max(1u, std::thread::hardware_concurrency());
  setenv("PRESTO_PROCESSORS", "many", 1);
  CHECK_THROWS_WITH(Runtime{}, Contains("PRESTO_PROCESSORS='many' is not a non-negative integer"));
  setenv("PRESTO_PROCESSORS", "0", 1);  // what RuntimeConfig::processors = 0 means
  CHECK(Runtime{{.processors = 1}}.processors() == hardware);
  const std::string too_many = std::to_string(kMaxProcessorsPerHardwareThread * hardware + 1);
  setenv("PRESTO_PROCESSORS", too_many.c_str(), 1);
  CHECK_THROWS_WITH(Runtime{}, Contains("PRESTO_PROCESSORS = " + too_many + " is more than 64 times"));
  unsetenv("PRESTO_PROCESSORS");
  CHECK_THROWS_WITH(Runtime{{.processors = 100'000 * hardware}},
                    Contains("RuntimeConfig::processors = ") && Contains("hardware threads"));
  CHECK(resolve_processors(0) == hardware);
  CHECK(resolve_processors(3) == 3);
  CHECK_THROWS_WITH(resolve_processors(std::size_t(-1), "--processors"), Contains("--processors = "));
  for (const char* variable : {"PRESTO_LOG", "PRESTO_LOG_LEVEL"}) {
    setenv(variable, "chatty", 1);
    CHECK_THROWS_WITH(Runtime{}, Contains(std::string(variable) + "='chatty'"));
    unsetenv(variable);
  }
  auto logger = std::make_shared<spdlog::logger>("quiet");
  setenv("PRESTO_LOG_LEVEL", "debug", 1);
  { Runtime rt{{.processors = 1, .logger = logger}}; }
  CHECK(logger->level() == spdlog::level::debug);
  unsetenv("PRESTO_LOG_LEVEL");
  setenv("PRESTO_PROCESSORS", "3", 1);
  setenv("PRESTO_SEED", "12345", 1);
  Runtime rt{{.processors = 1, .seed = 7}};
  CHECK(rt.processors() == 3);  // the environment overrides the configuration
  CHECK(rt.seed() == 12345);
  unsetenv("PRESTO_PROCESSORS");
  unsetenv("PRESTO_SEED");
}

TEST_CASE("an emptied handle outlives its runtime and still names its thread", "[core][misuse]") {
  JoinHandle<void> kept;  // declared before the runtime: destroyed after it
  {
    Runtime rt{{.processors = 1}};
    rt.run([&] {
      kept = fork(ThreadAttributes{.name = "outlived"}, [] {});
      kept.join();
    });
  }
  CHECK_FALSE(kept.joinable());
  CHECK_THAT(usage_error_of([&] { kept.join(); }),
             Contains("JoinHandle::join on the handle of thread 'outlived' (id ") && Contains("already joined"));
}

TEST_CASE("finishing while holding a lock ends the run, naming the thread", "[core][misuse]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  Runtime rt{presto::test::runtime_config(cfg)};
  Lock lock{"forgotten"};
  CHECK_THROWS_WITH(rt.run([&] {
                      auto careless = fork(ThreadAttributes{.name = "careless"}, [&] { lock.lock(); });
                      careless.join();
                      Semaphore never{0};
                      never.acquire();  // the run ends before this could matter
                    }),
                    Contains("thread 'careless'") && Contains("finished while holding 1 lock(s)"));
  presto::test::check_no_leaks(rt);
  // Its control block was not recycled: no new thread appears to own the lock.
  bool owned_by_newcomer = rt.run([&] { return fork([&] { return lock.held_by_current_thread(); }).join(); });
  CHECK_FALSE(owned_by_newcomer);
}

TEST_CASE("destroying a lock another live thread holds", "[core][misuse]") {
  Runtime rt{{.processors = 2}};
  std::string message;
  Semaphore held{0, "held"}, never{0, "never"};
  CHECK_THROWS_AS(rt.run([&] {
                    auto* lock = new Lock("shared");
                    fork(ThreadAttributes{.name = "holder"}, [&] {
                      lock->lock();
                      held.release();
                      never.acquire();  // holds the lock until the run ends
                    }).detach();
                    held.acquire();
                    try {
                      delete lock;
                    } catch (const UsageError& e) {
                      message = e.what();
                    }
                  }),
                  Deadlock);  // the holder still waits: it is reported, then abandoned
  CHECK_THAT(message, Contains("lock 'shared' destroyed by thread 'main'") && Contains("while thread 'holder'"));
  presto::test::check_no_leaks(rt);
}
