#pragma once
// SimulationPool: PSIM's ready pool. It keeps ready threads in an inner pool of any kind
// (FIFO, LIFO, priority, per-processor, shuffle, lowest timestamp first...) and behaves exactly
// like it, except that a get() that would return nothing first tries to break a partial
// deadlock: its SimulationScheduler's resolve_deadlock grants the blocked LPs messages that are
// provably safe, the engine restarts them (which puts them in the inner pool), and get returns
// what the inner pool then gives. The processors and the scheduler are thus "duped into
// breaking partial deadlock without their knowledge" (Bershad, Lazowska and Levy, 1988, on PSIM).
//
// When the deadlock breaker finds a lock it needs held, or an LP to restart still switching out
// (get runs in the dispatch path and must not wait), has_work_for() answers true until the next
// get() retries, so an idle processor comes back instead of parking. size() stays exact (the
// inner pool's): the runtime reads it to know whether threads are ready, and a replacement of
// this pool reads it to check that every thread was moved. A halt, which needs every processor
// idle and the pool empty, breaks the deadlock itself (SimulationScheduler::halt), waiting for
// the locks.
//
// Open for subclassing under ThreadPool's contract (presto/thread_pool.hpp): called by every
// processor concurrently, in the dispatch path; never block, yield or throw. An override of
// get() must end with SimulationPool::get(p) when it has nothing to give (or no partial
// deadlock is ever broken: the simulation then advances only at total deadlocks), and an
// override of put() must keep size() exact. The pool belongs to the SimulationScheduler whose
// constructor it is given to; elsewhere (a plain scheduler's pool, or installed later with
// replace_pool) it is just its inner pool and breaks no deadlock.

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include <presto/thread_pool.hpp>

namespace presto::psim {

class SimulationScheduler;

class SimulationPool : public ThreadPool {
 public:
  // `inner`: nullptr means a LocalQueuePool.
  explicit SimulationPool(std::unique_ptr<ThreadPool> inner = nullptr);

  void put(Thread& t) override { inner_->put(t); }
  Thread* get(Processor& p) override;
  std::size_t size() const noexcept override { return inner_->size(); }
  // The inner pool's answer for `p` (so its per-processor and pinned queues are honoured), or
  // true while a partial deadlock's break waits to be retried.
  bool has_work_for(const Processor& p) const noexcept override {
    return retry_.load(std::memory_order_relaxed) || inner_->has_work_for(p);
  }
  std::string_view name() const noexcept override { return name_; }
  void attach(const Runtime& rt) override { inner_->attach(rt); }

  ThreadPool& inner() const noexcept { return *inner_; }
  SimulationScheduler* scheduler() const noexcept { return scheduler_; }

 private:
  friend class SimulationScheduler;
  SimulationScheduler* scheduler_ = nullptr;
  std::unique_ptr<ThreadPool> inner_;
  std::string name_;
  std::atomic<bool> retry_{false};
};

}  // namespace presto::psim
