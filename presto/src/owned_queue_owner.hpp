#pragma once
// The owner's side of OwnedQueue (presto/detail/owned_queue.hpp): biased holds with the light
// fence of asymmetric_fence.hpp, falling back to the queue's lock while the bias is revoked.

#include <presto/detail/owned_queue.hpp>

#include "asymmetric_fence.hpp"

namespace presto::detail {

[[gnu::always_inline]] inline void OwnedQueue::owner_acquire() noexcept {
  owner_busy_.store(true, std::memory_order_relaxed);
  light_fence();  // the store above before the read below, against revoke()'s heavy fence
  if (biased_.load(std::memory_order_relaxed)) [[likely]] return;  // owner_busy_ stays set
  owner_busy_.store(false, std::memory_order_relaxed);
  lock_.lock_unpreemptible();
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

template <class T>
[[gnu::always_inline]] inline void OwnedQueue::owner_push(T& t, bool to_front) {
  owner_acquire();
  struct Release {  // the push throws if t is already queued
    OwnedQueue& q;
    [[gnu::always_inline]] ~Release() { q.owner_release(); }
  } release{*this};
  put(t, to_front);
  publish_size();
}

[[gnu::always_inline]] inline Thread* OwnedQueue::owner_pop_front() noexcept {
  if (size() == 0) return nullptr;  // look before holding
  owner_acquire();
  Thread* t = queue_.pop_front();
  publish_size();
  owner_release();
  return t;
}

template <class T>
[[gnu::always_inline]] inline bool OwnedQueue::owner_withdraw(T& t) noexcept {
  if (size() == 0) return false;
  owner_acquire();
  const bool removed = queue_.remove(t);
  publish_size();
  owner_release();
  return removed;
}

[[gnu::always_inline]] inline void OwnedQueue::owner_push_all(ThreadQueue& from, bool to_front) noexcept {
  owner_acquire();
  while (Thread* t = from.pop_front()) put(*t, to_front);
  publish_size();
  owner_release();
}

}  // namespace presto::detail
