// The pool conformance harness, run on every pool PRESTO ships and on a pool written the way
// a user would write one (outside the library, from public headers only).

#include <deque>
#include <mutex>

#include <presto/testing/pool_conformance.hpp>

#include "test_support.hpp"

namespace {

// A user's pool: earliest-created (lowest id) first, in a std::deque under a std::mutex.
class OldestFirstPool final : public presto::ThreadPool {
 public:
  void put(presto::Thread& t) override {
    std::lock_guard lock(mutex_);
    auto it = std::upper_bound(ready_.begin(), ready_.end(), t.id(), [](std::uint64_t id, presto::Thread* x) { return id < x->id(); });
    ready_.insert(it, &t);
    size_.store(ready_.size(), std::memory_order_relaxed);
  }
  presto::Thread* get(presto::Processor&) override {
    std::lock_guard lock(mutex_);
    if (ready_.empty()) return nullptr;
    presto::Thread* t = ready_.front();
    ready_.pop_front();
    size_.store(ready_.size(), std::memory_order_relaxed);
    return t;
  }
  std::size_t size() const noexcept override { return size_.load(std::memory_order_relaxed); }
  std::string_view name() const noexcept override { return "oldest-first"; }

 private:
  std::mutex mutex_;
  std::deque<presto::Thread*> ready_;
  std::atomic<std::size_t> size_{0};
};

// A broken pool that drops every tenth thread it is given: the harness must notice.
class LossyPool final : public presto::ThreadPool {
 public:
  void put(presto::Thread& t) override {
    if (++puts_ % 10 == 0) return;
    inner_.put(t);
  }
  presto::Thread* get(presto::Processor& p) override { return inner_.get(p); }
  std::size_t size() const noexcept override { return inner_.size(); }
  std::string_view name() const noexcept override { return "lossy"; }

 private:
  presto::FifoPool inner_;
  std::atomic<int> puts_{0};
};

}  // namespace

TEST_CASE("every built-in pool conforms", "[conformance]") {
  auto kind = GENERATE(presto::test::PoolKind::fifo, presto::test::PoolKind::lifo, presto::test::PoolKind::priority,
                       presto::test::PoolKind::local_queue, presto::test::PoolKind::local_lifo,
                       presto::test::PoolKind::shuffle);
  INFO(presto::test::name(kind) << " pool, seed " << presto::test::seed());
  CHECK_NOTHROW(presto::testing::check_pool_conformance([kind] { return presto::test::make_pool(kind); },
                                                        presto::test::conformance_options()));
}

TEST_CASE("a user's pool conforms", "[conformance]") {
  CHECK_NOTHROW(presto::testing::check_pool_conformance([] { return std::make_unique<OldestFirstPool>(); },
                                                        presto::test::conformance_options()));
}

TEST_CASE("the harness catches a pool that loses threads", "[conformance]") {
  // Lost threads never run: their joiners stay blocked, so the run ends in a Deadlock, which
  // the harness reports as its failure.
  presto::testing::PoolConformanceOptions o = presto::test::conformance_options();
  o.processors = {1};
  CHECK_THROWS_WITH(presto::testing::check_exactly_once([] { return std::make_unique<LossyPool>(); }, 1, o, o.seed),
                    Catch::Matchers::Contains("check 'exactly_once' failed") &&
                        Catch::Matchers::Contains("threads were lost"));
}
