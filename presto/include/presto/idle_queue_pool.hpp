#pragma once
// IdleQueuePool: "instead of processors searching for work, work searches for processors"
// (Anderson, Lazowska and Levy's idle-queue alternative). A processor that finds nothing to
// run enqueues itself on a central queue of idle processors; a thread made ready while a
// processor waits there is handed straight to it, into that processor's own slot (a cache
// line of its own), and not into the shared ready queue. With no processor waiting, threads
// go to one central FIFO queue under its own lock.
//
// A processor serves its slot first, then the central queue, then other processors' slots
// (a handed thread is never stranded on a processor that went to sleep or found other work).
// The hand-off shortens the path when processors are idle; when all are busy every put pays
// for the check of the idle queue, and throughput stays that of one central queue. A
// processor whose yield found nothing else to run is on the idle queue too, so it may be
// handed a thread while it runs; it serves it at its next dispatch, or an idle one takes it.
// Made for the thread-management experiments (benchmarks/micro/thread_management.cpp); like
// the paper's package it knows no processor affinity: Thread::affinity() is ignored.

#include <atomic>
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include <presto/detail/locked_queue.hpp>
#include <presto/detail/raw_spinlock.hpp>
#include <presto/thread_pool.hpp>

namespace presto {

class IdleQueuePool final : public ThreadPool {
 public:
  IdleQueuePool() = default;
  ~IdleQueuePool() override;

  void put(Thread& t) override;
  Thread* get(Processor& p) override;
  std::size_t size() const noexcept override;
  std::string_view name() const noexcept override { return "idle-queue"; }
  void attach(const Runtime& rt) override;

 private:
  struct alignas(64) Slot {
    std::atomic<Thread*> handed{nullptr};  // a thread handed to this processor
    std::atomic<bool> waiting{false};      // on the idle queue; written under idle_lock_
  };
  Thread* take_handed(std::size_t home) noexcept;

  detail::LockedQueue ready_;
  std::unique_ptr<Slot[]> slots_;
  std::size_t count_ = 0;
  detail::RawSpinlock idle_lock_;
  std::vector<std::size_t> idle_;          // processors waiting, oldest first; under idle_lock_
  std::atomic<std::size_t> waiting_{0};    // idle_.size(), readable without the lock
  std::atomic<std::size_t> handed_{0};     // threads in slots
};

}  // namespace presto
