#include <presto/local_queue_pool.hpp>

#include <chrono>

#include <presto/detail/cpu.hpp>
#include <presto/errors.hpp>
#include <presto/processor.hpp>
#include <presto/runtime.hpp>
#include <presto/thread.hpp>

#include "current.hpp"
#include "dispatch.hpp"
#include "owned_queue_owner.hpp"
#include "race_point.hpp"
#include "runtime_impl.hpp"

namespace presto {

std::string_view to_string(LocalQueuePool::Placement placement) noexcept {
  switch (placement) {
    case LocalQueuePool::Placement::waker: return "waker";
    case LocalQueuePool::Placement::last: return "last";
    case LocalQueuePool::Placement::shortest: return "shortest";
    case LocalQueuePool::Placement::random: return "random";
  }
  return "?";
}

std::string_view to_string(LocalQueuePool::Order order) noexcept {
  return order == LocalQueuePool::Order::lifo ? "lifo" : "fifo";
}

LocalQueuePool::~LocalQueuePool() = default;

std::string_view LocalQueuePool::name() const noexcept {
  static constexpr std::string_view names[2][4] = {
      {"local-queue", "local-queue/last", "local-queue/shortest", "local-queue/random"},
      {"local-queue/lifo", "local-queue/last/lifo", "local-queue/shortest/lifo", "local-queue/random/lifo"}};
  return names[order_ == Order::lifo ? 1 : 0][static_cast<std::size_t>(placement_)];
}

void LocalQueuePool::attach(const Runtime& rt) {
  std::size_t n = rt.processors();
  random_.store(rt.seed(), std::memory_order_relaxed);
  if (queues_ != nullptr && n == count_) return;
  if (size() != 0) throw UsageError("LocalQueuePool: cannot change the number of queues while threads are queued");
  auto queues = std::make_unique<Queue[]>(n);
  pinned_.attach(n);
  for (std::size_t i = 0; i < n; ++i) {
    queues[i].set_bias_after(bias_after_);
    queues[i].pool = this;
    queues[i].pinned = &pinned_.queue(i);
  }
  runtime_ = &rt;
  queues_ = std::move(queues);
  count_ = n;
}

[[gnu::always_inline]] inline std::size_t LocalQueuePool::own_queue(const Processor* p) const noexcept {
  if (p != nullptr && &p->runtime() == runtime_ && p->index() < count_) [[likely]] return p->index();
  return count_;
}

std::size_t LocalQueuePool::shortest(std::size_t own) const noexcept {
  // An unlocked scan of the lengths, as in Joyce's kernel: two processors may pick the same
  // queue at once, a passing imbalance the next placements correct. Ties go to the first
  // queue scanned, the caller's own.
  const std::size_t start = own < count_ ? own : 0;
  std::size_t best = start;
  std::size_t best_length = static_cast<std::size_t>(-1);
  for (std::size_t k = 0; k < count_; ++k) {
    const std::size_t i = start + k < count_ ? start + k : start + k - count_;
    const std::size_t length = queues_[i].size() + (queues_[i].busy.load(std::memory_order_relaxed) ? 1 : 0);
    if (length < best_length) {
      best = i;
      best_length = length;
      if (length == 0) break;
    }
  }
  return best;
}

[[gnu::always_inline]] inline std::size_t LocalQueuePool::waker(std::size_t own) noexcept {
  if (own < count_) [[likely]] return own;
  return round_robin_.fetch_add(1, std::memory_order_relaxed) % count_;
}

std::size_t LocalQueuePool::place(Thread& t, std::size_t own) noexcept {
  if (placement_ == Placement::shortest) return shortest(own);
  if (placement_ == Placement::random) {
    if (count_ == 1) return 0;  // nothing to draw (the draw's division cost a one-processor fork 10%)
    // splitmix64 over a shared counter: no lock, and every seed gives a full-period sequence.
    // (Each processor drawing from its own counter measured the same on 4 and 16 processors,
    // 2026-11-27: the threads' hand-offs to other processors' queues are what cost.)
    std::uint64_t z = random_.fetch_add(0x9e3779b97f4a7c15ULL, std::memory_order_relaxed) + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<std::size_t>((z ^ (z >> 31)) % count_);
  }
  const Processor* last = t.processor();  // Placement::last
  if (last != nullptr && &last->runtime() == runtime_ && last->index() < count_) return last->index();
  return waker(own);
}

void LocalQueuePool::put(Thread& t) {
  if (count_ == 0) [[unlikely]] throw UsageError("LocalQueuePool used before it was attached to a runtime");
  if (pinned_.put(t)) return;
  Processor* const p = detail::current_processor();  // nothing here switches
  const std::size_t own = own_queue(p);
  const std::size_t i = placement_ == Placement::waker ? waker(own) : place(t, own);
  // A processor putting into its own queue from its dispatch path (a scheduler's ready(), inside
  // its gate) is the queue's owner, as get() is: so a Scheduler subclass over this pool keeps
  // the bias too. (Taking the lock there counted as another user's operation, and the queue was
  // never biased: PSIM's scheduler paid a locked push and a locked pop for every wake-up.)
  if (i == own && detail::Dispatch::owns(*p)) [[likely]] {
    queues_[i].owner_push(t, order_ == Order::lifo);
  } else {
    enqueue(queues_[i], t);
  }
}

Thread* LocalQueuePool::get(Processor& p) {
  if (count_ == 0) return nullptr;
  const std::size_t home = p.index() < count_ ? p.index() : 0;
  // Called by p's dispatch (Scheduler::next), p works on its own queue as its owner.
  const bool owner = home == p.index() && detail::Dispatch::owns(p);
  Thread* t = pinned_.get(p);
  if (t == nullptr) t = owner ? queues_[home].owner_pop_front() : queues_[home].pop_front();
  if (t == nullptr) [[unlikely]] t = steal(home, owner);
  PRESTO_RACE_POINT("LocalQueuePool::get: an entry taken, a record not yet made a thread");
  if (detail::is_record(t)) [[unlikely]] t = &detail::Dispatch::take_to_run(p, *detail::as_record(t));
  if (placement_ == Placement::shortest) {
    const bool busy = t != nullptr;
    if (queues_[home].busy.load(std::memory_order_relaxed) != busy) queues_[home].busy.store(busy, std::memory_order_relaxed);
  }
  return t;
}

Thread* LocalQueuePool::steal(std::size_t home, bool owner) {
  // From the neighbour on: the oldest thread of the first non-empty queue to run now and, for a
  // processor that owns `home`, up to half of that queue into it, so that a processor that ran
  // dry steals once for many threads instead of once a thread (Go's runqsteal does the same).
  // The victim's lock is held only while the pointers are copied; the threads' control blocks
  // are written after it (detail::OwnedQueue).
  if (detail::RuntimeImpl::of(*runtime_).records_frozen.load(std::memory_order_relaxed)) [[unlikely]] return nullptr;
  const bool lifo = order_ == Order::lifo;
  Thread* one = nullptr;
  Thread** batch = owner ? queues_[home].stolen : &one;
  for (std::size_t i = home + 1; i != home; ++i) {
    if (i == count_) {
      i = 0;
      if (home == 0) break;
    }
    const std::size_t n = queues_[i].take_half(batch, owner ? kStealLimit : 1, lifo);
    if (n == 0) continue;
    PRESTO_RACE_POINT("LocalQueuePool::steal: between the take and the push of the rest");  // in no ring
    detail::OwnedQueue::hand_over(batch[0]);
    if (n > 1) queues_[home].owner_push_all(batch + 1, n - 1, lifo);
    return batch[0];
  }
  return nullptr;
}

bool LocalQueuePool::withdraw(Thread& t) {
  if (count_ == 0) return false;
  const std::size_t own = own_queue(detail::current_processor());
  const std::size_t home = own < count_ ? own : 0;
  return queues_[home].withdraw(t) || withdraw_elsewhere(t, home);
}

bool LocalQueuePool::withdraw_elsewhere(Thread& t, std::size_t own) {
  for (std::size_t k = 1; k < count_; ++k) {
    if (queues_[own + k < count_ ? own + k : own + k - count_].withdraw(t)) return true;
  }
  return false;
}

std::size_t LocalQueuePool::unpinned() const noexcept {
  std::size_t n = 0;
  for (std::size_t i = 0; i < count_; ++i) n += queues_[i].size();
  return n;
}

std::uint64_t LocalQueuePool::revocations() const noexcept {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < count_; ++i) n += queues_[i].revocations();
  return n;
}

std::uint64_t LocalQueuePool::served_steals() const noexcept {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < count_; ++i) n += queues_[i].served();
  return n;
}

std::size_t LocalQueuePool::size() const noexcept { return unpinned() + pinned_.size(); }

bool LocalQueuePool::has_work_for(const Processor& p) const noexcept {
  if (pinned_.has_work_for(p)) return true;
  // Any thread of p's own queue, two or more of another's; a lone thread of another queue only
  // once it has waited there for kLoneGrace (a processor without a queue of its own, or about
  // to sleep: any).
  const std::size_t own = own_queue(&p);
  if (own == count_) return unpinned() != 0;
  std::size_t lone = count_;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < count_; ++i) {
    const std::uint64_t s = queues_[i].snapshot();
    const std::size_t n = detail::OwnedQueue::size_of(s);
    if (n == 0) continue;
    if (n > 1 || i == own) return true;
    if (lone == count_) lone = i, seen = s;
  }
  return lone != count_ && (p.parking() || lone_stays(lone, seen));
}

bool LocalQueuePool::lone_stays(std::size_t i, std::uint64_t seen) const noexcept {
  const auto until = std::chrono::steady_clock::now() + kLoneGrace;
  do {
    for (int k = 0; k < 16; ++k) {
      detail::relax_cpu();
      if (queues_[i].snapshot() != seen) return false;
    }
  } while (std::chrono::steady_clock::now() < until);
  return true;
}

std::size_t LocalQueuePool::queued(std::size_t index) const noexcept {
  return index < count_ ? queues_[index].size() : 0;
}

}  // namespace presto
