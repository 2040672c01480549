#pragma once
// Scheduler: maps ready threads onto idle processors and decides when the system halts.
// It owns the ready pool (a ThreadPool). Processors ask it for work through next(); threads
// that become ready reach it through ready(); when nothing is ready or running and no wake-up
// can come, the runtime calls halt().
//
// Subclass it to change those decisions (PSIM overrides halt() to break a simulation
// deadlock) and install it in a running system with Runtime::replace_scheduler. ready() and
// next() follow ThreadPool's rules: called concurrently from every processor, inside the
// dispatch path; never block or yield in them.

#include <atomic>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include <presto/errors.hpp>
#include <presto/thread_pool.hpp>

namespace presto {

class Thread;
class Processor;
class Runtime;

namespace detail {
class Dispatch;
class RuntimeImpl;
}  // namespace detail

class Scheduler {
 public:
  // A scheduler with `pool` as its ready pool (nullptr: a LocalQueuePool).
  explicit Scheduler(std::unique_ptr<ThreadPool> pool = nullptr);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;
  virtual ~Scheduler();

  // `t` became ready (started, woken or yielded). Default: pool().put(t).
  virtual void ready(Thread& t);
  // The thread processor `p` runs next, or nullptr. Default: pool().get(p).
  virtual Thread* next(Processor& p);
  // A thread joins `t`, which is ready and has never run: take it back so that the joiner can
  // run it (see ThreadPool::withdraw). Default: pool().withdraw(t). A scheduler that keeps its
  // own account of the threads it was given in ready() overrides this too (false declines).
  virtual bool withdraw(Thread& t);
  // Called with every processor idle, no thread ready, no timer pending and no KeepAlive held.
  // The default throws Deadlock listing blocked_threads() if there are any (run() then ends
  // with it) and otherwise returns, ending run(). An override may instead make threads ready
  // (through Thread::wakeup); run() goes on if any thread is ready when halt() returns.
  virtual void halt();
  virtual std::string_view name() const noexcept { return "scheduler"; }

  ThreadPool& pool() const noexcept { return *pool_.load(std::memory_order_acquire); }
  // Installs `pool` while the system runs: every ready thread moves from the old pool into the
  // new one (in the order the old pool gives them up) and the old pool is returned once no
  // processor can still be inside it. Callable from any presto thread or OS thread.
  std::unique_ptr<ThreadPool> replace_pool(std::unique_ptr<ThreadPool> pool);

  // The runtime this scheduler is installed in (nullptr before installation).
  Runtime* runtime() const noexcept { return runtime_; }

 protected:
  // Every thread of the runtime that is blocked, with what it waits on. For halt().
  std::vector<BlockedThread> blocked_threads() const;

 private:
  friend class Runtime;
  friend class detail::Dispatch;
  friend class detail::RuntimeImpl;

  std::atomic<ThreadPool*> pool_{nullptr};
  // This is a presto::Scheduler itself, not a subclass (set when installed): ready and next are
  // the defaults, so the dispatch path goes straight to the pool.
  bool plain_ = false;
  std::unique_ptr<ThreadPool> owned_pool_;
  Runtime* runtime_ = nullptr;
};

}  // namespace presto
