#pragma once
// LocalQueuePool: one FIFO queue per processor with stealing, the only thread-management
// structure that scales (Anderson, Lazowska and Levy, 1989). A processor serves its own queue
// first and, when it is empty, steals the oldest thread of the next non-empty queue, scanning
// from its neighbour. A thread joined before it has run is taken back out of whichever queue
// holds it (ThreadPool::withdraw) and run by its joiner. (Thieves taking the newest thread
// instead, so that an in-order joiner and a thief would meet in the middle, was measured and
// is worse: the thief then works at the end the forking processor pushes to, and Figure 3 on
// two processors took 28 ms instead of 15. Measured again with today's half-queue steals on 16
// cores, 2026-11-27: Figure 3 gained on 2 processors, 10.9-12.7 ms instead of 12.7-14.9, and
// lost on 4 to 16, e.g. 46-51 ms instead of 34-44 on 8; skynet on 16 processors took 0.30-0.37 s
// instead of 0.18-0.20: a thief should take a tree's oldest threads, its largest subtrees.)
// An idle processor leaves a queue's *only* thread to that queue's processor for a few
// microseconds (has_work_for says no work until the same thread has waited that long, or
// until the asker is about to park): it was most often just made ready by the thread running
// there, which is about to block or join it (a ping-pong, a fork and its join), and taken at
// once it would make the two threads change processors at every turn.
// Each queue has its own lock, on its own cache line, so processors contend only when they
// steal. A processor's own operations on its queue (its yields, the threads it forks, wakes
// and joins; under the default scheduler directly, under a Scheduler subclass through put()
// and get() called from its dispatch path) take no locked instruction while no
// other processor or OS thread uses that queue: the queue is biased towards its processor after
// `bias_after` such operations in a row, and the first other user revokes the bias at the cost
// of a membarrier (detail/owned_queue.hpp; revocations() counts them). A thread with an
// affinity waits for its processor, which serves such threads first; they are never stolen and
// ignore the placement.
//
// Where a thread that becomes ready goes is the pool's Placement (Joyce's question, Brinch
// Hansen and Rangachari 1988; measured by benchmarks/micro/wakeup_placement.cpp, see
// docs/benchmarks.md):
//   waker    - the queue of the processor that makes it ready (the default): a started,
//              woken or yielding thread stays near the thread that made it ready
//   last     - the queue of the processor that ran it last (its cache may still be warm);
//              a thread that never ran goes to the waker's queue
//   shortest - the queue with the fewest threads, counting the one its processor runs
//              (Joyce's kernel): spreads load at the cost of a scan of every queue's length
//   random   - a queue drawn at random (seeded by the runtime): the paper's placement of new
//              threads, so that one creator does not become a hot spot
// A yielding thread's waker is its own processor, so under waker and last it stays where it
// is. put() from an OS thread that is not a processor spreads threads round-robin under every
// placement except shortest.
//
// In what order a processor serves its own queue is the pool's Order:
//   fifo - the order the threads became ready (the default)
//   lifo - the most recently readied thread first, as LifoPool but per processor; thieves take
//          the oldest thread. A tree of forks and joins then runs depth first, as under Cilk's
//          work-first policy: a thread woken by the child it joined resumes at once, and only
//          one path of the tree is alive at a time instead of whole levels (skynet, 1,111,111
//          threads: see docs/benchmarks.md). Unfair by design: a yielding thread runs again at
//          once unless a newer one is ready, and a thread made ready keeps older ones waiting.
//
// The default pool of a Runtime.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include <presto/detail/owned_queue.hpp>
#include <presto/detail/pinned_queues.hpp>
#include <presto/thread_pool.hpp>

namespace presto {

class LocalQueuePool final : public ThreadPool {
 public:
  enum class Placement : unsigned char { waker, last, shortest, random };

  enum class Order : unsigned char { fifo, lifo };

  // bias_after: a processor's operations on its own queue, in a row and with no other user's,
  // after which it works on it without the lock until another user comes (0: always lock).
  explicit LocalQueuePool(Placement placement = Placement::waker, Order order = Order::fifo,
                          unsigned bias_after = detail::OwnedQueue::kBiasAfter) noexcept
      : placement_(placement), order_(order), bias_after_(bias_after) {
    if (placement == Placement::waker) local_ = this;
  }
  ~LocalQueuePool() override;

  void put(Thread& t) override;
  Thread* get(Processor& p) override;
  std::size_t size() const noexcept override;
  bool has_work_for(const Processor& p) const noexcept override;
  // "local-queue", or "local-queue/last" etc. for the other placements, with "/lifo" for that
  // order.
  std::string_view name() const noexcept override;
  void attach(const Runtime& rt) override;
  // Looks for `t` in the calling processor's queue first, then in the others.
  bool withdraw(Thread& t) override;

  Placement placement() const noexcept { return placement_; }
  Order order() const noexcept { return order_; }
  // The threads waiting in processor `index`'s queue (0 for an index out of range).
  std::size_t queued(std::size_t index) const noexcept;
  unsigned bias_after() const noexcept { return bias_after_; }
  // Times another processor or OS thread came to a queue biased towards its processor and
  // revoked the bias (each a membarrier, a few microseconds), over every queue so far.
  std::uint64_t revocations() const noexcept;
  // Times a processor served another's steal from its biased queue itself (no revocation),
  // over every queue so far.
  std::uint64_t served_steals() const noexcept;

 private:
  friend class detail::Dispatch;

  static constexpr std::size_t kStealLimit = 128;  // threads a steal takes at most

  // Processor i's queue: i pushes and pops it without a locked instruction while the others
  // leave it alone (detail::OwnedQueue); they take its lock, as do the virtual calls above
  // made anywhere but on i inside its gate.
  struct alignas(64) Queue : detail::OwnedQueue {
    // Its processor is running a thread it got from this pool (for the shortest placement).
    std::atomic<bool> busy{false};
    LocalQueuePool* pool = nullptr;  // the pool it belongs to (Processor::own_queue_ leads here)
    const detail::LockedQueue* pinned = nullptr;  // the threads pinned to its processor
    // What its processor's steal copies out of another queue (steal(), by that processor
    // only, inside its gate): here rather than on the stack of whatever thread is leaving.
    Thread* stolen[kStealLimit] = {};
  };
  // The queue of processor p (the caller's, nullptr off a processor), or count_ if it has none.
  std::size_t own_queue(const Processor* p) const noexcept;
  std::size_t waker(std::size_t own) noexcept;          // own, or round-robin off the runtime
  std::size_t place(Thread& t, std::size_t own) noexcept;  // every placement but waker
  std::size_t shortest(std::size_t own) const noexcept;
  std::size_t unpinned() const noexcept;
  // How long an idle processor leaves another processor's only queued thread to that processor
  // (see the top of this file; Go's runqsteal leaves runnext for 3 us too; docs/design/runtime.md
  // §6, "Lone threads").
  static constexpr std::chrono::nanoseconds kLoneGrace{3000};
  // Whether queue i, which held one thread (`seen`, its snapshot), still holds that same
  // thread after kLoneGrace, waiting for it; false as soon as the queue changed otherwise.
  bool lone_stays(std::size_t i, std::uint64_t seen) const noexcept;
  // The oldest thread of another queue, and up to half of that queue into `home` if the caller
  // owns it (at most kStealLimit threads); nullptr if every other queue is empty.
  Thread* steal(std::size_t home, bool owner);
  // withdraw() from every queue but `own`'s (the dispatch path withdraws from its own as owner).
  bool withdraw_elsewhere(Thread& t, std::size_t own);

  // Puts t into queue q.
  void enqueue(Queue& q, Thread& t) {
    if (order_ == Order::lifo) {
      q.push_front(t);
    } else {
      q.push_back(t);
    }
  }

  const Placement placement_;
  const Order order_;
  const unsigned bias_after_;
  const Runtime* runtime_ = nullptr;
  std::unique_ptr<Queue[]> queues_;
  std::size_t count_ = 0;
  detail::PinnedQueues pinned_;
  std::atomic<std::size_t> round_robin_{0};
  std::atomic<std::uint64_t> random_{0};
};

// "waker", "last", "shortest" or "random".
std::string_view to_string(LocalQueuePool::Placement placement) noexcept;
// "fifo" or "lifo".
std::string_view to_string(LocalQueuePool::Order order) noexcept;

}  // namespace presto
