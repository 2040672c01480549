// Runtime::set_processors: the set of processors grows and shrinks while threads run, no
// thread is lost, the pool follows (per-processor pools re-attach), and a thread running on a
// removed processor moves off at its next dispatch; the processors' OS threads are kept from run
// to run and end with the runtime.

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "test_support.hpp"

using namespace presto;

namespace {

// Yields until `done()` or `limit` yields have passed (new OS threads may take a while to get
// a core on a loaded machine); true if done.
template <class F>
bool yield_until(F&& done, long limit = 20'000'000) {
  for (long i = 0; i < limit; ++i) {
    if (done()) return true;
    this_thread::yield();
  }
  return done();
}

}  // namespace

TEST_CASE("set_processors grows 1 to 4 to 2 to 1 while threads run", "[processors]") {
  auto pool = GENERATE(test::PoolKind::local_queue, test::PoolKind::fifo, test::PoolKind::shuffle);
  INFO((test::Config{1, pool}));
  const int threads = 16, rounds = static_cast<int>(test::scaled(4000));
  test::Record record;
  Runtime rt{test::runtime_config({1, pool})};
  std::atomic<std::size_t> highest{0};  // highest processor index a worker ran on
  const long total = rt.run([&] {
    Lock lock{"total"};
    long sum = 0;
    std::atomic<int> finished{0};
    std::vector<JoinHandle<void>> hs;
    for (int t = 0; t < threads; ++t) {
      hs.push_back(fork([&] {
        for (int r = 0; r < rounds; ++r) {
          {
            std::scoped_lock guard{lock};
            ++sum;
          }
          const std::size_t here = Processor::current()->index();
          std::size_t seen = highest.load();
          while (here > seen && !highest.compare_exchange_weak(seen, here)) {
          }
          this_thread::yield();
        }
        finished.fetch_add(1);
      }));
    }
    for (std::size_t n : {4, 2, 1, 3, 1}) {
      rt.set_processors(n);
      record.expect(rt.processors() == n && rt.stats().processors == n, "the processor count follows set_processors");
      if (n == 4) {
        record.expect(yield_until([&] { return highest.load() >= 1 || finished.load() == threads; }),
                      "an added processor ran a thread");
      }
      for (int i = 0; i < 200; ++i) this_thread::yield();
    }
    for (auto& h : hs) h.join();
    return sum;
  });
  PRESTO_CHECK_RECORD(record);
  CHECK(total == long{threads} * rounds);
  CHECK(rt.processors() == 1);
  CHECK(rt.stats().processors == 1);
  test::check_no_leaks(rt);
}

TEST_CASE("a thread on a removed processor moves off at its next yield", "[processors]") {
  auto pool = GENERATE(test::PoolKind::local_queue, test::PoolKind::fifo, test::PoolKind::shuffle);
  INFO((test::Config{2, pool}));
  Runtime rt{test::runtime_config({2, pool})};
  struct Seen {
    bool reached_1 = false;
    std::size_t after = 99;
  };
  const Seen seen = rt.run([&] {
    Seen s;
    // Get onto processor 1 (others may take us there when they steal or pick from the pool).
    s.reached_1 = yield_until([] { return Processor::current()->index() == 1; });
    rt.set_processors(1);
    this_thread::yield();
    s.after = Processor::current()->index();
    return s;
  });
  if (seen.reached_1) CHECK(seen.after == 0);
  CHECK(rt.processors() == 1);
  test::check_no_leaks(rt);
}

TEST_CASE("set_processors from an OS thread outside the runtime, and before run()", "[processors]") {
  Runtime rt{test::runtime_config({1, test::PoolKind::local_queue})};
  rt.set_processors(3);
  CHECK(rt.processors() == 3);
  std::atomic<bool> shrunk{false};
  const bool ok = rt.run([&] {
    bool all = Processor::current()->runtime().processors() == 3;
    std::thread outside([&] {
      rt.set_processors(2);
      shrunk = true;
    });
    all = yield_until([&] { return shrunk.load(); }) && all;
    outside.join();
    std::vector<JoinHandle<int>> hs;
    for (int i = 0; i < 32; ++i) hs.push_back(fork([i] { return i; }));
    int sum = 0;
    for (auto& h : hs) sum += h.join();
    return all && sum == 31 * 32 / 2;
  });
  CHECK(ok);
  CHECK(rt.processors() == 2);
  test::check_no_leaks(rt);
}

TEST_CASE("set_processors(0) and beyond the limit are UsageErrors naming the runtime", "[processors]") {
  Runtime rt{{.processors = 1, .name = "sized"}};
  CHECK_THROWS_AS(rt.set_processors(0), UsageError);
  CHECK_THROWS_WITH(rt.set_processors(1'000'000), Catch::Contains("'sized'"));
  CHECK(rt.processors() == 1);
}

namespace {

// The OS thread that runs a thread pinned to processor `k` of the running runtime.
pid_t os_thread_of(std::size_t k) {
  ThreadAttributes a{.name = "on " + std::to_string(k)};
  a.affinity = k;
  return fork(std::move(a), [] { return static_cast<pid_t>(::gettid()); }).join();
}

// Whether OS thread `tid` of this process is gone, rechecked a bounded number of times: a
// joined thread's /proc entry may outlive the join for a moment.
bool os_thread_gone(pid_t tid) {
  const std::string path = "/proc/self/task/" + std::to_string(tid);
  for (int i = 0; i < 100'000; ++i) {
    if (::access(path.c_str(), F_OK) != 0) return true;
    std::this_thread::yield();
  }
  return false;
}

}  // namespace

TEST_CASE("a runtime keeps its processors' OS threads from run to run and ends them with itself", "[processors]") {
  pid_t first = 0;
  {
    Runtime rt{test::runtime_config({3, test::PoolKind::local_queue})};
    const pid_t caller = static_cast<pid_t>(::gettid());
    first = rt.run([] { return os_thread_of(1); });
    CHECK(first != caller);
    const pid_t second = rt.run([] { return os_thread_of(2); });
    CHECK(second != first);
    CHECK(rt.run([] { return os_thread_of(1); }) == first);  // woken, not made anew
    // A slot retired by set_processors and started again is hosted by the same OS thread.
    CHECK(rt.run([&] {
      rt.set_processors(1);
      rt.set_processors(3);
      return os_thread_of(1);
    }) == first);
    // So is one started before a run, and a run made from another OS thread.
    rt.set_processors(2);
    pid_t from_other = 0;
    std::thread other([&] { from_other = rt.run([] { return os_thread_of(1); }); });
    other.join();
    CHECK(from_other == first);
    CHECK(::access(("/proc/self/task/" + std::to_string(first)).c_str(), F_OK) == 0);
    test::check_no_leaks(rt);
  }
  CHECK(os_thread_gone(first));
}

// On one processor a waiter signalled before its monitor's release may stay deferred until its
// signaller leaves the processor (Thread::release_deferred). A signaller that adds a processor
// wakes it first, so the new processor can run it while the signaller goes on without calling
// the runtime.
TEST_CASE("a waiter left deferred by its signaller runs on a processor the signaller adds", "[processors]") {
  Runtime rt{test::runtime_config({1, test::PoolKind::local_queue})};
  std::atomic<bool> flag{false};
  const bool seen = rt.run([&] {
    test::SignalledWaiter waiter{[&] { flag.store(true, std::memory_order_release); }};
    waiter.signal();
    Runtime::current()->set_processors(2);
    // No call into the runtime: only the added processor can run the waiter. (OS yields: its
    // OS thread needs a core on a loaded machine.)
    bool s = false;
    for (long i = 0; i < 20'000'000 && !s; ++i) {
      s = flag.load(std::memory_order_acquire);
      std::this_thread::yield();
    }
    waiter.join();
    return s;
  });
  CHECK(seen);
  test::check_no_leaks(rt);
}
