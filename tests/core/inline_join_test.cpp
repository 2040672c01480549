// Inline joins (RuntimeConfig::inline_joins): a thread joined before it has run is run by its
// joiner, on the joiner's stack, as itself. Checked here: identity, results and exceptions,
// blocking and waking inside an inline child (on any processor), double joins and deadlock
// reports while one runs, the stack it is promised, the fallback when there is no room, and
// that subclasses (unless they allow it) and the option's "off" keep the ordinary path.

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace presto;
using presto::test::Config;

namespace {

// Sum of 0..leaves-1 by a tree of threads, ten children a node (skynet).
std::uint64_t tree_sum(std::uint64_t first, std::uint64_t size) {
  if (size == 1) return first;
  std::vector<JoinHandle<std::uint64_t>> children;
  for (std::uint64_t i = 0; i < 10; ++i) children.push_back(fork(tree_sum, first + i * (size / 10), size / 10));
  std::uint64_t sum = 0;
  for (auto& c : children) sum += c.join();
  return sum;
}

// A chain: each thread forks and joins the next, `depth` deep.
std::uint64_t chain(std::uint64_t depth) {
  if (depth == 0) return 0;
  return fork(chain, depth - 1).join() + 1;
}

class Observed : public Thread {
 public:
  using Thread::Thread;
  std::unique_ptr<Thread> newthread(ThreadAttributes attributes) const override {
    return std::make_unique<Observed>(std::move(attributes));
  }
};

// A subclass that lets its joiner run it (Thread::allow_inline_join), with a body of its own.
class Inlinable : public Thread {
 public:
  explicit Inlinable(Thread*& ran_as) : Thread("inlinable"), ran_as_(ran_as) { allow_inline_join(); }

 protected:
  void run() override { ran_as_ = &Thread::current(); }

 private:
  Thread*& ran_as_;
};

}  // namespace

TEST_CASE("a thread joined before it runs is run by its joiner, as itself", "[core][inline]") {
  Runtime rt{{.processors = 1}};
  struct Seen {
    std::string inside, after;
    std::uint64_t inside_id = 0, joiner_id = 0;
    ThreadState joiner_state_inside = ThreadState::created;
  } seen;
  rt.run([&] {
    Thread& me = Thread::current();
    seen.joiner_id = me.id();
    auto h = fork(ThreadAttributes{.name = "child"}, [&] {
      seen.inside = Thread::current().name();
      seen.inside_id = Thread::current().id();
      seen.joiner_state_inside = me.state();
      return 7;
    });
    const int v = h.join();
    seen.after = Thread::current().name();
    return v;
  });
  CHECK(seen.inside == "child");
  CHECK(seen.inside_id != seen.joiner_id);
  CHECK(seen.joiner_state_inside == ThreadState::blocked);  // it waits for the child, as a joiner does
  CHECK(seen.after == "main");
  CHECK(rt.stats().inline_joins == 1);
  CHECK(rt.stats().dispatches == 2);  // main, and the child in it
  presto::test::check_no_leaks(rt);
}

TEST_CASE("an inline child that never asks who it is still runs and ends as itself", "[core][inline]") {
  // A body that asks nothing of the runtime: what it sees of itself and of its joiner, and what
  // the join returns, are as for any inline child (a cheaper inline join must keep them; see
  // docs/design/lazy-forks.md, step 2). Then identity is each thread's own again.
  Runtime rt{{.processors = 1}};
  ThreadState joiner_state = ThreadState::created;
  ThreadState child_state = ThreadState::created;
  std::uint64_t child_id = 0;
  std::string asked;
  rt.run([&] {
    Thread& me = Thread::current();
    Thread* child = nullptr;
    auto h = fork(ThreadAttributes{.name = "quiet"}, [&] {
      joiner_state = me.state();
      child_state = child->state();
      return 41;
    });
    child = &h.thread();
    child_id = h.id();
    CHECK(h.join() == 41);
    // A second child asks, after the first has ended: identity is its own, then main's again.
    auto g = fork(ThreadAttributes{.name = "asks"}, [&] { asked = Thread::current().name(); });
    g.join();
    CHECK(Thread::current().name() == "main");
    CHECK(&Thread::current() == &me);
  });
  CHECK(joiner_state == ThreadState::blocked);
  CHECK(child_state == ThreadState::running);
  CHECK(child_id != 0);
  CHECK(asked == "asks");
  CHECK(rt.stats().inline_joins == 2);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("trees of forks and joins give the same results with and without inline joins", "[core][inline]") {
  auto cfg = GENERATE(presto::test::configs());
  const bool inline_joins = GENERATE(true, false);
  INFO(cfg << ", inline joins " << inline_joins);
  RuntimeConfig config = presto::test::runtime_config(cfg);
  config.inline_joins = inline_joins;
  Runtime rt{std::move(config)};
  const std::uint64_t leaves = presto::test::scaled(10'000) >= 10'000 ? 10'000 : 1'000;
  CHECK(rt.run([leaves] { return tree_sum(0, leaves); }) == leaves * (leaves - 1) / 2);
  if (!inline_joins) CHECK(rt.stats().inline_joins == 0);
  if (inline_joins && cfg.processors == 1 && cfg.pool != presto::test::PoolKind::priority &&
      cfg.pool != presto::test::PoolKind::shuffle) {
    CHECK(rt.stats().inline_joins > 0);  // pools that support withdraw
  }
  presto::test::check_no_leaks(rt);
}

TEST_CASE("an inline child that throws hands its exception to the joiner", "[core][inline]") {
  Runtime rt{{.processors = 1}};
  const std::string caught = rt.run([] {
    auto h = fork([]() -> int { throw std::runtime_error("inline boom"); });
    try {
      h.join();
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("none");
  });
  CHECK(caught == "inline boom");
  CHECK(rt.stats().inline_joins == 1);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("an inline child may block and be woken, on any processor", "[core][inline]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const int rounds = static_cast<int>(presto::test::scaled(200));
  const long total = presto::test::run(cfg, [rounds] {
    long sum = 0;
    for (int r = 0; r < rounds; ++r) {
      Semaphore go{0, "go"};
      Semaphore done{0, "done"};
      auto child = fork([&] {
        go.acquire();  // blocks (inline or not) until the releaser runs
        this_thread::yield();
        done.release();
        return r;
      });
      auto releaser = fork([&] {
        go.release();
        done.acquire();
      });
      sum += child.join();  // usually run inline: its P blocks the joiner's stack with it
      releaser.join();
    }
    return sum;
  });
  CHECK(total == static_cast<long>(rounds) * (rounds - 1) / 2);
}

TEST_CASE("a second joiner of a thread running inline gets a UsageError", "[core][inline]") {
  Runtime rt{{.processors = 1}};
  std::string error;
  rt.run([&] {
    Semaphore go{0, "go"};
    Thread child{"child"};
    child.start([&] { go.acquire(); });
    auto second = fork([&] {
      try {
        child.join();  // child is running inline in main, blocked on go
      } catch (const UsageError& e) {
        error = e.what();
      }
      go.release();
    });
    child.join();  // inline: child runs here, blocks, and `second` runs meanwhile
    second.join();
  });
  CHECK(error.find("already being joined") != std::string::npos);
  CHECK(rt.stats().inline_joins >= 1);
}

TEST_CASE("a deadlock inside an inline child reports the child and its joiner", "[core][inline]") {
  Runtime rt{{.processors = 1}};
  std::string report;
  try {
    rt.run([] {
      Semaphore never{0, "never"};
      fork(ThreadAttributes{.name = "stuck"}, [&] { never.acquire(); }).join();
    });
  } catch (const Deadlock& d) {
    report = d.what();
  }
  INFO(report);
  CHECK(rt.stats().inline_joins == 1);
  CHECK(report.find("thread 'stuck'") != std::string::npos);
  CHECK(report.find("semaphore 'never'") != std::string::npos);
  CHECK(report.find("thread 'main'") != std::string::npos);
}

TEST_CASE("an inline child gets the whole stack a thread is promised", "[core][inline]") {
  Runtime rt{{.processors = 1}};
  REQUIRE(rt.default_stack_size() == 64 * 1024);
  const int r = rt.run([] {
    return fork([] {
      // Nearly all of the promised 64 KiB; an overflow would abort the test process.
      volatile char block[56 * 1024];
      for (std::size_t i = 0; i < sizeof(block); i += 512) block[i] = static_cast<char>(i);
      return static_cast<int>(block[512]);
    }).join();
  });
  CHECK(r == static_cast<int>(static_cast<char>(512)));
  CHECK(rt.stats().inline_joins == 1);
}

TEST_CASE("a chain deeper than the stack holds falls back to threads of their own", "[core][inline]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const std::uint64_t depth = presto::test::scaled(2'000) >= 500 ? 2'000 : 500;
  Runtime rt{presto::test::runtime_config(cfg)};
  CHECK(rt.run([depth] { return chain(depth); }) == depth);
  CHECK(rt.stats().inline_joins < depth);  // each stack holds a few inline levels, then a new stack
  presto::test::check_no_leaks(rt);
}

TEST_CASE("threads of a subclass that does not allow it are never run inline", "[core][inline]") {
  Runtime rt{{.processors = 2, .thread_prototype = std::make_unique<Observed>()}};
  CHECK(rt.run([] { return tree_sum(0, 100); }) == 4950u);
  CHECK(rt.stats().inline_joins == 0);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("a subclass that allows it is run by its joiner, as itself, through its own run()", "[core][inline]") {
  Runtime rt{{.processors = 1}};
  Thread* ran_as = nullptr;
  const Thread* made = nullptr;
  Thread* joiner_after = nullptr;
  rt.run([&] {
    Inlinable t{ran_as};
    made = &t;
    t.start();
    t.join();
    joiner_after = &Thread::current();
  });
  CHECK(ran_as == made);  // its own run(), as itself
  CHECK(joiner_after != made);
  CHECK(rt.stats().inline_joins == 1);
  presto::test::check_no_leaks(rt);
}
