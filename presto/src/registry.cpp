#include "registry.hpp"

#include <algorithm>
#include <mutex>
#include <utility>

#include <presto/detail/cpu.hpp>
#include <presto/thread.hpp>

namespace presto::detail {

Registry::~Registry() {
  for (Chunk* c = head_.load(std::memory_order_relaxed); c != nullptr;) delete std::exchange(c, c->next.load(std::memory_order_relaxed));
}

void Registry::add(Thread& t) {
  if (free_.empty()) [[unlikely]] refill();
  Slot* slot = free_.back();
  free_.pop_back();
  t.registry_slot_ = slot;
  t.registry_ = this;
  slot->store(&t, std::memory_order_release);
}

void Registry::add_shared(Thread& t) {
  std::lock_guard guard(shared_lock_);
  add(t);
}

void Registry::refill() {
  // Every empty slot is free: only the owner fills slots, and free_ holds none of them now.
  for_each_slot([&](Slot& slot) {
    if (slot.load(std::memory_order_relaxed) == nullptr) free_.push_back(&slot);
  });
  if (free_.size() * 4 > capacity_) return;
  // Grow geometrically, so that sweeps cost O(1) per added thread.
  auto chunk = std::make_unique<Chunk>(std::max<std::size_t>(64, capacity_));
  free_.reserve(capacity_ + chunk->size);  // removals by the owner never allocate
  Chunk* c = chunk.release();
  if (tail_ != nullptr) {
    tail_->next.store(c, std::memory_order_release);
  } else {
    head_.store(c, std::memory_order_release);
  }
  tail_ = c;
  capacity_ += c->size;
  for (std::size_t i = c->size; i-- > 0;) free_.push_back(&c->slots[i]);
}

void Registry::remove(Thread& t, bool by_owner) noexcept {
  Slot* slot = t.registry_slot_;
  t.registry_slot_ = nullptr;
  t.registry_ = nullptr;
  slot->store(nullptr, std::memory_order_relaxed);
  light_fence();  // pairs with for_each's heavy fence
  // Acquire: a walk that has already ended (the count back at 0) ended before t is reused.
  if (readers_.load(std::memory_order_acquire) != 0) [[unlikely]] wait_for_readers();
  if (by_owner) free_.push_back(slot);
}

void Registry::wait_for_readers() const noexcept {
  Backoff backoff;
  while (readers_.load(std::memory_order_acquire) != 0) backoff.pause();
}

std::size_t Registry::size() const noexcept {
  std::size_t n = 0;
  for_each_slot([&](const Slot& slot) { n += slot.load(std::memory_order_relaxed) != nullptr; });
  return n;
}

}  // namespace presto::detail
