#pragma once
// ThreadPool: the set of ready threads that the Scheduler hands to idle processors, and the
// place where a scheduling discipline lives (FIFO, LIFO, priorities, per-processor queues,
// deadlines...). PRESTO's open-environment recipe for a new discipline: derive a pool, define
// put and get, create one, and give it to the running system with
// rt.scheduler().replace_pool(std::move(pool)), which moves every ready thread into it.
//
// Contract for implementers (who calls, from where, with what held):
// - put and get are called by the runtime from any processor, and put also from plain OS
//   threads, concurrently with each other: a pool synchronizes itself.
// - They run inside the runtime's dispatch path, possibly holding a SynchroObject spinlock:
//   never block, yield, sleep, or log above debug level, and avoid allocating on the common
//   path (ThreadQueue links threads without allocating).
// - A pool may read a thread's attributes (priority(), deadline(), affinity(), processor(),
//   id()) but must not change its state, and must keep every thread it was given exactly once
//   until get returns it: the conformance harness (presto/testing/pool_conformance.hpp)
//   checks this.
// - get(p) may return nullptr while has_work_for(p) is true only transiently.
// - A pool is installed in one runtime at a time and keeps no static state.

#include <presto/version.hpp>  // first: the C++20 check

#include <cstddef>
#include <string_view>

namespace presto {

class Thread;
class Processor;
class Runtime;
class LocalQueuePool;

namespace detail {
class Dispatch;
}  // namespace detail

class ThreadPool {
 public:
  ThreadPool() = default;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  virtual ~ThreadPool() = default;

  // Adds a thread that just became ready.
  virtual void put(Thread& t) = 0;
  // Removes and returns the thread processor `p` should run next, or nullptr.
  virtual Thread* get(Processor& p) = 0;
  // The number of threads in the pool. Read on every idle check, so it must be cheap; it may
  // lag concurrent put/get but is exact when none is in flight.
  virtual std::size_t size() const noexcept = 0;
  // Whether get(p) may return a thread; an idle processor parks while it is false. The
  // default, size() != 0, suits pools that give any thread to any processor. A pool that keeps
  // threads for one processor (Thread::affinity(), which the built-in pools honour) answers
  // for `p` alone; the runtime wakes processor k when a thread pinned to k becomes ready.
  virtual bool has_work_for(const Processor& p) const noexcept {
    (void)p;
    return size() != 0;
  }
  virtual std::string_view name() const noexcept = 0;
  // Takes `t`, a thread in this pool that has never run, back out of the pool if the pool can
  // find it; false leaves it where it is. The runtime calls it when a thread joins `t` before
  // it has run, on the joiner's processor inside the dispatch path (the rules of put and get
  // apply), and then runs `t` in its joiner, on the joiner's stack (Thread::join). The default
  // declines, so a pool that does not define it simply never has its threads run so.
  virtual bool withdraw(Thread& t) {
    (void)t;
    return false;
  }
  // Called before the pool receives its first thread and whenever the runtime's number of
  // processors changes, while no other method of this pool is running. Per-processor pools
  // size themselves here; seeded pools may take rt.seed().
  virtual void attach(const Runtime& rt) { (void)rt; }

 private:
  friend class LocalQueuePool;
  friend class detail::Dispatch;
  // Set by a LocalQueuePool with the waker placement, the default pool: the dispatch path then
  // serves a processor's own queue with inline code instead of the virtual put and get (which
  // it still calls for everything else: pinned threads, stealing, an empty queue).
  LocalQueuePool* local_ = nullptr;
};

}  // namespace presto
