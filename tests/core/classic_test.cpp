// Classic concurrency problems, each with a checked result, over every configuration
// (processors {1, 2, 4} x every pool): the bounded buffer (monitor and conditions, and
// semaphores), readers and writers, the dining philosophers (ordered locks, and a monitor
// "waiter"), barrier phases, and the PRESTO paper's SynchronizedStack.
//
// Nothing here asserts inside a presto thread: facts are recorded (Record, atomics, returned
// values) and asserted after run() returns. Everything is bounded by iteration counts.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "test_support.hpp"

using namespace presto;
using presto::test::Config;
using presto::test::Record;

namespace {

// Lets other threads in now and then, so that critical sections and protocols interleave
// even on one processor (where nothing preempts a thread).
inline void maybe_yield(std::size_t i, std::size_t every = 3) {
  if (i % every == 0) this_thread::yield();
}

// ---------------------------------------------------------------------------------------
// Bounded buffer: a Monitor and two Conditions (Mesa: every wait rechecks its predicate).

class BoundedBuffer {
 public:
  BoundedBuffer(std::size_t capacity, Record& record) : capacity_(capacity), record_(record) {}

  void put(long item) {
    Monitor::Entry entry{monitor_};
    not_full_.wait(entry, [&] { return items_.size() < capacity_; });
    enter();
    items_.push_back(item);
    if (items_.size() > capacity_) {
      record_.fail("buffer holds " + std::to_string(items_.size()) + " items, capacity " +
                   std::to_string(capacity_));
    }
    max_size_ = std::max(max_size_, items_.size());
    not_empty_.signal();
    leave();
  }

  long get() {
    Monitor::Entry entry{monitor_};
    not_empty_.wait(entry, [&] { return !items_.empty(); });
    enter();
    long item = items_.front();
    items_.pop_front();
    not_full_.signal();
    leave();
    return item;
  }

  std::size_t max_size() const { return max_size_; }
  std::size_t size() const { return items_.size(); }

 private:
  // The monitor's mutual exclusion itself, checked. A waiter leaves the monitor while it
  // sleeps, so the count starts once the wait is over.
  void enter() {
    if (inside_.fetch_add(1) != 0) record_.fail("two threads inside the buffer's monitor");
  }
  void leave() { inside_.fetch_sub(1); }

  Monitor monitor_{"buffer"};
  Condition not_full_{monitor_, "not full"};
  Condition not_empty_{monitor_, "not empty"};
  std::deque<long> items_;
  const std::size_t capacity_;
  std::size_t max_size_ = 0;
  std::atomic<int> inside_{0};
  Record& record_;
};

// The same buffer from Dijkstra's semaphores: free slots, full slots, and a binary semaphore
// for the queue itself.
class SemaphoreBuffer {
 public:
  SemaphoreBuffer(std::size_t capacity, Record& record)
      : capacity_(capacity), free_(static_cast<std::ptrdiff_t>(capacity), "free slots"), record_(record) {}

  void put(long item) {
    free_.acquire();
    mutex_.acquire();
    items_.push_back(item);
    if (items_.size() > capacity_) {
      record_.fail("buffer holds " + std::to_string(items_.size()) + " items, capacity " +
                   std::to_string(capacity_));
    }
    max_size_ = std::max(max_size_, items_.size());
    mutex_.release();
    full_.release();
  }

  long get() {
    full_.acquire();
    mutex_.acquire();
    if (items_.empty()) record_.fail("a full slot was granted on an empty buffer");
    long item = items_.empty() ? -1 : items_.front();
    if (!items_.empty()) items_.pop_front();
    mutex_.release();
    free_.release();
    return item;
  }

  std::size_t max_size() const { return max_size_; }
  std::size_t size() const { return items_.size(); }

 private:
  const std::size_t capacity_;
  Semaphore free_;
  Semaphore full_{0, "full slots"};
  Semaphore mutex_{1, "queue"};
  std::deque<long> items_;
  std::size_t max_size_ = 0;
  Record& record_;
};

struct BufferResult {
  std::vector<long> consumed;  // every item every consumer got
  std::size_t max_size = 0;
  std::size_t left = 0;  // items still in the buffer at the end
};

// Producers put items 0 .. producers*per_producer-1 (each its own range); consumers share the
// same number of gets between them.
template <class Buffer>
BufferResult produce_and_consume(Buffer& buffer, std::size_t producers, std::size_t consumers,
                                 std::size_t per_producer) {
  const std::size_t total = producers * per_producer;
  std::vector<JoinHandle<void>> producer_handles;
  std::vector<JoinHandle<std::vector<long>>> consumer_handles;
  for (std::size_t c = 0; c < consumers; ++c) {
    const std::size_t gets = total / consumers + (c < total % consumers ? 1 : 0);
    consumer_handles.push_back(fork(ThreadAttributes{.name = "consumer " + std::to_string(c)}, [&buffer, gets] {
      std::vector<long> got;
      got.reserve(gets);
      for (std::size_t i = 0; i < gets; ++i) {
        got.push_back(buffer.get());
        maybe_yield(i, 5);
      }
      return got;
    }));
  }
  for (std::size_t p = 0; p < producers; ++p) {
    auto produce = [&buffer, p, per_producer] {
      for (std::size_t i = 0; i < per_producer; ++i) {
        buffer.put(static_cast<long>(p * per_producer + i));
        maybe_yield(i, 7);
      }
    };
    producer_handles.push_back(fork(ThreadAttributes{.name = "producer " + std::to_string(p)}, produce));
  }
  for (auto& h : producer_handles) h.join();
  BufferResult result;
  for (auto& h : consumer_handles) {
    auto got = h.join();
    result.consumed.insert(result.consumed.end(), got.begin(), got.end());
  }
  result.max_size = buffer.max_size();
  result.left = buffer.size();
  return result;
}

void check_every_item_consumed_once(BufferResult& result, std::size_t total, std::size_t capacity) {
  CHECK(result.left == 0);
  CHECK(result.max_size <= capacity);
  REQUIRE(result.consumed.size() == total);
  const long n = static_cast<long>(total);
  CHECK(std::accumulate(result.consumed.begin(), result.consumed.end(), 0L) == n * (n - 1) / 2);
  std::sort(result.consumed.begin(), result.consumed.end());
  std::vector<long> expected(total);
  std::iota(expected.begin(), expected.end(), 0L);
  CHECK(result.consumed == expected);  // every item exactly once
}

// ---------------------------------------------------------------------------------------
// Readers and writers: a monitor-based readers-writer protocol that prefers writers (readers
// hold back while a writer waits, so writers are not starved).

class ReadersWriters {
 public:
  void start_read() {
    Monitor::Entry entry{monitor_};
    ok_to_read_.wait(entry, [&] { return !writing_ && waiting_writers_ == 0; });
    ++readers_;
  }
  void end_read() {
    Monitor::Entry entry{monitor_};
    if (--readers_ == 0) ok_to_write_.signal();
  }
  void start_write() {
    Monitor::Entry entry{monitor_};
    ++waiting_writers_;
    ok_to_write_.wait(entry, [&] { return !writing_ && readers_ == 0; });
    --waiting_writers_;
    writing_ = true;
  }
  void end_write() {
    Monitor::Entry entry{monitor_};
    writing_ = false;
    if (waiting_writers_ > 0) ok_to_write_.signal();
    ok_to_read_.broadcast();  // readers recheck: they go on only if no writer waits
  }

 private:
  Monitor monitor_{"readers-writers"};
  Condition ok_to_read_{monitor_, "ok to read"};
  Condition ok_to_write_{monitor_, "ok to write"};
  int readers_ = 0;
  int waiting_writers_ = 0;
  bool writing_ = false;
};

// ---------------------------------------------------------------------------------------
// Dining philosophers.

// Tanenbaum's monitor solution: a philosopher eats only when neither neighbour eats; each
// waits on its own condition, signalled by its neighbours when they put their forks down.
class Waiter {
 public:
  explicit Waiter(std::size_t n) : state_(n, State::thinking) {
    conditions_.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      conditions_.push_back(std::make_unique<Condition>(monitor_, "philosopher " + std::to_string(i)));
    }
  }
  void pick_up(std::size_t i) {
    Monitor::Entry entry{monitor_};
    state_[i] = State::hungry;
    conditions_[i]->wait(entry, [&] {
      return state_[left(i)] != State::eating && state_[right(i)] != State::eating;
    });
    state_[i] = State::eating;
  }
  void put_down(std::size_t i) {
    Monitor::Entry entry{monitor_};
    state_[i] = State::thinking;
    conditions_[left(i)]->signal();
    conditions_[right(i)]->signal();
  }

 private:
  enum class State { thinking, hungry, eating };
  std::size_t left(std::size_t i) const { return (i + state_.size() - 1) % state_.size(); }
  std::size_t right(std::size_t i) const { return (i + 1) % state_.size(); }

  Monitor monitor_{"waiter"};
  std::vector<State> state_;
  std::vector<std::unique_ptr<Condition>> conditions_;
};

enum class DiningScheme { ordered_locks, monitor_waiter };

const char* name(DiningScheme s) {
  return s == DiningScheme::ordered_locks ? "forks as Locks, taken in resource order" : "monitor waiter";
}

// ---------------------------------------------------------------------------------------
// The PRESTO paper's stacks. A sequential Stack with virtual push and pop, and a
// SynchronizedStack that redefines them to hold a private Monitor, a pop on an empty stack
// waiting on a Condition until a push makes it non-empty.

class Stack {
 public:
  explicit Stack(std::size_t size) : items_(size) {}
  // noexcept(false) like PRESTO's own objects: a subclass's Monitor reports misuse (being
  // destroyed while threads wait on it) by throwing from its destructor.
  virtual ~Stack() noexcept(false) = default;
  virtual void push(int item) {
    if (top_ == items_.size()) throw std::overflow_error("push on a full stack");
    items_[top_++] = item;
  }
  virtual int pop() {
    if (top_ == 0) throw std::underflow_error("pop on an empty stack");
    return items_[--top_];
  }
  std::size_t depth() const { return top_; }

 private:
  std::vector<int> items_;
  std::size_t top_ = 0;
};

// The paper signals only when a push makes the stack non-empty (depth() == 1). Under Mesa
// semantics that alone loses wakeups once several poppers wait: push 1 signals popper A,
// push 2 (depth 2) signals nobody, A pops one item and popper B sleeps on beside a non-empty
// stack (the test "the paper's literal SynchronizedStack strands a popper" below shows it).
// Here a pop that leaves items behind passes the hint on to the next waiter, which restores
// the invariant "while poppers wait on a non-empty stack, one of them has been signalled".
class SynchronizedStack : public Stack {
 public:
  explicit SynchronizedStack(std::size_t size) : Stack(size) {}

  void push(int item) override {
    Monitor::Entry entry{monitor_};
    Stack::push(item);  // qualify to the super-class operation
    if (depth() == 1) condition_.signal();  // signal if any could be waiting
  }
  int pop() override {
    Monitor::Entry entry{monitor_};
    condition_.wait(entry, [&] { return depth() > 0; });  // a signal is only a hint
    int top = Stack::pop();
    if (depth() > 0) condition_.signal();  // others may wait: pass the hint on
    return top;
  }

 private:
  Monitor monitor_{"StackMonitor"};
  Condition condition_{monitor_, "StackCondition"};
};

// The paper's code word for word (signal on depth() == 1 only), for the lost-wakeup test.
class LiteralSynchronizedStack : public Stack {
 public:
  explicit LiteralSynchronizedStack(std::size_t size) : Stack(size) {}

  void push(int item) override {
    Monitor::Entry entry{monitor_};
    Stack::push(item);
    if (depth() == 1) condition_.signal();
  }
  int pop() override {
    Monitor::Entry entry{monitor_};
    while (depth() == 0) condition_.wait(entry);
    return Stack::pop();
  }

 private:
  Monitor monitor_{"StackMonitor"};
  Condition condition_{monitor_, "StackCondition"};
};

}  // namespace

TEST_CASE("bounded buffer from a monitor and two conditions", "[core][classic]") {
  auto cfg = GENERATE(presto::test::configs());
  auto capacity = GENERATE(std::size_t{1}, std::size_t{4});
  INFO(cfg);
  INFO("capacity " << capacity);
  const std::size_t producers = 4, consumers = 3;
  const std::size_t per_producer = presto::test::scaled(10'000);
  Record record;
  BufferResult result = presto::test::run(cfg, [&] {
    BoundedBuffer buffer{capacity, record};
    return produce_and_consume(buffer, producers, consumers, per_producer);
  });
  PRESTO_CHECK_RECORD(record);
  check_every_item_consumed_once(result, producers * per_producer, capacity);
}

TEST_CASE("bounded buffer from semaphores gives the same result", "[core][classic]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const std::size_t producers = 4, consumers = 3, capacity = 3;
  const std::size_t per_producer = presto::test::scaled(10'000);
  Record record;
  BufferResult result = presto::test::run(cfg, [&] {
    SemaphoreBuffer buffer{capacity, record};
    return produce_and_consume(buffer, producers, consumers, per_producer);
  });
  PRESTO_CHECK_RECORD(record);
  check_every_item_consumed_once(result, producers * per_producer, capacity);
}

TEST_CASE("readers and writers: a writer is alone, readers see consistent data", "[core][classic]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const std::size_t readers = 6, writers = 3;
  const std::size_t reads = presto::test::scaled(4000), writes = presto::test::scaled(2000);
  struct Shared {
    long a = 0;  // writers increment both fields, one at a time, yielding in between
    long b = 0;
  } shared;
  std::atomic<int> active_readers{0}, active_writers{0};
  std::atomic<long> reads_done{0};
  Record record;
  presto::test::run(cfg, [&] {
    ReadersWriters rw;
    std::vector<JoinHandle<void>> hs;
    for (std::size_t w = 0; w < writers; ++w) {
      hs.push_back(fork(ThreadAttributes{.name = "writer " + std::to_string(w)}, [&] {
        for (std::size_t i = 0; i < writes; ++i) {
          rw.start_write();
          int others = active_writers.fetch_add(1);
          if (others != 0 || active_readers.load() != 0) {
            record.fail("a writer entered with " + std::to_string(others) + " writer(s) and " +
                        std::to_string(active_readers.load()) + " reader(s) inside");
          }
          ++shared.a;
          this_thread::yield();  // a window for anyone who should not be here
          ++shared.b;
          if (active_readers.load() != 0) record.fail("a reader came in while a writer wrote");
          active_writers.fetch_sub(1);
          rw.end_write();
          maybe_yield(i);
        }
      }));
    }
    for (std::size_t r = 0; r < readers; ++r) {
      hs.push_back(fork(ThreadAttributes{.name = "reader " + std::to_string(r)}, [&] {
        for (std::size_t i = 0; i < reads; ++i) {
          rw.start_read();
          active_readers.fetch_add(1);
          if (active_writers.load() != 0) record.fail("a reader entered while a writer wrote");
          long a = shared.a;
          maybe_yield(i, 2);
          long b = shared.b;
          if (a != b) record.fail("a reader saw a=" + std::to_string(a) + " b=" + std::to_string(b));
          active_readers.fetch_sub(1);
          rw.end_read();
          reads_done.fetch_add(1);
          maybe_yield(i);
        }
      }));
    }
    for (auto& h : hs) h.join();
  });
  PRESTO_CHECK_RECORD(record);
  CHECK(shared.a == static_cast<long>(writers * writes));
  CHECK(shared.b == shared.a);
  CHECK(reads_done == static_cast<long>(readers * reads));
  CHECK(active_readers == 0);
  CHECK(active_writers == 0);
}

TEST_CASE("dining philosophers eat their fill without deadlock", "[core][classic]") {
  auto cfg = GENERATE(presto::test::configs());
  auto scheme = GENERATE(DiningScheme::ordered_locks, DiningScheme::monitor_waiter);
  auto n = GENERATE(std::size_t{5}, std::size_t{23});
  INFO(cfg);
  INFO(name(scheme) << ", " << n << " philosophers");
  const std::size_t meals = presto::test::scaled(1000);
  std::vector<std::atomic<bool>> eating(n);
  std::vector<std::size_t> ate(n, 0);
  Record record;
  presto::test::run(cfg, [&] {
    std::vector<std::unique_ptr<Lock>> forks;
    for (std::size_t i = 0; i < n; ++i) forks.push_back(std::make_unique<Lock>("fork " + std::to_string(i)));
    Waiter waiter{n};
    auto check_neighbours = [&](std::size_t i) {
      std::size_t left = (i + n - 1) % n, right = (i + 1) % n;
      if (eating[left].load() || eating[right].load()) {
        record.fail("philosopher " + std::to_string(i) + " eats beside an eating neighbour");
      }
    };
    std::vector<JoinHandle<void>> hs;
    for (std::size_t i = 0; i < n; ++i) {
      hs.push_back(fork(ThreadAttributes{.name = "philosopher " + std::to_string(i)}, [&, i] {
        // Philosopher i uses forks i and i+1; with ordered locks it takes the lower first,
        // so the last philosopher reaches across the table in the other order.
        Lock& first = *forks[std::min(i, (i + 1) % n)];
        Lock& second = *forks[std::max(i, (i + 1) % n)];
        for (std::size_t m = 0; m < meals; ++m) {
          if (scheme == DiningScheme::ordered_locks) {
            first.lock();
            maybe_yield(m, 2);  // hold one fork a while: the circular wait is tempted
            second.lock();
          } else {
            waiter.pick_up(i);
          }
          if (eating[i].exchange(true)) record.fail("philosopher " + std::to_string(i) + " eats twice at once");
          check_neighbours(i);
          ++ate[i];
          this_thread::yield();
          check_neighbours(i);
          eating[i].store(false);
          if (scheme == DiningScheme::ordered_locks) {
            second.unlock();
            first.unlock();
          } else {
            waiter.put_down(i);
          }
          maybe_yield(m);  // think
        }
      }));
    }
    for (auto& h : hs) h.join();
  });
  PRESTO_CHECK_RECORD(record);
  for (std::size_t i = 0; i < n; ++i) {
    INFO("philosopher " << i);
    CHECK(ate[i] == meals);
  }
}

TEST_CASE("barrier phases: every slot written before anyone passes, one winner a phase",
          "[core][classic]") {
  auto cfg = GENERATE(presto::test::configs());
  auto parties = GENERATE(std::size_t{1}, std::size_t{7});
  INFO(cfg);
  INFO(parties << " parties");
  const std::size_t phases = presto::test::scaled(2000);
  // Plain ints: the barrier itself must order each phase's writes before the reads after it.
  std::vector<std::vector<long>> slots(phases, std::vector<long>(parties, 0));
  std::vector<std::atomic<int>> winners(phases);
  std::uint64_t phases_completed = 0;
  Record record;
  presto::test::run(cfg, [&] {
    Barrier barrier{parties, "phases"};
    std::vector<JoinHandle<void>> hs;
    for (std::size_t k = 0; k < parties; ++k) {
      hs.push_back(fork(ThreadAttributes{.name = "party " + std::to_string(k)}, [&, k] {
        for (std::size_t p = 0; p < phases; ++p) {
          for (std::size_t y = 0; y < (k + p) % 3; ++y) this_thread::yield();  // arrive in varying orders
          slots[p][k] = static_cast<long>(p * 1000 + k + 1);
          if (barrier.arrive_and_wait()) winners[p].fetch_add(1);
          for (std::size_t j = 0; j < parties; ++j) {
            if (slots[p][j] != static_cast<long>(p * 1000 + j + 1)) {
              record.fail("party " + std::to_string(k) + " passed barrier " + std::to_string(p) +
                          " before party " + std::to_string(j) + " wrote its slot");
            }
          }
        }
      }));
    }
    for (auto& h : hs) h.join();
    phases_completed = barrier.phase();
  });
  PRESTO_CHECK_RECORD(record);
  CHECK(phases_completed == phases);
  std::size_t phases_with_one_winner = 0;
  for (auto& w : winners) phases_with_one_winner += w.load() == 1 ? 1 : 0;
  CHECK(phases_with_one_winner == phases);
}

TEST_CASE("the paper's SynchronizedStack: poppers block on empty, nothing is lost", "[core][classic]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const std::size_t pushers = 4, poppers = 5;
  const std::size_t per_pusher = presto::test::scaled(10'000);
  const std::size_t total = pushers * per_pusher;
  struct Totals {
    long pushed = 0;             // sum of the values pushed
    std::size_t pushes = 0;      // pushes done
    std::vector<int> popped;     // every value every popper got
    std::size_t left = 0;        // depth at the end
  };
  Totals totals = presto::test::run(cfg, [&] {
    SynchronizedStack stack{total};  // never full: pushers may all finish before any pop
    Stack& any_stack = stack;        // used through the super-class: push and pop are virtual
    std::vector<JoinHandle<std::vector<int>>> popper_handles;
    std::vector<JoinHandle<std::pair<long, std::size_t>>> pusher_handles;
    // Poppers first, so that they find the stack empty and block.
    for (std::size_t c = 0; c < poppers; ++c) {
      const std::size_t pops = total / poppers + (c < total % poppers ? 1 : 0);
      popper_handles.push_back(fork(ThreadAttributes{.name = "popper " + std::to_string(c)}, [&any_stack, pops] {
        std::vector<int> got;
        got.reserve(pops);
        for (std::size_t i = 0; i < pops; ++i) {
          got.push_back(any_stack.pop());
          maybe_yield(i, 4);
        }
        return got;
      }));
    }
    for (std::size_t p = 0; p < pushers; ++p) {
      auto push_all = [&any_stack, p, per_pusher] {
        long sum = 0;
        std::size_t count = 0;
        for (std::size_t i = 0; i < per_pusher; ++i) {
          int value = static_cast<int>(p * per_pusher + i + 1);
          any_stack.push(value);
          sum += value;
          ++count;
          maybe_yield(i, 3);
        }
        return std::pair{sum, count};
      };
      pusher_handles.push_back(fork(ThreadAttributes{.name = "pusher " + std::to_string(p)}, push_all));
    }
    Totals t;
    for (auto& h : pusher_handles) {
      auto [sum, count] = h.join();
      t.pushed += sum;
      t.pushes += count;
    }
    for (auto& h : popper_handles) {
      auto got = h.join();
      t.popped.insert(t.popped.end(), got.begin(), got.end());
    }
    t.left = stack.depth();
    return t;
  });
  const long n = static_cast<long>(total);
  CHECK(totals.pushes == total);
  CHECK(totals.pushed == n * (n + 1) / 2);
  CHECK(totals.popped.size() == totals.pushes);
  CHECK(std::accumulate(totals.popped.begin(), totals.popped.end(), 0L) == totals.pushed);
  std::sort(totals.popped.begin(), totals.popped.end());
  std::vector<int> expected(total);
  std::iota(expected.begin(), expected.end(), 1);
  CHECK(totals.popped == expected);  // every value popped exactly once
  CHECK(totals.left == 0);
}

TEST_CASE("the paper's literal SynchronizedStack strands a popper beside an item", "[core][classic]") {
  // On one processor nothing runs between the two pushes below, so the interleaving is fixed:
  // both poppers wait on the empty stack; push 1 (depth 1) signals the longest waiter; push 2
  // (depth 2) signals nobody; the signalled popper pops one item and returns; the other
  // sleeps on although an item is left. (The amended SynchronizedStack passes the hint on:
  // both poppers finish.) The stranded popper is then rescued the only way the paper's code
  // allows, by emptying the stack and pushing again, so the run ends cleanly.
  using presto::test::PoolKind;
  auto pool = GENERATE(PoolKind::fifo, PoolKind::lifo, PoolKind::priority, PoolKind::local_queue,
                       PoolKind::shuffle);
  Config cfg{.processors = 1, .pool = pool};
  INFO(cfg);
  struct Outcome {
    bool stranded = false;      // one popper still blocked, the other done, an item on the stack
    std::size_t depth = 0;      // the stack's depth at that point
    int popped_by_poppers = 0;  // what the two poppers returned in the end
  };
  auto scenario = [](auto& stack) {
    auto a = fork(ThreadAttributes{.name = "popper A"}, [&] { return stack.pop(); });
    auto b = fork(ThreadAttributes{.name = "popper B"}, [&] { return stack.pop(); });
    auto blocked = [](const auto& h) { return h.thread().state() == ThreadState::blocked; };
    while (!blocked(a) || !blocked(b)) this_thread::yield();
    stack.push(1);
    stack.push(2);
    for (int i = 0; i < 10; ++i) this_thread::yield();  // whoever can run, runs to the end
    Outcome out;
    auto done = [](const auto& h) { return h.thread().state() == ThreadState::terminated; };
    out.stranded = ((blocked(a) && done(b)) || (done(a) && blocked(b))) && stack.depth() == 1;
    out.depth = stack.depth();
    if (out.stranded) {
      stack.pop();     // depth 1: returns at once
      stack.push(3);   // depth 1 again: signals the stranded popper
    }
    out.popped_by_poppers = a.join() + b.join();
    return out;
  };

  Outcome literal = presto::test::run(cfg, [&] {
    LiteralSynchronizedStack stack{2};
    return scenario(stack);
  });
  CHECK(literal.stranded);
  CHECK(literal.depth == 1);
  CHECK(literal.popped_by_poppers == 2 + 3);

  Outcome amended = presto::test::run(cfg, [&] {
    SynchronizedStack stack{2};
    return scenario(stack);
  });
  CHECK_FALSE(amended.stranded);
  CHECK(amended.depth == 0);
  CHECK(amended.popped_by_poppers == 1 + 2);
}
