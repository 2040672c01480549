#include <presto/detail/owned_queue.hpp>

#include <chrono>
#include <new>

#include <presto/detail/cpu.hpp>

#include "owned_queue_owner.hpp"
#include "race_point.hpp"
#include "sanitizers.hpp"

namespace presto::detail {

OwnedQueue::OwnedQueue() : ring_(new Thread*[kInitialCapacity]()), mask_(kInitialCapacity - 1) {}

OwnedQueue::~OwnedQueue() { delete[] ring_; }

void OwnedQueue::revoke() noexcept {
  // Under lock_: from now on the owner takes the lock too. The heavy fence pairs with the
  // owner's light one: either its next read of the bias sees it cleared, or its announcement
  // is visible below and we wait for the hold it is in (a yield's spans a context switch).
  biased_.store(false, std::memory_order_relaxed);
  revocations_.store(revocations_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  heavy_fence();
  Backoff backoff;
  while (owner_busy_.load(std::memory_order_acquire)) backoff.pause();
}

void OwnedQueue::make_room() {
  const std::uint32_t slots = mask_ + 1;
  if (holes_ >= slots / 2) {
    // At least half of the ring is holes: close them up (positions change; the threads are
    // rewritten), which frees half of it. So a pattern of withdrawals from the middle (fork
    // the next, join the one before) keeps the ring's size.
    std::uint32_t to = head_;
    for (std::uint32_t pos = head_; pos != tail_; ++pos) {
      Thread* t = ring_[pos & mask_];
      if (t == nullptr) continue;
      if (pos != to) {
        ring_[to & mask_] = t;
        set_position(t, to);
      }
      ++to;
    }
    for (std::uint32_t pos = to; pos != tail_; ++pos) ring_[pos & mask_] = nullptr;
    tail_ = to;
    holes_ = 0;
    return;
  }
  if (slots > (std::uint32_t{1} << 30)) throw std::bad_alloc();  // positions would wrap within the ring
  const std::uint32_t mask = 2 * slots - 1;
  Thread** bigger = new Thread*[mask + 1]();  // may throw: the queue is unchanged
  for (std::uint32_t pos = head_; pos != tail_; ++pos) bigger[pos & mask] = ring_[pos & mask_];  // positions stay
  delete[] ring_;
  ring_ = bigger;
  mask_ = mask;
}

void OwnedQueue::push_back(Thread& t) {
  Others hold(*this);
  put(t, false);
  publish_size();
}

void OwnedQueue::push_front(Thread& t) {
  Others hold(*this);
  put(t, true);
  publish_size();
}

Thread* OwnedQueue::pop_front() noexcept {
  if (size() == 0) return nullptr;  // look before locking
  Others hold(*this);
  Thread* t = front() != nullptr ? take_front() : nullptr;
  publish_size();
  return t;
}

std::size_t OwnedQueue::take_half(Thread** out, std::size_t limit, bool from_back) noexcept {
  if (size() == 0) return 0;
  if (biased_.load(std::memory_order_relaxed)) {
    if (const std::size_t n = request(out, limit, from_back); n != kNotServed) return n;
    if (size() == 0) return 0;  // what it waited for went meanwhile: no revocation for nothing
  }
  if (!lock_.try_lock()) return 0;
  Others hold(*this, kSteal);
  PRESTO_RACE_POINT("OwnedQueue::take_half: the victim's lock held");
  const std::size_t n = take_out(out, limit, from_back);
  publish_size();
  return n;
}

std::size_t OwnedQueue::request(Thread** out, std::size_t limit, bool from_back) noexcept {
  std::uint32_t expected = kNoRequest;
  if (!request_.compare_exchange_strong(expected, kClaimed, std::memory_order_acquire, std::memory_order_relaxed)) {
    return 0;  // another thief waits on this queue: try the next
  }
  request_out_ = out;
  request_limit_ = static_cast<std::uint32_t>(limit);
  request_from_back_ = from_back;
  request_.store(kPosted, std::memory_order_release);
  // ThreadSanitizer slows the owner's path from one hold to the next many times over (every
  // access checked, each fiber switch annotated): a thief waiting kServeWaitNs there revoked all
  // of the 4,693 biases it met in a loaded CI run (2026-12-07), no request served. It waits ten
  // times as long there.
  constexpr long wait_ns = kServeWaitNs * (PRESTO_TSAN ? 10 : 1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(wait_ns);
  for (unsigned spins = 1;; ++spins) {
    if (request_.load(std::memory_order_acquire) == kServed) break;
    relax_cpu();
    // Waited long enough, or the bias went (the owner serves in locked holds too, but a
    // revoked queue's lock is the quicker way): withdraw the request unless it is being served.
    if (spins % 16 == 0 && (!biased_.load(std::memory_order_relaxed) || std::chrono::steady_clock::now() > deadline)) {
      PRESTO_RACE_POINT("OwnedQueue::request: a thief takes its request back");
      expected = kPosted;
      if (request_.compare_exchange_strong(expected, kNoRequest, std::memory_order_relaxed)) return kNotServed;
      while (request_.load(std::memory_order_acquire) != kServed) relax_cpu();  // kServing: briefly
      break;
    }
  }
  const std::size_t n = request_taken_;
  request_.store(kNoRequest, std::memory_order_release);
  return n;
}

void OwnedQueue::serve() noexcept {
  std::uint32_t expected = kPosted;
  if (!request_.compare_exchange_strong(expected, kServing, std::memory_order_acquire, std::memory_order_relaxed)) {
    return;  // its thief withdrew it
  }
  request_taken_ = take_out(request_out_, request_limit_, request_from_back_);
  publish_size();
  served_.store(served_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  request_.store(kServed, std::memory_order_release);
}

std::size_t OwnedQueue::take_out(Thread** out, std::size_t limit, bool from_back) noexcept {
  std::size_t n = (live() + 1) / 2;
  if (n > limit) n = limit;
  if (n == 0) return 0;
  // Lazy forks at the back: the newest half, far from the forker, which joins its oldest first
  // (docs/design/lazy-forks.md, "The floor"): its joins then find their records at home.
  if (is_record(ring_[(tail_ - 1) & mask_])) from_back = true;
  // Only the ring is read and cleared: the threads' hooks and positions still name this
  // queue, which remove() sees through (their slots no longer hold them).
  if (from_back) {
    std::uint32_t pos = tail_;
    for (std::size_t k = n; k != 0;) {
      Thread*& slot = ring_[--pos & mask_];
      if (slot == nullptr) {
        --holes_;
        continue;
      }
      out[--k] = slot;
      slot = nullptr;
    }
    tail_ = pos;
    if (holes_ != 0) skip_holes_back();
  } else {
    std::uint32_t pos = head_;
    for (std::size_t k = 0; k != n;) {
      Thread*& slot = ring_[pos++ & mask_];
      if (slot == nullptr) {
        --holes_;
        continue;
      }
      out[k++] = slot;
      slot = nullptr;
    }
    head_ = pos;
    if (holes_ != 0) skip_holes_front();
  }
  return n;
}

void OwnedQueue::hand_over(Thread* entry) noexcept {
  if (!is_record(entry)) entry->queue_hook_.set_list(nullptr);
}

bool OwnedQueue::withdraw(Thread& t) noexcept {
  if (size() == 0) return false;
  Others hold(*this);
  const bool removed = remove(t);
  publish_size();
  return removed;
}

bool OwnedQueue::withdraw_record(ForkRecord& r) noexcept {
  if (size() == 0) return false;
  Others hold(*this);
  PRESTO_RACE_POINT("OwnedQueue::withdraw_record: the lock held");
  const bool removed = remove_entry(tagged(r), r.position.load(std::memory_order_relaxed));
  publish_size();
  return removed;
}

void OwnedQueue::owner_push_all(Thread* const* threads, std::size_t n, bool to_front) noexcept {
  owner_acquire();
  for (std::size_t k = 0; k != n; ++k) {
    // Room for what a thief took, or the threads would be lost: std::bad_alloc here ends the
    // process (noexcept). The thief's own queue was empty when it went stealing.
    if (tail_ - head_ > mask_) [[unlikely]] make_room();
    place(threads[k], to_front);  // rewrites the victim's position and list
  }
  checked_ = false;
  publish_size();
  owner_release();
}

std::size_t OwnedQueue::capacity() const noexcept { return std::size_t{mask_} + 1; }

}  // namespace presto::detail
