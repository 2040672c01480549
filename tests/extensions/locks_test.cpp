// presto::locks: every lock of the family passes the Spinlock conformance harness (mutual
// exclusion on 1, 2 and 4 processors and from plain OS threads, try_lock, FIFO order where the
// lock promises it, rule A under preemption); each guards a SingleLockPool that passes the pool
// conformance harness; and the failure modes the headers promise to survive (Anderson's lock
// with more contenders than slots, MCS/CLH nesting and out-of-order release) hold.

#include <atomic>
#include <initializer_list>
#include <mutex>
#include <string>
#include <utility>
#include <thread>
#include <vector>

#include <presto/locks/locks.hpp>
#include <presto/testing/spinlock_conformance.hpp>

#include "test_support.hpp"

using namespace presto;
using namespace presto::locks;

namespace {

testing::SpinlockConformanceOptions options(bool fifo) {
  testing::SpinlockConformanceOptions o;
  o.iterations = test::scaled(4000);
  o.fifo = fifo;
  o.seed = test::seed();
  return o;
}

}  // namespace

TEST_CASE("every lock of the family passes the spinlock conformance harness", "[locks]") {
  for (const SpinlockKind& k : spinlock_kinds()) {
    INFO("lock " << k.name << ", seed " << test::seed());
    CHECK_NOTHROW(testing::check_spinlock_conformance([&] { return make_spinlock(k.name); }, options(k.fifo)));
  }
}

TEST_CASE("the harness catches a lock that does not exclude", "[locks]") {
  // Never waits and always "succeeds": try_lock from a second thread while the lock is held
  // must fail, and the harness reports that it did not. (Overlaps inside the lock, the other
  // symptom, show only when two OS threads happen to run at once, so they are not relied on.)
  struct Broken final : Spinlock {
   protected:
    void acquire() noexcept override {}
    bool try_acquire() noexcept override { return true; }
    void release() noexcept override {}
  };
  try {
    testing::check_spinlock_conformance([] { return std::make_unique<Broken>(); }, options(false));
    FAIL("a lock that does not exclude passed the harness");
  } catch (const testing::SpinlockConformanceFailure& f) {
    CHECK_THAT(f.what(), Catch::Contains("try_lock") && Catch::Contains("while the lock was held"));
  }
}

TEST_CASE("a SingleLockPool guarded by each lock passes the pool conformance harness", "[locks]") {
  for (const SpinlockKind& k : spinlock_kinds()) {
    INFO("lock " << k.name << ", seed " << test::seed());
    CHECK_NOTHROW(testing::check_pool_conformance(
        [&] { return std::make_unique<SingleLockPool>(make_spinlock(k.name)); }, test::conformance_options(8)));
  }
  CHECK_THROWS_AS(SingleLockPool(std::unique_ptr<Spinlock>{}), UsageError);
}

TEST_CASE("AndersonLock stays exclusive with more contenders than slots", "[locks]") {
  // Two slots, five OS threads and a processor's worth of presto threads: waiters beyond the
  // slots wait for a slot instead of sharing one with the thread two tickets ahead.
  auto make = [] { return std::make_unique<AndersonLock>(2); };
  REQUIRE(AndersonLock(2).slots() == 2);
  REQUIRE(AndersonLock(5).slots() == 8);
  testing::SpinlockConformanceOptions o = options(true);
  o.os_threads = 5;
  o.preemption = false;
  CHECK_NOTHROW(testing::check_spinlock_conformance(make, o));
}

TEST_CASE("queue locks nest and release out of order", "[locks]") {
  // MCS and CLH keep a node per acquisition from the OS thread's free list: two held at once,
  // released in either order, from presto threads on several processors.
  const std::string kind = GENERATE("mcs", "clh", "anderson", "ticket");
  const std::size_t processors = GENERATE(1, 2, 4);
  INFO("lock " << kind << ", " << processors << " processors, seed " << test::seed());
  auto a = make_spinlock(kind);
  auto b = make_spinlock(kind);
  std::size_t in_a = 0, in_both = 0;
  Runtime rt{test::runtime_config({processors, test::PoolKind::shuffle})};
  const std::size_t n = test::scaled(2000);
  rt.run([&] {
    std::vector<JoinHandle<void>> hs;
    for (int t = 0; t < 4; ++t) {
      hs.push_back(fork([&, t] {
        for (std::size_t i = 0; i < n; ++i) {
          a->lock();
          ++in_a;
          b->lock();
          ++in_both;
          if ((i + t) % 2 == 0) {
            a->unlock();
            b->unlock();
          } else {
            b->unlock();
            a->unlock();
          }
          if (i % 32 == 0) this_thread::yield();
        }
      }));
    }
    for (auto& h : hs) h.join();
  });
  CHECK(in_a == 4 * n);
  CHECK(in_both == 4 * n);
  test::check_no_leaks(rt);
}

TEST_CASE("a CLH lock's try_lock reads no freed node while OS threads that used the lock end", "[locks]") {
  // try_lock reads the tail node's flag without holding it: the node may meanwhile pass to the
  // next holder's predecessor slot, into that OS thread's spares, and out with the thread. Short-
  // lived OS threads take the lock a few times each and end while two others keep trying; a node
  // freed under them is a use after free (AddressSanitizer) or a race with the delete
  // (ThreadSanitizer).
  ClhLock lock;
  std::atomic<bool> done{false};
  std::size_t count = 0;
  std::vector<std::thread> probers;
  for (int t = 0; t < 2; ++t) {
    probers.emplace_back([&] {
      while (!done.load(std::memory_order_relaxed)) {
        if (lock.try_lock()) lock.unlock();
      }
    });
  }
  const std::size_t rounds = test::scaled(4000) / 4 + 50;
  for (std::size_t r = 0; r < rounds; ++r) {
    std::thread users[2];
    for (auto& u : users) {
      u = std::thread([&] {
        for (int i = 0; i < 3; ++i) {
          lock.lock();
          ++count;
          lock.unlock();
        }
      });
    }
    for (auto& u : users) u.join();
  }
  done = true;
  for (auto& p : probers) p.join();
  CHECK(count == 6 * rounds);
}

TEST_CASE("each lock of the family serves as the spinlock of a monitor, a condition and a semaphore", "[locks]") {
  // The objects' spinlocks are released by the context that runs after a thread that went to
  // sleep holding one (Dispatch's post-switch action): a bounded buffer under a Monitor and two
  // Conditions, and a Semaphore counting the items, each on the lock under test, over every
  // configuration. Every item arrives once, in order per producer, with the monitor exclusive.
  const std::string kind = GENERATE("tas", "ttas", "ticket", "anderson", "mcs", "clh");
  auto cfg = GENERATE(test::configs());
  INFO("lock " << kind << ", " << cfg);
  const int producers = 3, items = static_cast<int>(test::scaled(600)), capacity = 4;
  test::Record record;
  test::run(cfg, [&] {
    Monitor m{"buffer"};
    Condition nonempty{m, "nonempty"}, nonfull{m, "nonfull"};
    Semaphore produced{0, "produced"};
    for (SynchroObject* so : std::initializer_list<SynchroObject*>{&m, &nonempty, &nonfull, &produced}) {
      so->set_spinlock(make_spinlock(kind));
    }
    record.expect(m.spinlock() != nullptr && produced.spinlock() != nullptr, "set_spinlock did not install the lock");
    std::vector<std::pair<int, int>> buffer;
    int inside = 0, overlaps = 0;
    std::vector<JoinHandle<void>> hs;
    for (int p = 0; p < producers; ++p) {
      hs.push_back(fork([&, p] {
        for (int i = 0; i < items; ++i) {
          {
            Monitor::Entry e{m};
            nonfull.wait(e, [&] { return buffer.size() < capacity; });
            overlaps += ++inside != 1;  // counted between the wait and the exit: the monitor is ours
            buffer.emplace_back(p, i);
            --inside;
            nonempty.signal();
          }
          produced.release();
          if (i % 16 == 0) this_thread::yield();
        }
      }));
    }
    std::vector<int> next(producers, 0);
    for (int n = 0; n < producers * items; ++n) {
      produced.acquire();
      Monitor::Entry e{m};
      nonempty.wait(e, [&] { return !buffer.empty(); });
      overlaps += ++inside != 1;
      const auto [p, i] = buffer.front();
      buffer.erase(buffer.begin());
      record.expect(i == next[p]++, "item " + std::to_string(i) + " of producer " + std::to_string(p) + " out of order");
      --inside;
      nonfull.signal();
    }
    for (auto& h : hs) h.join();
    record.expect(overlaps == 0, std::to_string(overlaps) + " entries found the monitor occupied");
    record.expect(buffer.empty() && produced.value() == 0, "items left over");
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("set_spinlock refuses an object in use, naming it and the caller", "[locks]") {
  test::run({}, [] {
    Semaphore sem{0, "in use"};
    auto waiter = fork([&] { sem.acquire(); });
    while (!test::has_waiters(sem)) this_thread::yield();
    try {
      sem.set_spinlock(make_spinlock("mcs"));
      FAIL("set_spinlock accepted an object with a waiter");
    } catch (const UsageError& e) {
      CHECK_THAT(e.what(), Catch::Contains("semaphore 'in use'") && Catch::Contains("1 thread(s) wait"));
    }
    sem.release();
    waiter.join();
    sem.set_spinlock(make_spinlock("mcs"));  // idle again: accepted
    sem.set_spinlock(nullptr);               // and the built-in one restored
    CHECK(sem.spinlock() == nullptr);
    sem.release();
    sem.acquire();
    auto child = fork([] {});
    CHECK_THROWS_WITH(child.thread().set_spinlock(make_spinlock("mcs")),
                      Catch::Contains("a thread's own spinlock is the built-in one"));
    child.join();
  });
}

TEST_CASE("make_spinlock knows every kind and nothing else", "[locks]") {
  for (const SpinlockKind& k : spinlock_kinds()) CHECK(make_spinlock(k.name) != nullptr);
  CHECK(make_spinlock("no-such-lock") == nullptr);
  CHECK(spinlock_kinds().size() == 9);
}
