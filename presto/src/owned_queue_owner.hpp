#pragma once
// The owner's side of OwnedQueue (presto/detail/owned_queue.hpp): biased holds with the light
// fence of asymmetric_fence.hpp, falling back to the queue's lock while the bias is revoked;
// and the ring's operations inside a hold, which the other parties' operations
// (owned_queue.cpp) share.

#include <atomic>

#include <presto/detail/fork_record.hpp>
#include <presto/detail/owned_queue.hpp>
#include <presto/thread.hpp>
#include <presto/thread_queue.hpp>

#include "asymmetric_fence.hpp"

namespace presto::detail {

[[gnu::always_inline]] inline void OwnedQueue::owner_acquire() noexcept {
  owner_busy_.store(true, std::memory_order_relaxed);
  light_fence();  // the store above before the read below, against revoke()'s heavy fence
  if (!biased_.load(std::memory_order_relaxed)) [[unlikely]] {  // biased: owner_busy_ stays set
    owner_busy_.store(false, std::memory_order_relaxed);
    lock_.lock_unpreemptible();
  }
  // A thief's request; in a locked hold too, for a thief that saw the bias before its revocation.
  if (request_.load(std::memory_order_relaxed) == kPosted) [[unlikely]] serve();
}

[[gnu::always_inline]] inline void OwnedQueue::owner_release() noexcept {
  if (owner_busy_.load(std::memory_order_relaxed)) [[likely]] {  // an unlocked hold
    owner_busy_.store(false, std::memory_order_release);  // a revoker waiting reads our work
    return;
  }
  // A locked hold: bias the queue once nobody else has held it for bias_after_ of ours.
  if (others_ != others_seen_) {
    others_seen_ = others_;
    quiet_ = 0;
  } else if (bias_after_ != 0 && ++quiet_ >= bias_after_) {
    quiet_ = 0;
    biased_.store(true, std::memory_order_relaxed);  // published by the unlock below
  }
  lock_.unlock_unpreemptible();
}

[[gnu::always_inline]] inline void OwnedQueue::set_position(Thread* entry, std::uint32_t pos) noexcept {
  if (is_record(entry)) [[unlikely]] {
    ForkRecord& r = *as_record(entry);
    r.position.store(pos, std::memory_order_relaxed);
    r.queue.store(this, std::memory_order_relaxed);
  } else {
    std::atomic_ref<std::uint32_t>(entry->ready_position_).store(pos, std::memory_order_relaxed);
  }
}

[[gnu::always_inline]] inline void OwnedQueue::place(Thread* entry, bool to_front) noexcept {
  const std::uint32_t pos = to_front ? --head_ : tail_++;
  ring_[pos & mask_] = entry;
  set_position(entry, pos);
  if (!is_record(entry)) [[likely]] entry->queue_hook_.set_list(this);
}

[[gnu::always_inline]] inline void OwnedQueue::put(Thread& t, bool to_front) {
  ThreadQueue::link(t);  // a thread already on a queue is a UsageError, as on every ThreadQueue
  if (tail_ - head_ > mask_) [[unlikely]] make_room();
  place(&t, to_front);
  checked_ = false;
}

[[gnu::always_inline]] inline void OwnedQueue::skip_holes_front() noexcept {
  for (; head_ != tail_ && ring_[head_ & mask_] == nullptr; ++head_) --holes_;
}

[[gnu::always_inline]] inline void OwnedQueue::skip_holes_back() noexcept {
  for (; tail_ != head_ && ring_[(tail_ - 1) & mask_] == nullptr; --tail_) --holes_;
}

[[gnu::always_inline]] inline Thread* OwnedQueue::take_front() noexcept {
  Thread*& slot = ring_[head_ & mask_];
  Thread* t = slot;
  slot = nullptr;
  ++head_;
  if (holes_ != 0) [[unlikely]] skip_holes_front();
  if (!is_record(t)) [[likely]] t->queue_hook_.set_list(nullptr);
  return t;
}

[[gnu::always_inline]] inline bool OwnedQueue::remove(Thread& t) noexcept {
  // A slot holds t only while t is queued here, at that position: a stolen thread keeps its
  // old position for a while, but its slot was cleared when it was taken.
  if (!remove_entry(&t, std::atomic_ref<std::uint32_t>(t.ready_position_).load(std::memory_order_relaxed))) return false;
  t.queue_hook_.set_list(nullptr);
  return true;
}

[[gnu::always_inline]] inline bool OwnedQueue::remove_entry(Thread* entry, std::uint32_t pos) noexcept {
  Thread*& slot = ring_[pos & mask_];
  if (slot != entry) return false;
  slot = nullptr;
  if (pos == head_) {
    ++head_;
    if (holes_ != 0) [[unlikely]] skip_holes_front();
  } else if (pos + 1 == tail_) {
    --tail_;
    if (holes_ != 0) [[unlikely]] skip_holes_back();
  } else {
    ++holes_;
  }
  return true;
}

[[gnu::always_inline]] inline bool OwnedQueue::owner_withdraw_record(ForkRecord& r) noexcept {
  if (size() == 0) return false;
  owner_acquire();
  const bool removed = remove_entry(tagged(r), r.position.load(std::memory_order_relaxed));
  publish_size();
  owner_release();
  return removed;
}

[[gnu::always_inline]] inline Thread* OwnedQueue::exchange_front(Thread& t, bool to_front) noexcept {
  Thread* first = take_front();
  place(&t, to_front);  // the slot just freed is room enough; t runs, so it is on no queue
  return first;
}

[[gnu::always_inline]] inline void OwnedQueue::owner_push(Thread& t, bool to_front) {
  owner_acquire();
  struct Release {  // the push throws if t is already queued, or if the ring cannot grow
    OwnedQueue& q;
    [[gnu::always_inline]] ~Release() { q.owner_release(); }
  } release{*this};
  put(t, to_front);
  publish_size();
}

[[gnu::always_inline]] inline bool OwnedQueue::owner_push_record(ForkRecord& r, bool to_front, bool alone) {
  owner_acquire();
  struct Release {  // the push throws if the ring cannot grow
    OwnedQueue& q;
    [[gnu::always_inline]] ~Release() { q.owner_release(); }
  } release{*this};
  if (tail_ - head_ > mask_) [[unlikely]] make_room();
  const bool check = !alone && (!checked_ || live() == 0);
  place(tagged(r), to_front);
  publish_size();
  checked_ = !alone;  // by the caller next (check), by an earlier pusher, or by nobody (alone)
  return check;
}

[[gnu::always_inline]] inline Thread* OwnedQueue::owner_pop_front() noexcept {
  if (size() == 0) return nullptr;  // look before holding
  owner_acquire();
  Thread* t = front() != nullptr ? take_front() : nullptr;  // a thief may have come in between
  publish_size();
  owner_release();
  return t;
}

[[gnu::always_inline]] inline ForkRecord* OwnedQueue::owner_pop_record() noexcept {
  if (size() == 0) return nullptr;  // look before holding
  owner_acquire();
  Thread* first = front();
  ForkRecord* r = is_record(first) ? as_record(take_front()) : nullptr;
  publish_size();
  owner_release();
  return r;
}

[[gnu::always_inline]] inline bool OwnedQueue::owner_withdraw(Thread& t) noexcept {
  if (size() == 0) return false;
  owner_acquire();
  const bool removed = remove(t);
  publish_size();
  owner_release();
  return removed;
}

template <class Make>
bool OwnedQueue::replace_record(ForkRecord& r, Make&& make) noexcept {
  Others hold(*this);
  const std::uint32_t pos = r.position.load(std::memory_order_relaxed);
  if (ring_[pos & mask_] != tagged(r)) return false;
  replace_at(pos, make(r));
  return true;
}

template <class Make>
void OwnedQueue::replace_records(Make&& make) noexcept {
  Others hold(*this);
  for (std::uint32_t pos = head_; pos != tail_; ++pos) {
    if (Thread* entry = ring_[pos & mask_]; is_record(entry)) replace_at(pos, make(*as_record(entry)));
  }
}

inline void OwnedQueue::replace_at(std::uint32_t pos, Thread& t) noexcept {
  ring_[pos & mask_] = &t;
  std::atomic_ref<std::uint32_t>(t.ready_position_).store(pos, std::memory_order_relaxed);
  t.queue_hook_.set_list(this);
}

}  // namespace presto::detail
