#pragma once
// PinnedQueues: the part of a built-in pool that honours Thread::affinity(). A thread pinned
// to processor k waits in queue k (first come, first served) and only processor k takes it;
// each built-in pool puts a thread here first and serves a processor's pinned threads before
// its own discipline's. Threads without an affinity, or pinned to a processor the runtime does
// not have, are left to the pool.
//
// Each queue keeps its own count, on its own cache line: a processor's dispatch path asks only
// whether a thread waits for it (its queue's size), so processors running pinned threads share
// no line. (One count of all queues, which every put and get changed, made a yield between
// pinned threads cost 3.5 times as much on 2 processors as on 1, and 35 times on 16;
// docs/benchmarks.md, 2026-11-27.)

#include <cstddef>
#include <memory>
#include <optional>

#include <presto/detail/locked_queue.hpp>
#include <presto/processor.hpp>
#include <presto/thread.hpp>

namespace presto::detail {

class PinnedQueues {
 public:
  // One queue per processor. UsageError if the number changes while threads are queued.
  void attach(std::size_t processors);
  // Takes `t` if it is pinned to one of the processors; false: the pool must keep it. Inline,
  // as get(): every put and get of a built-in pool asks, and almost every answer is no.
  bool put(Thread& t) {
    const std::optional<std::size_t> k = t.affinity();
    if (!k || *k >= count_) [[likely]] return false;
    queues_[*k].push_back(t);
    return true;
  }
  // The oldest thread pinned to `p`, or nullptr.
  Thread* get(const Processor& p) noexcept {
    if (p.index() >= count_) [[unlikely]] return nullptr;
    return queues_[p.index()].pop_front();  // looks at the queue's count before locking
  }
  // Whether a thread pinned to `p` is queued.
  bool has_work_for(const Processor& p) const noexcept;
  // The queue of the threads pinned to processor `index` (below the number attached), whose
  // size() the dispatch path reads to know whether one waits for it.
  const LockedQueue& queue(std::size_t index) const noexcept { return queues_[index]; }
  // All queued threads; may lag concurrent put/get.
  std::size_t size() const noexcept;

 private:
  struct alignas(64) Queue : LockedQueue {};

  std::unique_ptr<Queue[]> queues_;
  std::size_t count_ = 0;
};

}  // namespace presto::detail
