// Every synchronization object works from plain OS threads (main() before run(), a
// std::thread): Thread::current() there is an external thread, whose sleep parks the OS
// thread, so OS threads and presto threads can share monitors, locks, semaphores and
// conditions in both directions.

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace presto;
using namespace std::chrono_literals;

TEST_CASE("synchronization objects work in main() before run()", "[core][interop]") {
  Monitor m{"config"};
  Condition c{m, "ready"};
  Lock l{"lock"};
  Semaphore s{1};
  AtomicInt a{0};
  {
    Monitor::Entry e{m};
    CHECK(m.owner() == &Thread::current());
    CHECK(Thread::current().is_external());
    c.signal();  // nobody waits: a no-op, but legal with the monitor held
    CHECK_FALSE(c.wait_for(e, 1ms, [] { return false; }));  // times out on the OS thread
  }
  l.lock();
  l.unlock();
  s.acquire();
  CHECK_FALSE(s.try_acquire());
  s.release();
  a += 5;
  CHECK(a == 5);
  sleep_for(1ms);  // std::this_thread::sleep_for off the runtime
  this_thread::yield();
}

TEST_CASE("OS threads and presto threads share a monitor and condition", "[core][interop]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  Runtime rt{presto::test::runtime_config(cfg)};
  Monitor m{"shared"};
  Condition turn{m, "turn"};
  int whose = 0;
  const int rounds = static_cast<int>(presto::test::scaled(300));
  int os_turns = 0, presto_turns = 0;
  KeepAlive alive = rt.keep_alive();
  std::thread os_player([&] {
    for (int i = 0; i < rounds; ++i) {
      Monitor::Entry e{m};
      turn.wait(e, [&] { return whose == 0; });  // parks the OS thread
      ++os_turns;
      whose = 1;
      turn.signal();  // wakes the presto thread
    }
    alive.reset();
  });
  rt.run([&] {
    for (int i = 0; i < rounds; ++i) {
      Monitor::Entry e{m};
      turn.wait(e, [&] { return whose == 1; });
      ++presto_turns;
      whose = 0;
      turn.signal();  // wakes the OS thread
    }
  });
  os_player.join();
  CHECK(os_turns == rounds);
  CHECK(presto_turns == rounds);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("a Lock contended by OS threads and presto threads", "[core][interop]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  Runtime rt{presto::test::runtime_config(cfg)};
  Lock lock{"counter"};
  long counter = 0;
  const int per_thread = static_cast<int>(presto::test::scaled(2000));
  auto bump = [&] {
    for (int i = 0; i < per_thread; ++i) {
      std::scoped_lock g(lock);
      long v = counter;
      if (i % 64 == 0) std::this_thread::yield();
      counter = v + 1;
    }
  };
  KeepAlive alive = rt.keep_alive();
  std::atomic<int> os_done{0};
  std::vector<std::thread> os_threads;
  for (int i = 0; i < 2; ++i) {
    os_threads.emplace_back([&] {
      bump();
      if (os_done.fetch_add(1) == 1) alive.reset();
    });
  }
  rt.run([&] {
    std::vector<JoinHandle<void>> hs;
    for (int i = 0; i < 4; ++i) hs.push_back(fork(bump));
    for (auto& h : hs) h.join();
  });
  for (auto& t : os_threads) t.join();
  CHECK(counter == 6L * per_thread);
}

TEST_CASE("an OS thread blocks on a semaphore a presto thread releases", "[core][interop]") {
  Runtime rt{{.processors = 2}};
  Semaphore handoff{0, "handoff"};
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    handoff.acquire();  // parks this OS thread until a presto thread releases
    got = true;
  });
  rt.run([&] {
    while (!presto::test::has_waiters(handoff)) sleep_for(1ms);
    handoff.release();
  });
  waiter.join();
  CHECK(got);
}

TEST_CASE("joining a runtime's thread from an OS thread while it runs", "[core][interop]") {
  Runtime rt{{.processors = 2}};
  KeepAlive alive = rt.keep_alive();
  auto worker = rt.fork([] {
    sleep_for(10ms);
    return 99;
  });
  int joined = 0;
  std::thread joiner([&] {
    joined = worker.join();  // the OS thread sleeps on the presto thread
    alive.reset();
  });
  rt.run([] {});
  joiner.join();
  CHECK(joined == 99);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("Thread::current() on an OS thread is an external thread", "[core][interop]") {
  std::string seen;
  bool external = false;
  std::thread([&] {
    external = Thread::current().is_external();
    seen = Thread::current().describe();
    CHECK(&Thread::current() == &Thread::current());  // one object per OS thread
  }).join();
  CHECK(external);
  CHECK(seen.rfind("external thread 'os-", 0) == 0);
}
