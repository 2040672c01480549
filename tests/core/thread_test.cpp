// Threads: creation, start forms, join (values, exceptions), identity, yield, recycling,
// per-thread stacks and attributes, fiber-local storage, the Main program shape.

#include <atomic>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

#include "captured_log.hpp"
#include "test_support.hpp"

using namespace presto;
using presto::test::Config;
using presto::test::PoolKind;

namespace {

struct Counter {
  std::atomic<int> total{0};
  int add(int a, int b) {
    total += a + b;
    return a + b;
  }
};

class Worker : public Thread {
 public:
  explicit Worker(std::vector<int>& out) : Thread("worker"), out_(out) {}

 protected:
  void run() override {
    for (int i = 0; i < 3; ++i) out_.push_back(i);
  }

 private:
  std::vector<int>& out_;
};

}  // namespace

TEST_CASE("fork and join return each thread's value", "[core][thread]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const int n = 200;
  long sum = presto::test::run(cfg, [n] {
    std::vector<JoinHandle<long>> handles;
    for (int i = 0; i < n; ++i) handles.push_back(fork([i] { return static_cast<long>(i) * i; }));
    long s = 0;
    for (auto& h : handles) s += h.join();
    return s;
  });
  long expected = 0;
  for (long i = 0; i < n; ++i) expected += i * i;
  CHECK(sum == expected);
}

TEST_CASE("a thread's exception reaches its joiner", "[core][thread]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  std::string caught = presto::test::run(cfg, [] {
    auto h = fork([]() -> int { throw std::runtime_error("boom in worker"); });
    try {
      h.join();
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  });
  CHECK(caught == "boom in worker");
}

TEST_CASE("Thread::start takes functions, member functions and run() overrides", "[core][thread]") {
  Runtime rt{{.processors = 2}};
  std::vector<int> out;
  Counter counter;
  int result = rt.run([&] {
    Thread adder{"adder"};
    adder.start(&Counter::add, &counter, 40, 2);  // std::invoke order, like PRESTO's start(obj, op, args)
    Thread plain{"plain"};
    plain.start([](int x) { return x * 2; }, 21);
    Worker worker{out};
    worker.start();
    int a = adder.join<int>();
    int b = plain.join<int>();
    worker.join();
    return a + b;
  });
  CHECK(result == 84);
  CHECK(counter.total == 42);
  CHECK(out == std::vector<int>{0, 1, 2});
  presto::test::check_no_leaks(rt);
}

TEST_CASE("Thread::current, names and ids", "[core][thread]") {
  Runtime rt{{.processors = 2}};
  std::string main_name, child_name;
  std::uint64_t main_id = 0, child_id = 0, child_seen_id = 0;
  rt.run([&] {
    main_name = Thread::current().name();
    main_id = this_thread::get_id();
    auto h = fork(ThreadAttributes{.name = "child"}, [&] {
      child_name = Thread::current().name();
      child_seen_id = Thread::current().id();
    });
    child_id = h.id();
    h.join();
  });
  CHECK(main_name == "main");
  CHECK(main_id != 0);
  CHECK(child_name == "child");
  CHECK(child_id == child_seen_id);
  CHECK(child_id != main_id);
  CHECK(Thread::current().is_external());  // back on the OS thread
  CHECK(Thread::current().describe().find("external thread") == 0);
}

TEST_CASE("yield lets every other ready thread of the processor run", "[core][thread]") {
  Runtime rt{{.processors = 1, .pool = std::make_unique<FifoPool>()}};
  std::vector<int> order;
  rt.run([&] {
    auto a = fork([&] {
      for (int i = 0; i < 3; ++i) {
        order.push_back(1);
        this_thread::yield();
      }
    });
    auto b = fork([&] {
      for (int i = 0; i < 3; ++i) {
        order.push_back(2);
        this_thread::yield();
      }
    });
    a.join();
    b.join();
  });
  CHECK(order == std::vector<int>{1, 2, 1, 2, 1, 2});
}

TEST_CASE("control blocks and stacks made by fork are recycled", "[core][thread]") {
  Runtime rt{{.processors = 1, .lazy_forks = false}};  // forks that make control blocks
  rt.run([] {
    for (int i = 0; i < 1000; ++i) fork([] {}).join();
  });
  RuntimeStats s = rt.stats();
  CHECK(s.threads_recycled >= 990);
  CHECK(s.threads_created <= 10);
  CHECK(s.stacks_cached >= 1);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("control blocks recycled on one processor serve forks on another", "[core][thread]") {
  // Forks on processor 0, joins (which recycle the blocks) on processor 1, as when a forker's
  // joins migrate it: processor 1's blocks must reach processor 0 through the shared depot,
  // not pile up on 1 while 0 allocates afresh every round.
  Runtime rt{{.processors = 2}};
  constexpr std::size_t n = 1000;
  constexpr int rounds = 6;
  rt.run([&] {
    for (int r = 0; r < rounds; ++r) {
      std::vector<JoinHandle<void>> handles;
      fork(ThreadAttributes{.name = "forker", .affinity = 0}, [&] {
        for (std::size_t i = 0; i < n; ++i) handles.push_back(fork(ThreadAttributes{.affinity = 0}, [] {}));
      }).join();
      fork(ThreadAttributes{.name = "joiner", .affinity = 1}, [&] {
        for (auto& h : handles) h.join();
        handles.clear();
      }).join();
    }
  });
  RuntimeStats s = rt.stats();
  INFO("created " << s.threads_created << ", recycled " << s.threads_recycled);
  CHECK(s.threads_created + s.threads_recycled == rounds * (n + 2) + 1);
  CHECK(s.threads_created < 2 * n);  // without sharing: rounds x n
  presto::test::check_no_leaks(rt);
}

TEST_CASE("a thread's end races its join, a cancelled join and its dropped handle on several processors",
          "[core][thread]") {
  // The end and the join meet in the thread's end word, without its spinlock unless a joiner
  // waits (Dispatch::end_thread). Here every meeting happens, on processors that steal each
  // other's threads: a join that finds the thread over, one that sleeps on a thread another
  // processor runs, a cancellable join given up (which leaves the end to take the spinlock),
  // and handles dropped (detached, or destroyed) while their threads run or after they end.
  // Every value must arrive once, every thread must run once, and every control block must
  // be recycled exactly once (the sanitizer builds catch a block lost or freed twice).
  const Config c = GENERATE(Config{2, PoolKind::local_queue}, Config{4, PoolKind::local_queue},
                            Config{4, PoolKind::shuffle});
  INFO(c);
  constexpr std::size_t kPerRound = 16;
  const std::size_t rounds = presto::test::scaled(2000);
  std::atomic<std::size_t> ran{0};
  Runtime rt{presto::test::runtime_config(c)};
  rt.run([&] {
    for (std::size_t r = 0; r < rounds; ++r) {
      std::vector<JoinHandle<std::size_t>> joined;
      for (std::size_t i = 0; i < kPerRound; ++i) {
        joined.push_back(fork([i, &ran] {
          for (std::size_t k = 0; k < i % 4; ++k) this_thread::yield();  // ends at different moments
          ran.fetch_add(1, std::memory_order_relaxed);
          return i;
        }));
        JoinHandle<void> dropped = fork([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
        if (i % 2 == 0) fork([&ran] { ran.fetch_add(1, std::memory_order_relaxed); }).detach();
        if (i % 4 == 1) this_thread::yield();  // dropped (destroyed) after it may have run
      }
      for (std::size_t i = 0; i < kPerRound; ++i) {
        if (i % 3 == 0) {
          std::stop_source stop;
          stop.request_stop();
          std::optional<std::size_t> value;
          try {
            value = joined[i].join(stop.get_token());  // it had ended: the join succeeds
          } catch (const Cancelled&) {
            CHECK(joined[i].joinable());  // given up while it ran: the handle stays
          }
          if (value) {
            CHECK(*value == i);
            continue;
          }
        }
        CHECK(joined[i].join() == i);
      }
    }
  });
  const std::size_t forks = rounds * (2 * kPerRound + kPerRound / 2);
  CHECK(ran.load() == forks);
  RuntimeStats s = rt.stats();
  CHECK(s.threads_created + s.threads_recycled + s.threadless_forks == forks + 1);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("stack size is set per thread and by default in RuntimeConfig", "[core][thread]") {
  Runtime rt{{.processors = 1, .stack_size = 32 * 1024}};
  CHECK(rt.default_stack_size() == 32 * 1024);
  bool deep_ok = rt.run([] {
    // 512 KiB of locals would overflow the default 32 KiB stack; this thread asks for 1 MiB.
    auto h = fork(ThreadAttributes{.name = "deep", .stack_size = 1024 * 1024}, [] {
      volatile char buffer[512 * 1024];
      buffer[0] = 1;
      buffer[sizeof buffer - 1] = 2;
      return buffer[0] + buffer[sizeof buffer - 1] == 3;
    });
    return h.join();
  });
  CHECK(deep_ok);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("ThreadLocal gives each thread its own value", "[core][thread]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  ThreadLocal<int> calls{100};
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    std::vector<JoinHandle<void>> hs;
    for (int i = 0; i < 50; ++i) {
      hs.push_back(fork([&, i] {
        for (int k = 0; k < i; ++k) {
          ++*calls;
          this_thread::yield();  // may migrate: the value must follow the thread
        }
        record.expect(*calls == 100 + i, "thread " + std::to_string(i) + " saw " + std::to_string(*calls));
      }));
    }
    for (auto& h : hs) h.join();
  });
  PRESTO_CHECK_RECORD(record);
  CHECK(*calls == 100);  // the OS thread has its own value, untouched
}

TEST_CASE("threads started before run() wait in the pool", "[core][thread]") {
  Runtime rt{{.processors = 2}};
  std::atomic<int> ran{0};
  auto early = rt.fork([&] { ran += 1; });
  Thread owned{"owned"};
  rt.start(owned, [&] { ran += 10; });
  CHECK(ran == 0);
  rt.run([] {});
  CHECK(ran == 11);
  early.join();
  owned.join();
  presto::test::check_no_leaks(rt);
}

TEST_CASE("Main keeps PRESTO's init, main, done shape", "[core][thread]") {
  struct App : Main {
    std::vector<std::string> calls;
    int init() override {
      calls.push_back("init");
      config.processors = 2;
      return 0;
    }
    int main() override {
      calls.push_back("main on " + std::to_string(runtime().processors()) + " processors");
      return 7;
    }
    int done(int status) override {
      calls.push_back("done " + std::to_string(status));
      return status + 1;
    }
  } app;
  CHECK(app.run() == 8);
  CHECK(app.calls == std::vector<std::string>{"init", "main on 2 processors", "done 7"});

  struct Refuses : Main {
    int init() override { return 3; }
    int main() override { throw std::logic_error("must not run"); }
  } refuses;
  CHECK(refuses.run() == 3);
}

TEST_CASE("two runtimes live in one process", "[core][thread]") {
  Runtime a{{.processors = 1, .name = "a"}};
  Runtime b{{.processors = 2, .name = "b"}};
  std::string seen_a, seen_b;
  std::thread other([&] { b.run([&] { seen_b = this_thread::runtime()->name(); }); });
  a.run([&] { seen_a = this_thread::runtime()->name(); });
  other.join();
  CHECK(seen_a == "a");
  CHECK(seen_b == "b");
}

TEST_CASE("100,000 threads alive at once", "[core][thread][many]") {
  const std::size_t n = presto::test::scaled(100'000);
  Runtime rt{{.processors = 2, .stack_size = 16 * 1024}};
  std::size_t peak = 0;
  std::size_t finished = rt.run([&] {
    Barrier gate{n + 1, "gate"};
    std::atomic<std::size_t> arrived{0}, done{0};
    std::vector<JoinHandle<void>> handles;
    handles.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      handles.push_back(fork([&] {
        // A thread from here on, not a lazy fork being made one on another processor (which a
        // snapshot of live_threads may miss by one), before it counts itself.
        Thread::current();
        arrived.fetch_add(1);
        gate.arrive_and_wait();  // every thread is alive, blocked here, until the last arrives
        done.fetch_add(1);
      }));
    }
    while (arrived.load() != n) this_thread::yield();
    peak = this_thread::runtime()->stats().live_threads;
    gate.arrive_and_wait();
    for (auto& h : handles) h.join();
    return done.load();
  });
  CHECK(peak == n + 1);
  CHECK(finished == n);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("the runtime logs through its own logger; debug level shows every dispatch", "[core][thread]") {
  presto::test::CapturedLog log{"traced", spdlog::level::debug};
  log.logger()->set_pattern("%v");
  Runtime rt{{.processors = 1, .logger = log.logger(), .name = "traced"}};
  rt.run([] { fork(ThreadAttributes{.name = "worker"}, [] {}).join(); });
  CHECK_THAT(log.text(), Catch::Contains("runtime 'traced': 1 processor,"));
  CHECK_THAT(log.text(), Catch::Contains("processor 0 runs thread 'main' (id 1) (from idle)"));
  CHECK_THAT(log.text(), Catch::Contains("runs thread 'worker'"));
  CHECK(&rt.logger() == log.logger().get());
  CHECK(spdlog::get("traced") == nullptr);  // never registered in spdlog's global registry
}
