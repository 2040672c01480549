// Lateral replacement and the built-in disciplines: pools, schedulers, thread prototypes and
// processor prototypes replaced in a running system, and the dispatch order of each pool.

#include <algorithm>
#include <atomic>
#include <numeric>
#include <typeinfo>
#include <memory>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace presto;

namespace {

// Dispatch order on one processor: the main thread forks `priorities.size()` threads that cannot
// run until it blocks in join; each records its index when it runs.
std::vector<int> dispatch_order(std::unique_ptr<ThreadPool> pool, std::vector<int> priorities,
                                std::uint64_t seed = 1) {
  // Without inline joins: the joins below would run each thread in join order.
  Runtime rt{{.processors = 1, .inline_joins = false, .pool = std::move(pool), .seed = seed}};
  std::vector<int> order;
  rt.run([&] {
    std::vector<JoinHandle<void>> hs;
    for (std::size_t i = 0; i < priorities.size(); ++i) {
      hs.push_back(fork(ThreadAttributes{.priority = priorities[i]}, [&order, i] { order.push_back(static_cast<int>(i)); }));
    }
    for (auto& h : hs) h.join();
  });
  return order;
}

// A thread class that counts its own sleeps: installed as the prototype, every thread the
// runtime makes is one (PRESTO's instrumented-thread story in miniature).
class CountingThread : public Thread {
 public:
  explicit CountingThread(ThreadAttributes a = {}, std::atomic<int>* sleeps = nullptr)
      : Thread(std::move(a)), sleeps_(sleeps) {}
  std::unique_ptr<Thread> newthread(ThreadAttributes a) const override {
    return std::make_unique<CountingThread>(std::move(a), sleeps_);
  }
  void sleep(SynchroObject& so) override {
    if (sleeps_ != nullptr) ++*sleeps_;
    Thread::sleep(so);
  }

 private:
  std::atomic<int>* sleeps_;
};

}  // namespace

TEST_CASE("each pool's dispatch order", "[core][replacement]") {
  CHECK(dispatch_order(std::make_unique<FifoPool>(), {0, 0, 0, 0}) == std::vector<int>{0, 1, 2, 3});
  CHECK(dispatch_order(std::make_unique<LifoPool>(), {0, 0, 0, 0}) == std::vector<int>{3, 2, 1, 0});
  CHECK(dispatch_order(std::make_unique<PriorityPool>(), {1, 5, 3, 5, 0}) == std::vector<int>{1, 3, 2, 0, 4});
  CHECK(dispatch_order(std::make_unique<LocalQueuePool>(), {0, 0, 0, 0}) == std::vector<int>{0, 1, 2, 3});
  // A seed replays the same shuffle; the shuffle is a permutation.
  auto a = dispatch_order(std::make_unique<ShufflePool>(), std::vector<int>(32, 0), 42);
  auto b = dispatch_order(std::make_unique<ShufflePool>(), std::vector<int>(32, 0), 42);
  auto c = dispatch_order(std::make_unique<ShufflePool>(std::uint64_t{7}), std::vector<int>(32, 0), 42);
  CHECK(a == b);
  CHECK(a != c);
  std::vector<int> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> identity(32);
  std::iota(identity.begin(), identity.end(), 0);
  CHECK(sorted == identity);
}

TEST_CASE("replace_pool moves the ready threads and changes the discipline", "[core][replacement]") {
  // PRESTO's ThreadPriorityHeap example: FIFO first, then priorities, installed while threads run.
  Runtime rt{{.processors = 1, .pool = std::make_unique<FifoPool>()}};
  std::vector<int> order;
  std::size_t moved = 0, left_behind = 99;
  std::string old_name;
  rt.run([&] {
    std::vector<JoinHandle<void>> hs;
    for (int i = 0; i < 6; ++i) {
      hs.push_back(fork(ThreadAttributes{.priority = i % 3}, [&order, i] { order.push_back(i); }));
    }
    auto old = this_thread::runtime()->scheduler().replace_pool(std::make_unique<PriorityPool>());
    moved = this_thread::runtime()->scheduler().pool().size();
    left_behind = old->size();
    old_name = std::string(old->name());
    for (auto& h : hs) h.join();
  });
  CHECK(old_name == "fifo");
  CHECK(moved == 6);
  CHECK(left_behind == 0);
  CHECK(order == std::vector<int>{2, 5, 1, 4, 0, 3});  // by priority, FIFO among equals
  CHECK(rt.scheduler().pool().name() == "priority");
  presto::test::check_no_leaks(rt);
}

TEST_CASE("replace_scheduler installs a scheduler that sees every later dispatch", "[core][replacement]") {
  struct CountingScheduler final : Scheduler {
    std::atomic<long> picks{0};
    Thread* next(Processor& p) override {
      Thread* t = Scheduler::next(p);
      if (t != nullptr) ++picks;
      return t;
    }
    std::string_view name() const noexcept override { return "counting"; }
  };
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  Runtime rt{presto::test::runtime_config(cfg)};
  long picks = 0;
  std::string old_name;
  rt.run([&] {
    // The threads start under the old scheduler but cannot finish before the new one is in:
    // each waits for a permit released after the replacement, so each is dispatched again
    // through the new scheduler (whatever the machine's load does to the timing).
    Semaphore go{0, "go"};
    std::vector<JoinHandle<void>> hs;
    for (int i = 0; i < 20; ++i) hs.push_back(fork([&go] {
      this_thread::yield();
      go.acquire();
      for (int k = 0; k < 20; ++k) this_thread::yield();
    }));
    auto counting = std::make_unique<CountingScheduler>();
    CountingScheduler* c = counting.get();
    auto old = this_thread::runtime()->replace_scheduler(std::move(counting));
    old_name = std::string(old->name());
    go.release(20);
    for (auto& h : hs) h.join();
    picks = c->picks.load();
  });
  CHECK(old_name == "scheduler");
  CHECK(rt.scheduler().name() == "counting");
  CHECK(picks > 0);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("set_thread_prototype: every thread made afterwards is a clone", "[core][replacement]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  Runtime rt{presto::test::runtime_config(cfg)};
  std::atomic<int> sleeps{0};
  bool before_plain = false, after_counting = false;
  std::string old_kind;
  rt.run([&] {
    // warm the control-block caches with plain threads
    for (int i = 0; i < 10; ++i) fork([] {}).join();
    auto probe = fork([] { return dynamic_cast<CountingThread*>(&Thread::current()) == nullptr; });
    before_plain = probe.join();
    auto old = this_thread::runtime()->set_thread_prototype(std::make_unique<CountingThread>(ThreadAttributes{}, &sleeps));
    old_kind = typeid(*old).name();
    Monitor m{"m"};
    Condition c{m, "c"};
    bool go = false;
    auto sleeper = fork([&] {
      Monitor::Entry e{m};
      c.wait(e, [&] { return go; });  // sleeps through CountingThread::sleep
      return dynamic_cast<CountingThread*>(&Thread::current()) != nullptr;
    });
    while (!presto::test::has_waiters(c)) this_thread::yield();
    {
      Monitor::Entry e{m};
      go = true;
      c.signal();
    }
    after_counting = sleeper.join();
  });
  CHECK(before_plain);
  CHECK(after_counting);
  CHECK(sleeps >= 1);
  CHECK(old_kind == typeid(Thread).name());
  CHECK(dynamic_cast<const CountingThread*>(&rt.thread_prototype()) != nullptr);
  presto::test::check_no_leaks(rt);
}

TEST_CASE("a pool replaced under the default one gets every later put, and back again", "[core][replacement]") {
  // The dispatch path serves the default pool's queues through a per-processor word that each
  // replacement refreshes (Processor::own_pool_): a stale word would keep putting yielding
  // threads into the old pool, where the new one never sees them.
  struct CountingPool final : ThreadPool {
    FifoPool inner;
    std::atomic<long> puts{0};
    void put(Thread& t) override {
      ++puts;
      inner.put(t);
    }
    Thread* get(Processor& p) override { return inner.get(p); }
    std::size_t size() const noexcept override { return inner.size(); }
    bool has_work_for(const Processor& p) const noexcept override { return inner.has_work_for(p); }
    std::string_view name() const noexcept override { return "counting"; }
    void attach(const Runtime& rt) override { inner.attach(rt); }
  };
  constexpr int kThreads = 8, kYields = 50;
  Runtime rt{{.processors = 2}};  // the default scheduler and pool
  long puts = 0;
  std::size_t left_in_default = 99, left_in_counting = 99;
  rt.run([&] {
    auto yielders = [] {
      std::vector<JoinHandle<void>> hs;
      for (int i = 0; i < kThreads; ++i) {
        hs.push_back(fork([] {
          for (int k = 0; k < kYields; ++k) this_thread::yield();
        }));
      }
      for (auto& h : hs) h.join();
    };
    Scheduler& s = this_thread::runtime()->scheduler();
    auto counting = std::make_unique<CountingPool>();
    CountingPool* c = counting.get();
    auto default_pool = s.replace_pool(std::move(counting));
    yielders();
    puts = c->puts.load();
    auto back = s.replace_pool(std::move(default_pool));  // the default pool again
    yielders();
    left_in_counting = back->size();
    left_in_default = this_thread::runtime()->scheduler().pool().size();
  });
  // Every fork went through the new pool, and so did each yield that found another thread
  // ready (one that finds none keeps running without a put); with a stale word both would
  // have gone to the old pool's queue.
  CHECK(puts >= kThreads);
  CHECK(left_in_counting == 0);
  CHECK(left_in_default == 0);
  CHECK(rt.scheduler().pool().name() == "local-queue");
  presto::test::check_no_leaks(rt);
}

TEST_CASE("processors are made from the processor prototype", "[core][replacement]") {
  struct Named final : Processor {
    std::atomic<int>* starts;
    std::atomic<int>* stops;
    Named(std::atomic<int>* a, std::atomic<int>* b) : starts(a), stops(b) {}
    std::unique_ptr<Processor> newprocessor() const override { return std::make_unique<Named>(starts, stops); }
    void on_start() override { ++*starts; }
    void on_stop() override { ++*stops; }
  };
  std::atomic<int> starts{0}, stops{0};
  Runtime rt{{.processors = 3, .processor_prototype = std::make_unique<Named>(&starts, &stops)}};
  bool is_named = false;
  rt.run([&] { is_named = dynamic_cast<Named*>(Processor::current()) != nullptr; });
  CHECK(is_named);
  CHECK(starts == 3);
  CHECK(stops == 3);
  CHECK(rt.processor(2).index() == 2);
  CHECK_THROWS_AS(rt.processor(3), UsageError);
}
