// Timed and cancellable waits of the core's synchronization objects: deadlines that pass and
// deadlines that are met, stops requested before and during a wait, and stops racing the
// wake-up they compete with (no wake-up, no unit, no arrival is lost), over every
// configuration (processors {1, 2, 4} x every pool, the seeded shuffle pool included).

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"
#include "waits_support.hpp"

using namespace presto;
using namespace std::chrono_literals;

namespace {

// Yields until `so` has a waiter (the thread under test is asleep on it).
void await_waiter(SynchroObject& so) {
  while (!presto::test::has_waiters(so)) this_thread::yield();
}

// Runs `wait` (which must block and throw Cancelled) on a new thread, requests the stop once it
// sleeps, and returns the Cancelled's message ("" if none was thrown).
template <class Wait>
std::string cancel_while_waiting(Wait wait) {
  StopSource stop;
  auto waiter = fork([&, token = stop.get_token()]() -> std::string {
    try {
      wait(token);
    } catch (const Cancelled& e) {
      return e.what();
    }
    return "";
  });
  presto::test::await_blocked(waiter.thread());
  stop.request_stop();
  return waiter.join();
}

}  // namespace

TEST_CASE("timed waits time out when nobody comes and succeed when somebody does", "[waits]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    Lock lock{"timed lock"};
    Semaphore sem{0, "timed semaphore"};
    Barrier barrier{2, "timed barrier"};
    Monitor m{"timed monitor"};
    Condition c{m, "timed condition"};

    // Nobody comes: each gives up, and leaves the object as it found it.
    lock.lock();
    auto other = fork([&] { return lock.try_lock_for(1ms); });
    record.expect(!other.join(), "try_lock_for succeeded on a held lock");
    lock.unlock();
    record.expect(!sem.try_acquire_for(1ms), "try_acquire_for succeeded on an empty semaphore");
    record.expect(barrier.arrive_and_wait_for(1ms) == Barrier::Arrival::timed_out, "a lone arrival passed");
    {
      Monitor::Entry entry{m};
      record.expect(!c.wait_for(entry, 1ms), "wait_for on an unsignalled condition reported a signal");
    }
    // A deadline already past is a try.
    record.expect(lock.try_lock_until(Clock::now() - 1s), "try_lock_until(past) failed on a free lock");
    lock.unlock();

    // Somebody comes before the deadline.
    lock.lock();
    auto taker = fork([&] {
      const bool got = lock.try_lock_for(1h);
      if (got) lock.unlock();
      return got;
    });
    await_waiter(lock);
    lock.unlock();
    record.expect(taker.join(), "try_lock_for missed an unlock");

    auto acquirer = fork([&] { return sem.try_acquire_for(1h); });
    await_waiter(sem);
    sem.release();
    record.expect(acquirer.join(), "try_acquire_for missed a release");
    record.expect(sem.value() == 0, "the released unit went somewhere else");

    // The withdrawn arrival above does not count: the phase still needs both parties.
    auto partner = fork([&] { return barrier.arrive_and_wait_for(1h); });
    await_waiter(barrier);
    const bool last = barrier.arrive_and_wait();
    const Barrier::Arrival theirs = partner.join();
    record.expect(last && theirs == Barrier::Arrival::passed, "the barrier's phase ended wrongly");
    record.expect(barrier.phase() == 1, "a withdrawn arrival completed a phase");
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("every blocking operation wakes with Cancelled naming the object and the thread", "[waits]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    auto expect_cancelled = [&](const std::string& message, const std::string& object) {
      record.expect(message.find(object) != std::string::npos && message.find("thread '") != std::string::npos &&
                        message.find("cancelled") != std::string::npos,
                    "Cancelled's message does not name " + object + " and the thread: '" + message + "'");
    };

    Lock lock{"held"};
    lock.lock();
    expect_cancelled(cancel_while_waiting([&](const StopToken& t) { lock.lock(t); }), "lock 'held'");
    expect_cancelled(cancel_while_waiting([&](const StopToken& t) { lock.try_lock_until(Clock::now() + 1h, t); }),
                     "lock 'held'");
    lock.unlock();

    Semaphore sem{0, "empty"};
    expect_cancelled(cancel_while_waiting([&](const StopToken& t) { sem.acquire(t); }), "semaphore 'empty'");
    record.expect(sem.value() == 0, "a cancelled acquire changed the count");

    Barrier barrier{2, "pair"};
    expect_cancelled(cancel_while_waiting([&](const StopToken& t) { barrier.arrive_and_wait(t); }),
                     "barrier 'pair'");
    record.expect(barrier.phase() == 0, "a cancelled arrival completed a phase");

    Monitor m{"mon"};
    Condition c{m, "never"};
    bool held_after = false;
    expect_cancelled(cancel_while_waiting([&](const StopToken& t) {
                                            Monitor::Entry entry{m};
                                            try {
                                              c.wait(entry, t, [] { return false; });
                                            } catch (const Cancelled&) {
                                              held_after = m.held_by_current_thread();
                                              throw;
                                            }
                                          }),
                     "condition 'never' of monitor 'mon'");
    record.expect(held_after, "a cancelled Condition wait returned without the monitor");
    m.entry();
    expect_cancelled(cancel_while_waiting([&](const StopToken& t) { Monitor::Entry entry{m, t}; }), "monitor 'mon'");
    m.exit();

    expect_cancelled(cancel_while_waiting([&](const StopToken& t) { this_thread::sleep_for(1h, t); }), "timer 'sleep'");

    // join: the joined thread waits on a semaphore nobody releases until after the stop.
    Semaphore go{0, "go"};
    auto sleeper = fork([&] { go.acquire(); });
    expect_cancelled(cancel_while_waiting([&](const StopToken& t) { sleeper.join(t); }),
                     "join on thread");
    go.release();
    sleeper.join();  // still joinable after the cancelled join
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("a release racing a stop is never lost", "[waits][race]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const std::size_t iterations = presto::test::scaled(200);
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    for (std::size_t i = 0; i < iterations; ++i) {
      Semaphore sem{0, "raced"};
      StopSource stop;
      auto waiter = fork([&, token = stop.get_token()] {
        try {
          sem.acquire(token);
          return true;
        } catch (const Cancelled&) {
          return false;
        }
      });
      if (i % 2 == 0) await_waiter(sem);  // half the time the stop may also come first
      auto releaser = fork([&] { sem.release(); });
      auto canceller = fork([&] { stop.request_stop(); });
      const bool got = waiter.join();
      releaser.join();
      canceller.join();
      // The unit went to the waiter or stayed in the semaphore: never lost, never doubled.
      record.expect(sem.value() == (got ? 0 : 1), "iteration " + std::to_string(i) + ": a unit was lost");
    }
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("a signal racing a stop reaches another waiter", "[waits][race]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const std::size_t iterations = presto::test::scaled(200);
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    for (std::size_t i = 0; i < iterations; ++i) {
      Monitor m{"items"};
      Condition nonempty{m, "nonempty"};
      int items = 0;
      bool done = false;
      StopSource stop;
      // a: cancellable; b: not. One item, one signal: whichever is woken must take it.
      auto a = fork([&, token = stop.get_token()] {
        Monitor::Entry entry{m};
        try {
          nonempty.wait(entry, token, [&] { return items > 0; });
        } catch (const Cancelled&) {
          return false;
        }
        --items;
        return true;
      });
      auto b = fork([&] {
        Monitor::Entry entry{m};
        nonempty.wait(entry, [&] { return items > 0 || done; });
        if (items == 0) return false;
        --items;
        return true;
      });
      while (a.thread().state() != ThreadState::blocked || b.thread().state() != ThreadState::blocked) {
        this_thread::yield();
      }
      auto signaller = fork([&] {
        Monitor::Entry entry{m};
        ++items;
        nonempty.signal();
      });
      auto canceller = fork([&] { stop.request_stop(); });
      signaller.join();
      canceller.join();
      if (a.join()) {  // a took it: b waits on, until told it is over
        Monitor::Entry entry{m};
        done = true;
        nonempty.broadcast();
      }
      // If a was cancelled, only the signal can wake b: were it lost, this join would end
      // the run with Deadlock.
      const bool b_took = b.join();
      record.expect(items == 0, "iteration " + std::to_string(i) + ": the item was not taken");
      (void)b_took;
    }
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("a stop requested before the wait is seen without sleeping; no token costs nothing", "[waits]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    StopSource stop;
    stop.request_stop();
    record.expect(!stop.request_stop(), "a second request_stop reported success");
    Semaphore sem{1, "one"};
    sem.acquire(stop.get_token());  // a unit is there: no wait, no Cancelled
    bool thrown = false;
    try {
      sem.acquire(stop.get_token());
    } catch (const Cancelled& e) {
      thrown = std::string(e.object()) == "semaphore 'one'" && e.thread().find("thread") == 0;
    }
    record.expect(thrown, "acquire with a stopped token slept or named the wrong object");
    // A default token can never be stopped: an ordinary wait.
    auto releaser = fork([&] { sem.release(); });
    sem.acquire(StopToken{});
    releaser.join();
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("an OS thread's waits are cancellable too", "[waits]") {
  Semaphore sem{0, "os"};
  StopSource stop;
  std::string message;
  std::thread os([&] {
    try {
      sem.acquire(stop.get_token());
    } catch (const Cancelled& e) {
      message = e.what();
    }
  });
  while (!presto::test::has_waiters(sem)) std::this_thread::yield();
  stop.request_stop();
  os.join();
  CHECK(message.find("semaphore 'os'") != std::string::npos);
  CHECK(message.find("external thread") != std::string::npos);
  std::thread sleeper([&, token = stop.get_token()] {
    try {
      this_thread::sleep_for(1h, token);
    } catch (const Cancelled&) {
      message = "slept no more";
    }
  });
  sleeper.join();
  CHECK(message == "slept no more");
}

TEST_CASE("plain, timed and cancelled lockers mixed: exclusion kept, no wake-up lost", "[waits][race]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const int threads = 8, rounds = static_cast<int>(presto::test::scaled(300));
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    Lock lock{"mixed"};
    Semaphore sem{1, "mixed units"};
    StopSource stop;
    long count = 0;
    std::atomic<long> successes{0};
    std::atomic<int> inside{0};
    std::vector<JoinHandle<void>> hs;
    for (int t = 0; t < threads; ++t) {
      hs.push_back(fork([&, t, token = stop.get_token()] {
        for (int r = 0; r < rounds; ++r) {
          if (t == 0 && r == rounds / 2) stop.request_stop();  // half-way: cancel the token users
          bool got = false;
          try {
            switch ((r + t) % 3) {
              case 0: lock.lock(); got = true; break;
              case 1: got = lock.try_lock_for(std::chrono::microseconds(r % 50)); break;
              default: lock.lock(token); got = true; break;
            }
          } catch (const Cancelled&) {
          }
          if (got) {
            record.expect(inside.fetch_add(1) == 0, "two holders of the lock");
            const long v = count;
            if (r % 4 == 0) this_thread::yield();
            count = v + 1;
            inside.fetch_sub(1);
            successes.fetch_add(1);
            lock.unlock();
          }
          // The semaphore the same way: every unit taken is given back, none is lost.
          bool unit = false;
          try {
            unit = (r + t) % 2 == 0 ? sem.try_acquire_for(std::chrono::microseconds(r % 30)) : (sem.acquire(token), true);
          } catch (const Cancelled&) {
          }
          if (unit) {
            this_thread::yield();
            sem.release();
          }
        }
      }));
    }
    for (auto& h : hs) h.join();
    record.expect(count == successes.load(), "an increment was lost under the lock");
    record.expect(sem.value() == 1, "the semaphore lost or gained a unit: " + std::to_string(sem.value()));
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("plain, timed and cancelled waiters of one condition mixed: no signal lost, no waiter left", "[waits][race]") {
  // A signal pops its waiter without the condition's spinlock while no timed or cancellable
  // waiter is queued; here timeouts and stops keep taking waiters off the queue while plain
  // waiters come and go, so both paths run against each other.
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const int producers = 2, consumers = 6, rounds = static_cast<int>(presto::test::scaled(300));
  const int total = producers * rounds;
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    Monitor m{"items"};
    Condition nonempty{m, "nonempty"};
    StopSource stop;
    int items = 0, consumed = 0;
    std::vector<JoinHandle<int>> hs;
    for (int t = 0; t < consumers; ++t) {
      hs.push_back(fork([&, t, token = stop.get_token()] {
        int mine = 0;
        bool cancellable = t % 3 == 2;
        Monitor::Entry entry{m};
        for (;;) {
          while (items == 0 && consumed < total) {
            if (t % 3 == 0) {
              nonempty.wait(entry);
            } else if (t % 3 == 1) {
              (void)nonempty.wait_for(entry, std::chrono::microseconds(1 + mine % 20));
            } else if (cancellable) {
              try {
                nonempty.wait(entry, token);
              } catch (const Cancelled&) {
                cancellable = false;  // the monitor is held again; wait plainly from now on
              }
            } else {
              nonempty.wait(entry);
            }
          }
          if (consumed == total) return mine;
          --items;
          ++mine;
          if (++consumed == total) nonempty.broadcast();  // the others wait for no more items
        }
      }));
    }
    std::vector<JoinHandle<void>> ps;
    for (int p = 0; p < producers; ++p) {
      ps.push_back(fork([&, p] {
        for (int r = 0; r < rounds; r += 2) {
          if (p == 0 && r == rounds / 2) stop.request_stop();
          {
            Monitor::Entry entry{m};
            ++items;
            nonempty.signal();  // deferred to the release
            if (r + 1 < rounds) {
              ++items;
              nonempty.signal();  // a second signal wakes its waiter at once
            }
          }
          if (r % 8 == 0) this_thread::yield();
        }
      }));
    }
    for (auto& h : ps) h.join();
    int taken = 0;
    for (auto& h : hs) taken += h.join();  // a lost signal would leave a plain waiter asleep: Deadlock
    record.expect(taken == total && items == 0, "items taken " + std::to_string(taken) + " of " + std::to_string(total) +
                                                    ", left " + std::to_string(items));
    record.expect(!presto::test::has_waiters(nonempty), "a waiter is still queued on the condition");
  });
  PRESTO_CHECK_RECORD(record);
}
