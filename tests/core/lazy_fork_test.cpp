// Lazy forks (RuntimeConfig::lazy_forks): a fork with no attributes may queue a small record
// instead of a Thread, made a thread only when something needs one; a join that finds it still
// queued runs its body as a call (docs/design/lazy-forks.md). Nothing observable may change.
// Checked here, at the edges of that mechanism, mostly on 1 and 2 processors: results, void and
// move-only results, move-only arguments and exceptions through joins of queued or stolen
// children; a child's identity, its joiner's state, its own thread-locals and its yields; trees
// and chains, leaves that ask who they are; a deadlock and a block inside a child its joiner
// runs; JoinHandle::thread() (before the child runs, after it ended, from inside it), detach(),
// dropped handles (the orphan rule) and cancellable joins of children not yet run;
// live_threads, ready_threads, inline_joins, walks and FIFO order with children queued; the end
// of a run (normal or by main's exception) and replaced schedulers and pools and set_processors
// with children queued; the stack a child is promised; Figure 3's pattern; children run by
// runners (joined after their end, while they sleep, cancelled, dropped, their thread-locals,
// none made a thread on 2 processors). Every case before the runners' also passes with
// lazy_forks off (where it does nothing): that is the point.

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "queued_children.hpp"
#include "test_support.hpp"

using namespace presto;
using Catch::Matchers::Contains;
using presto::test::lazy_config;

namespace {

// What a failure ran under, for INFO (with the seed that replays it).
presto::test::Config lazy(std::size_t processors) { return {processors, presto::test::PoolKind::local_queue}; }

// Sum of first..first+size-1 by a tree of children, ten a node (skynet). With `ids`, leaf k also
// writes the id it sees for itself to ids[0][k], and its parent its handle's id to ids[1][k].
std::uint64_t tree_sum(std::uint64_t first, std::uint64_t size, std::vector<std::uint64_t>* ids) {
  if (size == 1) {
    if (ids != nullptr) ids[0][first] = Thread::current().id();
    return first;
  }
  std::vector<JoinHandle<std::uint64_t>> children;
  for (std::uint64_t i = 0; i < 10; ++i) children.push_back(fork(tree_sum, first + i * (size / 10), size / 10, ids));
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < 10; ++i) {
    if (ids != nullptr && size == 10) ids[1][first + i] = children[i].id();
    sum += children[i].join();
  }
  return sum;
}

// Each thread forks and joins the next, `depth` deep.
std::uint64_t chain(std::uint64_t depth) { return depth == 0 ? 0 : fork(chain, depth - 1).join() + 1; }

// Uses about `depth` KiB of stack in 1 KiB frames the compiler cannot drop; 1 + 2 + ... + depth.
// With `then_fork`, at the bottom it forks and joins a child that needs 40 KiB of its own.
int deep(int depth, bool then_fork) {
  volatile char frame[1024];
  frame[0] = static_cast<char>(depth);
  if (depth > 1) return deep(depth - 1, then_fork) + frame[0];
  return frame[0] + (then_fork ? fork(deep, 40, false).join() : 0);
}

}  // namespace

TEST_CASE("results, move-only results and exceptions reach the joiner of a queued or stolen child", "[core][lazy]") {
  const std::size_t processors = GENERATE(1, 2);
  INFO(lazy(processors));
  constexpr int n = 200;
  struct Seen {
    long values = 0, owned = 0;
    int caught = 0, wrong = 0;
  };
  std::atomic<int> void_bodies{0};
  Runtime rt{lazy_config(processors)};
  const Seen seen = rt.run([&] {
    Seen s;
    std::vector<JoinHandle<int>> values;
    std::vector<JoinHandle<std::unique_ptr<int>>> owned;
    std::vector<JoinHandle<void>> voids;
    std::vector<JoinHandle<std::string>> throwers;
    for (int i = 0; i < n; ++i) {  // in turn, so that a thief takes some of each kind
      values.push_back(fork([i] { return 3 * i; }));
      owned.push_back(fork([](std::unique_ptr<int> p, std::string w) { return std::make_unique<int>(*p + int(w.size())); },
                           std::make_unique<int>(i), std::string("four")));
      voids.push_back(fork([&void_bodies] { void_bodies.fetch_add(1, std::memory_order_relaxed); }));
      throwers.push_back(fork([i]() -> std::string {
        if (i % 2 == 0) throw std::runtime_error("child " + std::to_string(i));
        return "fine " + std::to_string(i);
      }));
    }
    for (int i = 0; i < n; ++i) {
      s.values += values[i].join();
      s.owned += *owned[i].join();
      voids[i].join();
      try {
        s.wrong += throwers[i].join() == "fine " + std::to_string(i) ? 0 : 1;
      } catch (const std::runtime_error& e) {
        s.wrong += std::string(e.what()) == "child " + std::to_string(i) ? 0 : 1;
        ++s.caught;
      }
    }
    return s;
  });
  CHECK(seen.values == 3L * n * (n - 1) / 2);
  CHECK(seen.owned == long{n} * (n - 1) / 2 + 4L * n);
  CHECK(void_bodies.load() == n);
  CHECK(seen.caught == n / 2);
  CHECK(seen.wrong == 0);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("a child is itself: its id, its joiner blocked, its own thread-locals, its yields", "[core][lazy]") {
  const std::size_t processors = GENERATE(1, 2);
  INFO(lazy(processors));
  constexpr int n = 50;
  struct Seen {
    std::uint64_t inside = 0, handle = 0;
    ThreadState parent_state = ThreadState::created;
    int local_before = -1, local_after = -1, started_before_yield = 0, started_after_yield = 0;
  };
  std::vector<Seen> seen(n);
  std::uint64_t parent_id = 0;
  int parent_local = -1;
  std::atomic<int> started{0};
  ThreadLocal<int> local{0};
  Runtime rt{lazy_config(processors)};
  rt.run([&] {
    Thread& me = Thread::current();  // taken before the forks
    parent_id = me.id();
    *local = 1;
    std::vector<JoinHandle<void>> hs;
    for (int i = 0; i < n; ++i) {
      hs.push_back(fork([&, i] {
        Seen& s = seen[i];
        s.started_before_yield = started.fetch_add(1) + 1;
        s.inside = Thread::current().id();
        s.parent_state = me.state();
        s.local_before = *local;  // a new thread's own value, not the parent's
        *local = 100 + i;
        for (int k = 0; k < 4; ++k) this_thread::yield();
        s.started_after_yield = started.load();
        s.local_after = *local;
      }));
      seen[i].handle = hs.back().id();
    }
    for (auto& h : hs) h.join();
    parent_local = *local;
  });
  std::set<std::uint64_t> ids;
  for (int i = 0; i < n; ++i) {
    INFO("child " << i);
    CHECK(seen[i].inside == seen[i].handle);
    CHECK(seen[i].inside != parent_id);
    ids.insert(seen[i].inside);
    CHECK(seen[i].local_before == 0);
    CHECK(seen[i].local_after == 100 + i);
    // One processor: the parent waits in a join whenever a child runs.
    if (processors == 1) CHECK(seen[i].parent_state == ThreadState::blocked);
  }
  // One processor: child 0 runs in main's join, and its yield lets the next child start.
  if (processors == 1) CHECK(seen[0].started_after_yield > seen[0].started_before_yield);
  CHECK(ids.size() == std::size_t{n});
  CHECK(parent_local == 1);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("trees and chains of children; leaves that ask who they are are distinct", "[core][lazy]") {
  const std::size_t processors = GENERATE(1, 2);
  INFO(lazy(processors));
  Runtime rt{lazy_config(processors)};
  const std::uint64_t leaves = presto::test::scaled(10'000) >= 10'000 ? 10'000 : 1'000;
  CHECK(rt.run([leaves] { return tree_sum(0, leaves, nullptr); }) == leaves * (leaves - 1) / 2);
  CHECK(rt.run([] { return chain(200); }) == 200u);
  std::vector<std::uint64_t> ids[2] = {std::vector<std::uint64_t>(1000), std::vector<std::uint64_t>(1000)};
  CHECK(rt.run([&] { return tree_sum(0, 1000, ids); }) == 1000u * 999 / 2);
  CHECK(ids[0] == ids[1]);  // each leaf is the thread its handle names
  CHECK(std::set<std::uint64_t>(ids[0].begin(), ids[0].end()).size() == 1000);
  CHECK(std::count(ids[0].begin(), ids[0].end(), 0u) == 0);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("a child that enters a monitor its joiner holds deadlocks, and the report names both", "[core][lazy]") {
  const std::size_t processors = GENERATE(1, 2);
  INFO(lazy(processors));
  Runtime rt{lazy_config(processors)};
  Monitor m{"held"};
  std::uint64_t main_id = 0, child_id = 0;
  std::vector<BlockedThread> blocked;
  try {
    rt.run([&] {
      main_id = Thread::current().id();
      Monitor::Entry entry{m};
      auto child = fork([&m] { Monitor::Entry inner{m}; });
      child_id = child.id();
      child.join();
    });
    FAIL("run() returned although main and its child were blocked");
  } catch (const Deadlock& d) {
    blocked = d.blocked();
  }
  REQUIRE(blocked.size() == 2);
  CHECK(blocked[0].id == main_id);
  CHECK_THAT(blocked[0].waiting_on, Contains("(id " + std::to_string(child_id) + ")"));
  CHECK(blocked[1].id == child_id);
  CHECK_THAT(blocked[1].waiting_on, Contains("monitor 'held', held by thread 'main'"));
  presto::test::check_no_leaks(rt);
}

TEST_CASE("JoinHandle::thread() of a child not yet run, of one that ended, and from inside it", "[core][lazy]") {
  Runtime rt{lazy_config(1)};
  rt.run([&] {
    const std::string word = "short";  // inside the std::string object (SSO): to be moved, never copied as bytes
    auto h = fork([word] { return word + "!"; });
    Thread& t = h.thread();
    CHECK(t.id() == h.id());
    CHECK(t.id() != Thread::current().id());
    CHECK(t.state() == ThreadState::ready);
    CHECK(&h.thread() == &t);
    CHECK(h.join() == "short!");  // joined while queued: run inline, as the thread it was given

    auto g = fork([word] { return word + "?"; });  // asked for, then run by the processor
    Thread& gt = g.thread();
    this_thread::yield();  // one processor: the child runs to its end here
    CHECK(gt.state() == ThreadState::terminated);
    CHECK(&g.thread() == &gt);
    CHECK(g.join() == "short?");

    auto e = fork([word] { return word + "."; });  // asked for only after it ended
    const std::uint64_t eid = e.id();
    this_thread::yield();
    CHECK(e.thread().id() == eid);
    CHECK(e.thread().state() == ThreadState::terminated);
    CHECK(e.join() == "short.");

    // From inside the child, on its own handle: it runs only when main joins, after the assignment.
    JoinHandle<bool> self;
    self = fork([&self] {
      return &self.thread() == &Thread::current() && self.thread().state() == ThreadState::running;
    });
    CHECK(self.join());
  });
  presto::test::check_no_leaks(rt);
}

TEST_CASE("a detached or dropped child not yet run that throws ends the run with its exception", "[core][lazy]") {
  const std::size_t processors = GENERATE(1, 2);
  const bool detach = GENERATE(true, false);
  const bool main_waits = GENERATE(true, false);
  INFO(lazy(processors) << (detach ? ", detached" : ", dropped") << (main_waits ? ", main waits" : ", main returns"));
  Runtime rt{lazy_config(processors)};
  Semaphore never{0, "never"};
  CHECK_THROWS_WITH(rt.run([&] {
                      auto h = fork([] { throw std::runtime_error("orphan boom"); });
                      if (detach) h.detach();
                      else h = JoinHandle<void>{};  // dropped
                      if (main_waits) never.acquire();  // the run must not wait for this
                    }),
                    "orphan boom");
  presto::test::check_no_leaks(rt);
}

TEST_CASE("a cancellable join of a child not yet run", "[core][lazy]") {
  const std::size_t processors = GENERATE(1, 2);
  INFO(lazy(processors));
  struct Seen {
    int plain = 0, after_cancel = 0, during = 0;
    bool cancelled = false, joinable_after = false, cancelled_during = false;
  } seen;
  Runtime rt{lazy_config(processors)};
  rt.run([&] {
    StopSource unused;
    seen.plain = fork([] { return 7; }).join(unused.get_token());

    StopSource stopped;
    stopped.request_stop();
    auto h = fork([] { return 8; });
    try {
      seen.after_cancel = h.join(stopped.get_token());
    } catch (const Cancelled&) {
      seen.cancelled = true;
      seen.joinable_after = h.joinable();
      seen.after_cancel = h.join();
    }

    // Stopped while the join waits: the child blocks, a sibling requests the stop, then releases it.
    Semaphore go{0, "go"};
    StopSource later;
    auto blocked = fork([&go] { go.acquire(); return 9; });
    auto stopper = fork([&] { later.request_stop(); go.release(); });
    try {
      seen.during = blocked.join(later.get_token());
    } catch (const Cancelled&) {
      seen.cancelled_during = true;
      seen.during = blocked.join();
    }
    stopper.join();
  });
  CHECK(seen.plain == 7);
  CHECK(seen.after_cancel == 8);
  CHECK(seen.during == 9);
  if (seen.cancelled) CHECK(seen.joinable_after);
  if (processors == 1) {  // else a child may end on the other processor first
    CHECK(seen.cancelled);
    CHECK(seen.cancelled_during);
  }
  presto::test::check_no_leaks(rt);
}

TEST_CASE("children not yet run are live, ready and walked; joined while queued, they count as inline joins",
          "[core][lazy]") {
  Runtime rt{lazy_config(1)};
  rt.run([&] {
    const RuntimeStats before = rt.stats();
    int ten = 0;
    std::vector<JoinHandle<int>> few;
    for (int i = 0; i < 10; ++i) few.push_back(fork([i] { return i; }));
    for (auto& h : few) ten += h.join();
    CHECK(ten == 45);
    CHECK(rt.stats().inline_joins - before.inline_joins == 10);
    CHECK(rt.stats().dispatches - before.dispatches == 10);

    constexpr std::size_t n = 100;
    std::vector<JoinHandle<std::size_t>> hs;
    for (std::size_t i = 0; i < n; ++i) hs.push_back(fork([i] { return i; }));
    CHECK(rt.stats().live_threads == n + 1);
    CHECK(rt.stats().ready_threads == n);
    std::map<std::uint64_t, ThreadState> listed;
    rt.for_each_thread([&](const Thread& t) { listed.emplace(t.id(), t.state()); });
    CHECK(listed.size() == n + 1);
    CHECK(listed[Thread::current().id()] == ThreadState::running);
    for (auto& h : hs) {
      INFO("child id " << h.id());
      CHECK(listed.count(h.id()) == 1);
      CHECK(listed[h.id()] == ThreadState::ready);
    }
    CHECK(rt.stats().live_threads == n + 1);  // a walk changes no count
    std::size_t sum = 0;
    for (std::size_t i = 0; i < n / 2; ++i) sum += hs[i].join();
    CHECK(rt.stats().live_threads == n / 2 + 1);
    for (std::size_t i = n / 2; i < n; ++i) sum += hs[i].join();
    CHECK(sum == n * (n - 1) / 2);
    CHECK(rt.stats().live_threads == 1);
    CHECK(rt.stats().ready_threads == 0);
  });
  presto::test::check_no_leaks(rt);
}

TEST_CASE("children forked with and without attributes run in fork order", "[core][lazy]") {
  Runtime rt{lazy_config(1)};
  std::vector<int> order, expected;
  rt.run([&] {
    std::vector<JoinHandle<void>> hs;
    for (int i = 0; i < 60; ++i) {
      auto body = [&order, i] { order.push_back(i); };
      hs.push_back(i % 3 == 0 ? fork(ThreadAttributes{.name = "named"}, body) : fork(body));
      expected.push_back(i);
    }
    this_thread::yield();  // one processor: every child runs, in the queue's order, before main again
    for (auto& h : hs) h.join();
  });
  CHECK(order == expected);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("a run ends when main does, with its children queued: they run; after an exception, they don't",
          "[core][lazy]") {
  const std::size_t processors = GENERATE(1, 2);
  INFO(lazy(processors));
  std::atomic<int> ran{0};
  Runtime rt{lazy_config(processors)};
  rt.run([&] {
    for (int i = 0; i < 100; ++i) {
      auto h = fork([&ran] { this_thread::yield(); ran.fetch_add(1); });
      if (i % 2 == 0) h.detach();  // else dropped here
    }
  });  // main returns with its children queued (on 1 processor, all of them)
  CHECK(ran.load() == 100);
  presto::test::check_no_leaks(rt);
  ran = 0;
  CHECK_THROWS_WITH(rt.run([&]() -> int {
                      std::vector<JoinHandle<int>> hs;
                      for (int i = 0; i < 100; ++i) hs.push_back(fork([&ran, i] { return ran.fetch_add(1) + i; }));
                      throw std::logic_error("main failed");  // unwinding drops the handles: detached
                    }),
                    "main failed");
  presto::test::check_no_leaks(rt);  // children the run abandoned are freed
  const int ran_in_failed_run = ran.load();
  CHECK(rt.run([&] { return rt.stats().live_threads; }) == 1u);  // the next runs find none of them
  CHECK(rt.run([] { return fork([] { return 5; }).join(); }) == 5);
  CHECK(ran.load() == ran_in_failed_run);  // and never run them
  presto::test::check_no_leaks(rt);
}

TEST_CASE("replacing the scheduler or the pool while children are queued loses none", "[core][lazy]") {
  const std::size_t processors = GENERATE(1, 2);
  const int replacement = GENERATE(0, 1, 2);  // a Scheduler, a LocalQueuePool, a FifoPool
  INFO(lazy(processors) << ", replacement " << replacement);
  constexpr std::uint64_t n = 1000;
  struct Seen {
    std::uint64_t sum = 0, later = 0;
    std::size_t moved = 0, left = 99;
  } seen;
  Runtime rt{lazy_config(processors)};
  rt.run([&] {
    const std::string word = "queued";  // SSO: a task moved as bytes would point into its old place
    std::vector<JoinHandle<std::uint64_t>> hs;
    for (std::uint64_t i = 0; i < n; ++i) hs.push_back(fork([i, word] { return word == "queued" ? i : 1'000'000; }));
    if (replacement == 0) {
      seen.left = rt.replace_scheduler(std::make_unique<Scheduler>())->pool().size();
    } else {
      std::unique_ptr<ThreadPool> next = replacement == 1 ? std::unique_ptr<ThreadPool>(std::make_unique<LocalQueuePool>())
                                                          : std::make_unique<FifoPool>();
      seen.left = rt.scheduler().replace_pool(std::move(next))->size();
    }
    seen.moved = rt.scheduler().pool().size();
    for (auto& h : hs) seen.sum += h.join();
    hs.clear();
    for (std::uint64_t i = 0; i < 100; ++i) hs.push_back(fork([i] { return i; }));  // under the new one
    for (auto& h : hs) seen.later += h.join();
  });
  CHECK(seen.sum == n * (n - 1) / 2);
  CHECK(seen.later == 4950u);
  CHECK(seen.left == 0);
  if (processors == 1) CHECK(seen.moved == n);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("set_processors while children are queued loses none", "[core][lazy]") {
  const std::size_t first = GENERATE(1, 2);
  const std::size_t other = first == 1 ? 2 : 1;
  INFO(lazy(first) << ", then " << other << ", then " << first);
  constexpr std::uint64_t rounds = 20, n = 200;
  Runtime rt{lazy_config(first)};
  const std::uint64_t sum = rt.run([&] { return presto::test::forks_across_set_processors(rt, first, other, rounds, n); });
  CHECK(sum == rounds * n * (n - 1));
  CHECK(rt.processors() == first);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("a child joined while queued gets the stack a thread is promised", "[core][lazy]") {
  const std::size_t processors = GENERATE(1, 2);
  INFO(lazy(processors));
  Runtime rt{lazy_config(processors)};
  REQUIRE(rt.default_stack_size() == 64 * 1024);
  CHECK(rt.run([] { return fork(deep, 40, false).join(); }) == 820);  // 1 + 2 + ... + 40
  // 20 KiB down, a child that needs 40 KiB: run inline only if the room is there.
  CHECK(rt.run([] { return fork(deep, 20, true).join(); }) == 210 + 820);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("a child run by its joiner may block until a later sibling releases it", "[core][lazy]") {
  const std::size_t processors = GENERATE(1, 2);
  INFO(lazy(processors));
  Runtime rt{lazy_config(processors)};
  const int rounds = static_cast<int>(presto::test::scaled(100));
  const int total = rt.run([rounds] {
    int sum = 0;
    for (int r = 0; r < rounds; ++r) {
      Semaphore go{0, "go"};
      auto a = fork([&go] { go.acquire(); return 1; });  // one processor: blocks main's stack until b runs
      auto b = fork([&go] { go.release(); return 2; });
      sum += a.join() + b.join();
    }
    return sum;
  });
  CHECK(total == 3 * rounds);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("Figure 3's pattern: fork many small children, join them in order", "[core][lazy]") {
  const std::size_t processors = GENERATE(1, 2);
  INFO(lazy(processors));
  const std::uint64_t n = presto::test::scaled(40'000);
  auto value = [](std::uint64_t i) { return (i * i) % 7 + i % 3; };
  Runtime rt{lazy_config(processors)};
  const std::uint64_t sum = rt.run([n, value] {
    std::vector<JoinHandle<std::uint64_t>> hs;
    hs.reserve(n);
    for (std::uint64_t i = 0; i < n; ++i) hs.push_back(fork(value, i));
    std::uint64_t s = 0;
    for (auto& h : hs) s += h.join();
    return s;
  });
  std::uint64_t expected = 0;
  for (std::uint64_t i = 0; i < n; ++i) expected += value(i);
  CHECK(sum == expected);
  presto::test::check_no_leaks(rt);
}

// Runners: a child the processor takes out of its queue to run (main yields or sleeps, or the
// other processor steals it) runs as a call on a runner, a thread of the runtime's, which goes
// on with the next child at the front of the queue. Made a thread only if it asks.
TEST_CASE("a child a runner runs: joined after its end, while it sleeps, and cancelled", "[core][lazy]") {
  Runtime rt{lazy_config(1)};
  struct Seen {
    std::uint64_t threadless = 0;
    int ended = 0, slept = 0, after_cancel = 0, cancelled = 0;
    ThreadState sleeping = ThreadState::created;
    bool own_id = false, joinable_after = false;
    std::size_t live_while_asleep = 0;
    std::vector<int> locals;
  } seen;
  rt.run([&] {
    // Ended before the join: main yields, the processor runs the child to its end on a runner.
    const std::uint64_t before = rt.stats().threadless_forks;
    auto a = fork([] { return 1; });
    this_thread::yield();
    seen.threadless = rt.stats().threadless_forks - before;
    seen.ended = a.join();

    // Joined while it sleeps: the child blocks (it becomes a thread, on the runner's stack); main
    // sleeps in its join until a later sibling, run by the next runner, releases it.
    Semaphore go{0, "go"};
    auto b = fork([&go] {
      go.acquire();
      return 2;
    });
    this_thread::yield();
    seen.sleeping = b.thread().state();
    seen.own_id = b.thread().id() == b.id();
    seen.live_while_asleep = rt.stats().live_threads;  // main and b: the runner is not counted
    auto c = fork([&go] { go.release(); });
    seen.slept = b.join();
    c.join();

    // A cancellable join of a child a runner holds: cancelled before it waits and while it waits.
    Semaphore later{0, "later"};
    auto d = fork([&later] {
      later.acquire();
      return 4;
    });
    this_thread::yield();
    StopSource stopped;
    stopped.request_stop();
    try {
      seen.after_cancel = d.join(stopped.get_token());
    } catch (const Cancelled&) {
      ++seen.cancelled;
    }
    StopSource stopping;
    auto e = fork([&stopping] { stopping.request_stop(); });
    try {
      seen.after_cancel = d.join(stopping.get_token());
    } catch (const Cancelled&) {
      ++seen.cancelled;
    }
    seen.joinable_after = d.joinable();
    later.release();
    seen.after_cancel = d.join();
    e.join();

    // Children run one after another on one runner each see their own thread-locals.
    ThreadLocal<int> local{0};
    std::vector<JoinHandle<int>> hs;
    for (int i = 1; i <= 5; ++i) {
      hs.push_back(fork([&local, i] {
        const int was = local.get();
        local.get() = i;
        return was;
      }));
    }
    this_thread::yield();
    for (auto& h : hs) seen.locals.push_back(h.join());
  });
  CHECK(seen.threadless == 1);
  CHECK(seen.ended == 1);
  CHECK(seen.sleeping == ThreadState::blocked);
  CHECK(seen.own_id);
  CHECK(seen.live_while_asleep == 2);
  CHECK(seen.slept == 2);
  CHECK(seen.cancelled == 2);
  CHECK(seen.joinable_after);
  CHECK(seen.after_cancel == 4);
  CHECK(seen.locals == std::vector<int>(5, 0));
  presto::test::check_no_leaks(rt);
}

TEST_CASE("a dropped child a runner holds is freed at its end, and its exception ends the run", "[core][lazy]") {
  const bool ended_first = GENERATE(true, false);
  INFO(lazy(1) << (ended_first ? ", dropped after its end" : ", dropped while it sleeps"));
  {
    Runtime rt{lazy_config(1)};
    std::atomic<int> ran{0};
    rt.run([&] {
      Semaphore go{0, "go"};
      {
        auto h = fork([&] {
          if (!ended_first) go.acquire();
          ran.fetch_add(1);
          return std::string("a result nobody takes");
        });
        this_thread::yield();  // on a runner: ended, or asleep
      }
      go.release();
      this_thread::yield();
    });
    CHECK(ran.load() == 1);
    presto::test::check_no_leaks(rt);
  }
  Runtime rt{lazy_config(1)};
  Semaphore never{0, "never"};
  CHECK_THROWS_WITH(rt.run([&] {
                      Semaphore go{0, "go"};
                      auto h = fork([&] {
                        if (!ended_first) go.acquire();
                        throw std::runtime_error("runner orphan");
                      });
                      this_thread::yield();
                      h.detach();
                      go.release();
                      never.acquire();  // the run must not wait for this
                    }),
                    "runner orphan");
  presto::test::check_no_leaks(rt);
}

TEST_CASE("on 2 processors no child of Figure 3's pattern becomes a thread", "[core][lazy]") {
  // The other processor steals children and runs them on runners; main runs the rest inline.
  const std::uint64_t n = presto::test::scaled(20'000);
  Runtime rt{lazy_config(2)};
  INFO(lazy(2));
  struct Seen {
    std::uint64_t sum = 0, threadless = 0, blocks = 0;
  };
  const Seen seen = rt.run([&] {
    const RuntimeStats before = rt.stats();
    std::vector<JoinHandle<std::uint64_t>> hs;
    hs.reserve(n);
    for (std::uint64_t i = 0; i < n; ++i) hs.push_back(fork([i] { return i % 13; }));
    Seen s;
    for (auto& h : hs) s.sum += h.join();
    const RuntimeStats after = rt.stats();
    s.threadless = after.threadless_forks - before.threadless_forks;
    s.blocks = (after.threads_created + after.threads_recycled) - (before.threads_created + before.threads_recycled);
    return s;
  });
  std::uint64_t expected = 0;
  for (std::uint64_t i = 0; i < n; ++i) expected += i % 13;
  CHECK(seen.sum == expected);
  CHECK(seen.threadless == n);
  CHECK(seen.blocks == 0);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("records freed on a processor that does not fork go back to the forker's", "[core][lazy]") {
  // A thread pinned to processor 0 forks, main pinned to processor 1 joins, round after round:
  // the records main frees on 1 must serve the next round's forks on 0, not pile up on 1 while 0
  // makes new ones. (Not scaled down: n must exceed what a processor keeps for the last check
  // to see growth.)
  const std::uint64_t n = 2'000;
  constexpr int rounds = 20;
  Runtime rt{lazy_config(2)};
  INFO(lazy(2));
  std::vector<std::size_t> made;
  int forked_on_0 = 0, joined_on_1 = 0;
  rt.run([&] {
    Thread::current().set_affinity(1);
    for (int r = 0; r < rounds; ++r) {
      auto forker = fork(ThreadAttributes{.name = "forker", .affinity = 0}, [&] {
        if (Thread::current().processor()->index() == 0) ++forked_on_0;
        std::vector<JoinHandle<std::uint64_t>> hs;
        hs.reserve(n);
        for (std::uint64_t i = 0; i < n; ++i) hs.push_back(fork([i] { return i; }));
        return hs;
      });
      std::vector<JoinHandle<std::uint64_t>> hs = forker.join();
      if (Thread::current().processor()->index() == 1) ++joined_on_1;
      std::uint64_t sum = 0;
      for (auto& h : hs) sum += h.join();
      REQUIRE(sum == n * (n - 1) / 2);
      made.push_back(rt.stats().fork_records);
    }
    Thread::current().set_affinity(std::nullopt);
  });
  CHECK(forked_on_0 == rounds);
  CHECK(joined_on_1 == rounds);
  // Each processor keeps at most 1,024 free records and spills 256 at a time; records are made
  // 256 at a time.
  INFO("records made after each round: " << Catch::Detail::stringify(made));
  CHECK(made.back() <= n + 2 * (1024 + 256) + 256);
  CHECK(made.back() == made[rounds / 2]);  // none made in the second half
  presto::test::check_no_leaks(rt);
}

TEST_CASE("a fork brings in a parked processor; the forks queued behind it are taken too", "[core][lazy]") {
  // idle_spin 0: an idle processor parks at once. Each round waits until the other processor
  // has parked, forks four children, and spins, leaving its queue alone, until they have run:
  // only a wake-up can bring the other processor in. The first fork finds its queue empty and
  // checks for parked processors; the three behind it skip the check, the first one's covering
  // them (OwnedQueue::owner_push_record), and are stolen or taken as lone threads. Bounded by an
  // iteration count of seconds, never by a sleep.
  RuntimeConfig config = lazy_config(2);
  config.idle_spin = 0;
  Runtime rt{std::move(config)};
  INFO(lazy(2));
  const std::uint64_t bound = 400'000'000;
  constexpr int rounds = 20, children = 4;
  int round = 0;
  std::uint64_t waited = 0;
  rt.run([&] {
    std::uint64_t parks = 0;  // the parks counted before the other processor's last wake-up
    for (; round < rounds && waited < bound; ++round) {
      while (rt.stats().parks == parks && waited < bound) ++waited;  // it has parked (again)
      parks = rt.stats().parks;
      std::atomic<int> ran{0};
      std::vector<JoinHandle<void>> hs;
      for (int i = 0; i < children; ++i) hs.push_back(fork([&] { ran.fetch_add(1, std::memory_order_release); }));
      while (ran.load(std::memory_order_acquire) != children && waited < bound) ++waited;
      for (auto& h : hs) h.join();
    }
  });
  INFO("round " << round);
  CHECK(waited < bound);
  CHECK(round == rounds);
}
