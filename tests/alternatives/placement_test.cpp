// LocalQueuePool's wake-up placements: each puts a thread where it says (the waker's queue,
// the thread's last processor's, the shortest counting the running thread, a random one),
// from threads on every processor of 1, 2 and 4; and each runs real workloads correctly.
// Its orders: a processor serves its own queue first-in-first-out or last-in-first-out, and a
// thief takes the oldest thread either way.

#include <algorithm>
#include <functional>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <presto/testing/pool_conformance.hpp>

#include "test_support.hpp"

using namespace presto;
using Placement = LocalQueuePool::Placement;

namespace {

std::vector<std::size_t> lengths(const LocalQueuePool& pool, std::size_t n) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(pool.queued(i));
  return out;
}

std::string show(const std::vector<std::size_t>& v) {
  std::string s;
  for (std::size_t x : v) s += std::to_string(x) + " ";
  return s;
}

// On the calling presto thread: checks one placement with a probe pool attached to `rt` (not
// installed, so only this thread touches it). `ran` is a finished thread whose last processor
// is known. Records what went wrong.
void probe(Runtime& rt, Placement placement, Thread& ran, presto::test::Record& record) {
  const std::size_t n = rt.processors();
  Processor& here = *Processor::current();
  const std::size_t me = here.index();
  const std::size_t last = ran.processor()->index();
  const std::string where = std::string(to_string(placement)) + " on processor " + std::to_string(me) + " of " +
                            std::to_string(n) + ": ";
  LocalQueuePool pool{placement};
  pool.attach(rt);
  Thread fresh{"fresh"};  // never ran: no last processor
  std::vector<std::unique_ptr<Thread>> fillers;
  switch (placement) {
    case Placement::waker:
      pool.put(ran);
      record.expect(pool.queued(me) == 1, where + "the woken thread is not on the waker's queue");
      pool.put(fresh);
      record.expect(pool.queued(me) == 2, where + "a new thread is not on the waker's queue");
      break;
    case Placement::last:
      pool.put(ran);
      record.expect(pool.queued(last) == 1,
                    where + "the woken thread is not on its last processor's queue " + std::to_string(last));
      pool.put(fresh);
      record.expect(pool.queued(me) == (last == me ? 2u : 1u), where + "a new thread is not on the waker's queue");
      break;
    case Placement::shortest: {
      // With every queue empty the first thread goes to the waker's own queue.
      pool.put(fresh);
      record.expect(pool.queued(me) == 1, where + "the first thread is not on the waker's empty queue");
      // This processor takes it and runs it: its queue now counts one (Joyce's rule 5), so a
      // thread it wakes goes to another processor's empty queue, not behind the running one.
      Thread* t = pool.get(here);
      record.expect(t == &fresh, where + "get did not return the thread of the processor's own queue");
      pool.put(ran);
      if (n > 1) {
        record.expect(pool.queued(me) == 0 && pool.queued((me + 1) % n) == 1,
                      where + "the woken thread did not go to the next empty queue: " + show(lengths(pool, n)));
      }
      // Each further put evens the lengths, counting the running thread.
      for (std::size_t k = 0; k < 3 * n; ++k) {
        fillers.push_back(std::make_unique<Thread>("filler"));
        pool.put(*fillers.back());
        auto l = lengths(pool, n);
        l[me] += 1;
        const auto [lo, hi] = std::minmax_element(l.begin(), l.end());
        record.expect(*hi - *lo <= 1, where + "unbalanced after " + std::to_string(k + 1) + " puts: " + show(l));
      }
      if (t != nullptr) pool.put(*t);
      break;
    }
    case Placement::random: {
      for (std::size_t k = 0; k < 100 * n; ++k) {
        fillers.push_back(std::make_unique<Thread>("filler"));
        pool.put(*fillers.back());
      }
      auto l = lengths(pool, n);
      record.expect(std::none_of(l.begin(), l.end(), [](std::size_t x) { return x == 0; }),
                    where + "a queue got nothing in " + std::to_string(100 * n) + " random puts: " + show(l));
      break;
    }
  }
  while (pool.get(here) != nullptr) {  // empty the probe (every queue, by stealing)
  }
  record.expect(pool.size() == 0, where + "the probe did not give back every thread");
}

}  // namespace

TEST_CASE("each placement puts a ready thread where it says", "[alternatives][placement]") {
  auto placement = GENERATE(Placement::waker, Placement::last, Placement::shortest, Placement::random);
  auto processors = GENERATE(as<std::size_t>{}, 1, 2, 4);
  INFO(to_string(placement) << ", " << processors << " processor(s), seed " << presto::test::seed());
  Runtime rt{{.processors = processors, .seed = presto::test::seed()}};
  presto::test::Record record;
  std::atomic<std::size_t> probes{0};
  rt.run([&] {
    // Probes from many threads, so that they run on (and wake threads last run on) every
    // processor the run happens to use.
    std::vector<JoinHandle<void>> handles;
    for (std::size_t i = 0; i < 8 * processors; ++i) {
      handles.push_back(fork([&] {
        Thread ran{"ran"};
        ran.start([] {});
        ran.join();
        this_thread::yield();
        probe(rt, placement, ran, record);
        probes.fetch_add(1);
      }));
    }
    for (auto& h : handles) h.join();
  });
  PRESTO_CHECK_RECORD(record);
  CHECK(probes.load() == 8 * processors);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("a processor serves its queue in the pool's order and a thief takes the oldest", "[alternatives][order]") {
  using Order = LocalQueuePool::Order;
  auto order = GENERATE(Order::fifo, Order::lifo);
  INFO(to_string(order) << ", seed " << presto::test::seed());
  Runtime rt{{.processors = 2, .seed = presto::test::seed()}};
  presto::test::Record record;
  rt.run([&] {
    LocalQueuePool pool{Placement::waker, order};  // a probe: attached, not installed
    pool.attach(rt);
    Processor& here = *Processor::current();
    Processor& thief = rt.processor(1 - here.index());
    Thread a{"a"}, b{"b"}, c{"c"}, d{"d"};
    for (Thread* t : {&a, &b, &c, &d}) pool.put(*t);  // all into this processor's queue
    const bool lifo = order == Order::lifo;
    record.expect(pool.get(here) == (lifo ? &d : &a), "the owner did not take the " + std::string(lifo ? "newest" : "oldest"));
    record.expect(pool.get(thief) == (lifo ? &a : &b), "the thief did not take the oldest");
    record.expect(pool.get(here) == &c, "the owner's second take is wrong");
    // A join takes a thread back wherever it is (ThreadPool::withdraw), once.
    record.expect(pool.withdraw(lifo ? b : d), "withdraw did not find a queued thread");
    record.expect(!pool.withdraw(lifo ? b : d), "withdraw found a thread twice");
    record.expect(!pool.withdraw(a), "withdraw found a thread already taken");
    record.expect(pool.get(here) == nullptr && pool.size() == 0, "the probe did not give back every thread");
  });
  PRESTO_CHECK_RECORD(record);
  CHECK(std::string(LocalQueuePool(Placement::last, Order::lifo).name()) == "local-queue/last/lifo");
}

TEST_CASE("the lifo order runs a tree of forks depth first", "[alternatives][order]") {
  // On one processor, a parent's newest child runs first, and a parent woken by the child it
  // joined resumes before that child's older siblings: at most depth x fan-out threads live.
  Runtime rt{{.processors = 1,
              .pool = std::make_unique<LocalQueuePool>(Placement::waker, LocalQueuePool::Order::lifo),
              .seed = presto::test::seed()}};
  std::atomic<std::size_t> live{0}, most{0};
  std::function<std::uint64_t(std::uint64_t, std::uint64_t)> tree = [&](std::uint64_t num, std::uint64_t size) {
    const std::size_t now = live.fetch_add(1) + 1;
    most.store(std::max(most.load(), now));
    std::uint64_t sum = num;
    if (size > 1) {
      sum = 0;
      std::vector<JoinHandle<std::uint64_t>> children;
      for (std::uint64_t i = 0; i < 10; ++i) children.push_back(fork(tree, num + i * (size / 10), size / 10));
      for (auto& c : children) sum += c.join();
    }
    live.fetch_sub(1);
    return sum;
  };
  const std::uint64_t leaves = 10'000;
  CHECK(rt.run([&] { return tree(0, leaves); }) == leaves * (leaves - 1) / 2);
  CHECK(most.load() <= 5 * 10 + 1);  // depth 4 below the root, ten children each
  presto::test::check_no_leaks(rt);
}

TEST_CASE("every placement conforms", "[alternatives][placement][conformance]") {
  auto placement = GENERATE(Placement::last, Placement::shortest, Placement::random);
  INFO(to_string(placement) << ", seed " << presto::test::seed());
  const presto::testing::PoolConformanceOptions o = presto::test::conformance_options();
  CHECK_NOTHROW(presto::testing::check_pool_conformance(
      [placement] { return std::make_unique<LocalQueuePool>(placement); }, o));
}

TEST_CASE("placements run a ping-pong ring of monitors to the same result", "[alternatives][placement]") {
  auto placement = GENERATE(Placement::waker, Placement::last, Placement::shortest, Placement::random);
  auto processors = GENERATE(as<std::size_t>{}, 1, 2, 4);
  INFO(to_string(placement) << ", " << processors << " processor(s), seed " << presto::test::seed());
  Runtime rt{{.processors = processors, .pool = std::make_unique<LocalQueuePool>(placement),
              .seed = presto::test::seed()}};
  const std::size_t ring = 16;
  const std::size_t laps = presto::test::scaled(200);
  std::vector<std::unique_ptr<Semaphore>> tokens;
  for (std::size_t i = 0; i < ring; ++i) tokens.push_back(std::make_unique<Semaphore>(i == 0 ? 1 : 0, "token"));
  std::atomic<std::size_t> passes{0};
  rt.run([&] {
    std::vector<JoinHandle<void>> handles;
    for (std::size_t i = 0; i < ring; ++i) {
      handles.push_back(fork([&, i] {
        for (std::size_t lap = 0; lap < laps; ++lap) {
          tokens[i]->acquire();
          passes.fetch_add(1);
          tokens[(i + 1) % ring]->release();
        }
      }));
    }
    for (auto& h : handles) h.join();
  });
  CHECK(passes.load() == ring * laps);
  presto::test::check_no_leaks(rt);
}
