#pragma once
// OwnedQueue: a processor's ready queue (LocalQueuePool), which its owner, the processor
// itself, pushes and pops without a locked instruction for as long as nobody else touches it.
//
// Everyone else (a thief, a waker placing a thread from another processor or an OS thread, a
// withdrawal, the end of the run) uses the operations below, under the queue's spinlock, as on
// a LockedQueue. The owner uses the owner_ operations (defined in the library's
// src/owned_queue_owner.hpp, for the dispatch path), which are biased locking:
//   - the owner announces itself with a plain store (owner_busy_) and, after a light fence (a
//     compiler barrier), reads the bias; while the queue is biased towards it, it works on the
//     queue without the lock;
//   - the first other party to take the lock of a biased queue revokes the bias: it clears it,
//     runs the heavy fence (membarrier: every running thread of the process executes a full
//     barrier) and waits for the owner to leave the operation it may be in. The light/heavy
//     pair is the asymmetric Dekker of asymmetric_fence.hpp: either the owner reads the bias
//     cleared and takes the lock, or the revoker sees the owner busy and waits;
//   - the owner biases the queue (again), under the lock, after bias_after() operations of its
//     own in a row with no other party's in between (0: never). So a queue that others use
//     keeps its lock (stealing does not pay a membarrier a steal), and a queue its owner alone
//     uses pays one revocation, about 7 us on a 2-core VM, per bias_after() owner operations at
//     most: with the default kBiasAfter, under 0.5 ns an operation.
// Owner operations are made only on the owner processor's OS thread, inside its gate, one at a
// time: they cannot be preempted there, so they do not count in the preemption count.

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <presto/detail/raw_spinlock.hpp>
#include <presto/thread_queue.hpp>

namespace presto::detail {

class OwnedQueue {
 public:
  static constexpr unsigned kBiasAfter = 16384;

  void set_bias_after(unsigned ops) noexcept { bias_after_ = ops; }  // before the queue is used

  // Anyone but the owner, under the lock (revoking the bias first).
  template <class T = Thread>
  void push_back(T& t) {
    Others hold(*this);
    queue_.push_back(t);
    publish_size();
  }
  template <class T = Thread>
  void push_front(T& t) {
    Others hold(*this);
    queue_.push_front(t);
    publish_size();
  }
  Thread* pop_front() noexcept {
    if (size() == 0) return nullptr;  // look before locking
    Others hold(*this);
    Thread* t = queue_.pop_front();
    publish_size();
    return t;
  }
  Thread* pop_back() noexcept {
    if (size() == 0) return nullptr;
    Others hold(*this);
    Thread* t = queue_.pop_back();
    publish_size();
    return t;
  }
  // A thief's take: up to half of the threads (at most `limit`), oldest first, from the front
  // (or, from_back, the back, oldest first), moved into `out`; how many. Nothing (0) while
  // someone else holds the lock: thieves that queued for it would hold up the owner's next
  // push by all their holds. (Figure 3's pattern on 16 cores, one forker and 15 idle
  // processors that each wait for the lock to steal the one thread just pushed: 40,000
  // threads took 9 times as long as on 1 processor.) The thief tries the next queue, and its
  // idle loop, which sees this one's size, comes back.
  template <class T = Thread>
  std::size_t take_half(ThreadQueue& out, std::size_t limit, bool from_back) noexcept {
    if (size() == 0 || !lock_.try_lock()) return 0;
    Others hold(*this, kLocked);
    std::size_t n = (queue_.size() + 1) / 2;
    if (n > limit) n = limit;
    for (std::size_t k = 0; k < n; ++k) {
      T* t = from_back ? queue_.pop_back() : queue_.pop_front();
      out.push_back(*t);
    }
    publish_size();
    return n;
  }
  // Takes `t` out if it is queued here (ThreadPool::withdraw); false if it is not.
  template <class T = Thread>
  bool withdraw(T& t) noexcept {
    if (size() == 0) return false;
    Others hold(*this);
    const bool removed = queue_.remove(t);
    publish_size();
    return removed;
  }

  // The owner (src/owned_queue_owner.hpp). A hold: owner_acquire() ... owner_release(), which
  // may span a context switch (the yield keeps it until the yielding thread's context is
  // saved, so that no thief takes it half-saved); inside a hold, front() and exchange_front().
  inline void owner_acquire() noexcept;
  inline void owner_release() noexcept;
  Thread* front() const noexcept { return queue_.front(); }
  // Takes the first thread and queues t in its place (at the front or at the back); the size
  // does not change.
  template <class T = Thread>
  Thread* exchange_front(T& t, bool to_front) noexcept {
    Thread* first = queue_.pop_front();
    put(t, to_front);
    return first;
  }
  // One operation in a hold of its own.
  template <class T = Thread>
  inline void owner_push(T& t, bool to_front);
  inline Thread* owner_pop_front() noexcept;
  template <class T = Thread>
  inline bool owner_withdraw(T& t) noexcept;
  // Moves every thread of `from` here, in its order, at the back (or each to the front).
  inline void owner_push_all(ThreadQueue& from, bool to_front) noexcept;

  // Exact while no push or pop is in flight.
  std::size_t size() const noexcept { return size_.load(std::memory_order_relaxed); }
  // How often a bias was revoked.
  std::uint64_t revocations() const noexcept { return revocations_.load(std::memory_order_relaxed); }

 private:
  // Someone else's hold: the lock, with the bias revoked.
  static constexpr struct Locked {
  } kLocked{};
  class Others {
   public:
    explicit Others(OwnedQueue& q) noexcept : q_(q) {
      q_.lock_.lock();
      enter();
    }
    Others(OwnedQueue& q, Locked) noexcept : q_(q) { enter(); }  // lock_ already taken
    ~Others() { q_.lock_.unlock(); }
    Others(const Others&) = delete;
    Others& operator=(const Others&) = delete;

   private:
    void enter() noexcept {
      ++q_.others_;
      if (q_.biased_.load(std::memory_order_relaxed)) [[unlikely]] q_.revoke();
    }

    OwnedQueue& q_;
  };

  [[gnu::cold, gnu::noinline]] void revoke() noexcept;  // under lock_
  template <class T>
  [[gnu::always_inline]] void put(T& t, bool to_front) {  // in a hold
    if (to_front) {
      queue_.push_front(t);
    } else {
      queue_.push_back(t);
    }
  }
  void publish_size() noexcept { size_.store(queue_.size(), std::memory_order_relaxed); }  // in a hold

  RawSpinlock lock_;
  std::atomic<bool> biased_{false};      // written under lock_; read by the owner without it
  std::atomic<bool> owner_busy_{false};  // the owner is inside an unlocked hold (written by it only)
  unsigned bias_after_ = kBiasAfter;
  unsigned quiet_ = 0;                   // the owner's locked holds in a row (under lock_)
  std::uint64_t others_ = 0;             // other parties' holds so far (under lock_)
  std::uint64_t others_seen_ = 0;        // others_ at the owner's last locked hold (under lock_)
  std::atomic<std::uint64_t> revocations_{0};  // written under lock_
  ThreadQueue queue_;
  std::atomic<std::size_t> size_{0};
};

}  // namespace presto::detail
