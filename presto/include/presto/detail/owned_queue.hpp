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
//     own in a row with no other party's in between (0: never). A thief's take does not count
//     as another party's: a queue that wakers or withdrawals from elsewhere use keeps its lock,
//     and a queue its owner alone uses, or its owner and thieves, pays one revocation, about
//     7 us on a 2-core VM, per bias_after() owner operations at most: with the default
//     kBiasAfter, under 0.5 ns an operation;
//   - a thief does not revoke a biased queue's bias: it posts a request (take_half), which the
//     owner serves at the start of its next hold, copying the thief's share of the ring out
//     itself. The thief waits for that up to kServeWaitNs (2 us); an owner that makes no hold
//     that long (it runs one long body) gets its bias revoked, and the thief takes the lock.
//     So a forker that thieves keep taking from (Figure 3's main: 40,000 forks and 20,000
//     joins a product while another processor steals) forks and joins without a locked
//     instruction; each steal costs it one copy of at most LocalQueuePool's 128 pointers,
//     which the thief would otherwise have made from the owner's ring, and the cache lines
//     with them.
// Owner operations are made only on the owner processor's OS thread, inside its gate, one at a
// time: they cannot be preempted there, so they do not count in the preemption count.
//
// The threads are kept in a ring of pointers, in queue order, not linked through their
// control blocks: a thief copies up to half of the pointers out under the lock without
// touching one thread (a linked list made it pull up to kStealLimit cold control blocks, one
// after another, while the owner waited for the lock), and the thief writes the threads'
// fields only after it has let the lock go. A thread's place in the ring is a 32-bit position
// (positions grow without end and wrap; the slot is position & mask_) kept in the thread
// (Thread::ready_position_). Taking a thread out from the middle (a withdrawal: a join that
// runs its child inline) leaves a hole, nullptr, which the ends skip; a full ring whose holes
// make up half of it is compacted in place instead of grown. A withdrawal believes a thread's
// position only if the slot holds that very thread: a stolen thread keeps its old position
// (and its hook's list) until its thief gets round to it.
//
// The ring grows by allocating (twice the size) when a push finds it full, and never shrinks.
// The operations that cannot fail never grow it: a pop, a withdrawal, a steal, and the
// exchange of a yield (a pop and a push). A push that cannot allocate throws std::bad_alloc
// with the queue unchanged; owner_push_all, which must not lose what a thief took, ends the
// process instead (noexcept; the thief's queue was empty when it went stealing).

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <presto/detail/raw_spinlock.hpp>

namespace presto {
class Thread;
}

namespace presto::detail {

struct ForkRecord;

class OwnedQueue {
 public:
  static constexpr unsigned kBiasAfter = 16384;
  static constexpr std::uint32_t kInitialCapacity = 256;

  OwnedQueue();
  ~OwnedQueue();
  OwnedQueue(const OwnedQueue&) = delete;
  OwnedQueue& operator=(const OwnedQueue&) = delete;

  void set_bias_after(unsigned ops) noexcept { bias_after_ = ops; }  // before the queue is used

  // Anyone but the owner, under the lock (revoking the bias first). A push of a thread that is
  // already on a queue is a UsageError.
  void push_back(Thread& t);
  void push_front(Thread& t);
  Thread* pop_front() noexcept;
  // A thief's take: up to half of the threads (at most `limit`), oldest first, from the front
  // (or, from_back, the back, oldest first), copied into out[0..n); n. Their control blocks
  // are not touched: the caller runs one (after hand_over) and gives the others to its own
  // queue (owner_push_all), which rewrites their positions and hooks. Nothing (0) while
  // someone else holds the lock: thieves that queued for it would hold up the owner's next
  // push by all their holds. (Figure 3's pattern on 16 cores, one forker and 15 idle
  // processors that each wait for the lock to steal the one thread just pushed: 40,000
  // threads took 9 times as long as on 1 processor.) The thief tries the next queue, and its
  // idle loop, which sees this one's size, comes back.
  // From a biased queue, the owner takes them out for the thief at its next hold (above); the
  // thief waits for it, and only one thief can wait on a queue at a time: another gets nothing.
  std::size_t take_half(Thread** out, std::size_t limit, bool from_back) noexcept;
  // Marks a thread that take_half copied out as on no queue, for the thief that runs it.
  static void hand_over(Thread* entry) noexcept;
  // Takes `t` out if it is queued here (ThreadPool::withdraw); false if it is not.
  bool withdraw(Thread& t) noexcept;

  // Lazy forks (presto/detail/fork_record.hpp). A ring's entry is a thread or a tagged record;
  // every operation above may hand out either (the caller makes a record a thread), except
  // withdraw, which names a thread. The owner queues a record with owner_push_record and takes
  // it back with owner_withdraw_record; anyone else with withdraw_record.
  bool withdraw_record(ForkRecord& r) noexcept;
  // In place: if `r` is queued here, make(r) gives the thread made of it, which takes its slot
  // (make runs in the hold: it must not block). False if r is not queued here.
  template <class Make>
  bool replace_record(ForkRecord& r, Make&& make) noexcept;
  // The same for every record queued here, in order.
  template <class Make>
  void replace_records(Make&& make) noexcept;

  // The owner (src/owned_queue_owner.hpp). A hold: owner_acquire() ... owner_release(), which
  // may span a context switch (the yield keeps it until the yielding thread's context is
  // saved, so that no thief takes it half-saved); inside a hold, front() and exchange_front().
  inline void owner_acquire() noexcept;
  inline void owner_release() noexcept;
  Thread* front() const noexcept { return ring_[head_ & mask_]; }  // nullptr: empty
  // Takes the first thread and queues t in its place (at the front or at the back); the size
  // does not change. Precondition: the queue is not empty.
  inline Thread* exchange_front(Thread& t, bool to_front) noexcept;
  // One operation in a hold of its own.
  inline void owner_push(Thread& t, bool to_front);
  inline Thread* owner_pop_front() noexcept;
  inline bool owner_withdraw(Thread& t) noexcept;
  // True if the pusher must then check for parked processors (RuntimeImpl::wake_if_needed);
  // false if the queue held work without a break since a record push whose pusher checked,
  // and nothing else was queued since (`checked_`), or if the pusher is `alone`, the only
  // active processor, which does not check (then the next push checks, if it is not alone).
  [[nodiscard]] inline bool owner_push_record(ForkRecord& r, bool to_front, bool alone);
  inline bool owner_withdraw_record(ForkRecord& r) noexcept;
  // Takes the first entry if it is a record (a runner's next, Dispatch::run_records); nullptr
  // if the queue is empty or its first entry is a thread.
  inline ForkRecord* owner_pop_record() noexcept;
  // Queues threads[0..n) that take_half copied out of another queue here, in their order, at
  // the back (or each to the front).
  void owner_push_all(Thread* const* threads, std::size_t n, bool to_front) noexcept;

  // Exact while no push or pop is in flight.
  std::size_t size() const noexcept { return size_of(snapshot()); }
  // The size in the low 32 bits, and above it the position of the first thread. Under FIFO
  // order, two snapshots of size 1 with the same position show the same thread: every pop
  // moves the position on, and a push or a withdrawal behind it leaves it. Not quite under
  // LIFO order (a push to the front and a pop give the position back) or across a yield (which
  // exchanges the first thread without a new snapshot): there another thread may show the
  // same snapshot, which LocalQueuePool's thieves only take a few microseconds early.
  std::uint64_t snapshot() const noexcept { return published_.load(std::memory_order_relaxed); }
  static std::size_t size_of(std::uint64_t snapshot) noexcept { return snapshot & 0xFFFFFFFFu; }
  // How often a bias was revoked.
  std::uint64_t revocations() const noexcept { return revocations_.load(std::memory_order_relaxed); }
  // How many thieves' requests the owner served (a request served with nothing left counts).
  std::uint64_t served() const noexcept { return served_.load(std::memory_order_relaxed); }
  // The ring's slots now (tests: a withdrawal pattern must not grow it without bound).
  std::size_t capacity() const noexcept;

 private:
  // A thief's take (take_half): the lock already taken, and the owner's count of quiet
  // operations left as it is.
  static constexpr struct Steal {
  } kSteal{};
  // Someone else's hold: the lock, with the bias revoked.
  class Others {
   public:
    explicit Others(OwnedQueue& q) noexcept : q_(q) {
      q_.lock_.lock();
      ++q_.others_;
      enter();
    }
    Others(OwnedQueue& q, Steal) noexcept : q_(q) { enter(); }
    ~Others() { q_.lock_.unlock(); }
    Others(const Others&) = delete;
    Others& operator=(const Others&) = delete;

   private:
    void enter() noexcept {
      if (q_.biased_.load(std::memory_order_relaxed)) [[unlikely]] q_.revoke();
    }

    OwnedQueue& q_;
  };

  [[gnu::cold, gnu::noinline]] void revoke() noexcept;  // under lock_
  // A thief's request (take_half): kNoRequest -> kClaimed (a thief's, writing its fields) ->
  // kPosted -> kServing (the owner's, taking the threads out) -> kServed -> kNoRequest (the
  // thief has read the count). A thief that waited kServeWaitNs takes kPosted back to
  // kNoRequest; if the owner got there first, it waits for kServed.
  static constexpr std::uint32_t kNoRequest = 0, kClaimed = 1, kPosted = 2, kServing = 3, kServed = 4;
  static constexpr long kServeWaitNs = 2000;  // ten times that under ThreadSanitizer (owned_queue.cpp)
  static constexpr std::size_t kNotServed = ~std::size_t{0};
  std::size_t request(Thread** out, std::size_t limit, bool from_back) noexcept;  // or kNotServed
  [[gnu::cold, gnu::noinline]] void serve() noexcept;  // in a hold, a request posted
  // Up to half of the threads, at most `limit`, copied out and cleared (take_half); in a hold.
  std::size_t take_out(Thread** out, std::size_t limit, bool from_back) noexcept;
  // The ring, in a hold (src/owned_queue_owner.hpp). put: t at the front or the back, making
  // room first (which may throw); place: the same for a thread whose hook may still name the
  // queue it was stolen from.
  inline void put(Thread& t, bool to_front);
  inline void place(Thread* entry, bool to_front) noexcept;
  inline void set_position(Thread* entry, std::uint32_t pos) noexcept;
  inline Thread* take_front() noexcept;  // precondition: front() != nullptr
  inline bool remove(Thread& t) noexcept;
  inline bool remove_entry(Thread* entry, std::uint32_t pos) noexcept;  // if the slot at pos holds it
  inline void replace_at(std::uint32_t pos, Thread& t) noexcept;
  inline void skip_holes_front() noexcept;  // head_ past holes, up to tail_
  inline void skip_holes_back() noexcept;   // tail_ back past holes, down to head_
  [[gnu::cold, gnu::noinline]] void make_room();  // full: compact in place, or grow
  std::uint32_t live() const noexcept { return tail_ - head_ - holes_; }  // in a hold
  void publish_size() noexcept {  // in a hold
    published_.store(static_cast<std::uint64_t>(head_) << 32 | live(), std::memory_order_relaxed);
  }

  RawSpinlock lock_;
  std::atomic<bool> biased_{false};      // written under lock_; read by the owner without it
  std::atomic<bool> owner_busy_{false};  // the owner is inside an unlocked hold (written by it only)
  unsigned bias_after_ = kBiasAfter;
  unsigned quiet_ = 0;                   // the owner's locked holds in a row (under lock_)
  std::uint64_t others_ = 0;             // other parties' holds so far (under lock_)
  std::uint64_t others_seen_ = 0;        // others_ at the owner's last locked hold (under lock_)
  std::atomic<std::uint64_t> revocations_{0};  // written under lock_
  // The ring (in a hold): threads (or tagged records) at positions [head_, tail_) and holes_ holes (nullptr)
  // between them; when it is not empty, the first and the last are threads. Every slot
  // outside it is nullptr, so a slot that holds a thread holds it where it is queued.
  Thread** ring_ = nullptr;
  std::uint32_t mask_ = 0;  // slots - 1 (a power of two)
  std::uint32_t head_ = 0;
  std::uint32_t tail_ = 0;
  std::uint32_t holes_ = 0;
  std::atomic<std::uint64_t> published_{0};  // snapshot(): head_ and live()
  // In a hold: the queue has not been empty since a record push whose pusher then made the
  // check for parked processors, and no thread was queued here since. A processor parks only
  // after it has counted itself a sleeper, fenced, and seen every queue empty (Processor::park),
  // so one that parked since that push saw it, or that pusher saw the sleeper: a record pushed
  // while this holds needs no check of its own, and no fence (a locked instruction a fork).
  // Any other push clears it (a yield's requeue or a waker's push does not check), and so does
  // a record push by the only active processor, which does not check either.
  bool checked_ = false;

  // A thief's request, on a line of its own: the thief polls it while it waits, and the owner
  // reads it at every hold. The fields are the thief's between kClaimed and kPosted, the
  // owner's from kServing to kServed.
  alignas(64) std::atomic<std::uint32_t> request_{kNoRequest};
  std::uint32_t request_limit_ = 0;
  bool request_from_back_ = false;
  Thread** request_out_ = nullptr;
  std::size_t request_taken_ = 0;
  std::atomic<std::uint64_t> served_{0};  // written by the owner
};

}  // namespace presto::detail
