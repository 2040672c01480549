#include <presto/locks/anderson_lock.hpp>

#include <bit>

namespace presto::locks {

AndersonLock::AndersonLock(std::size_t slots)
    : slots_(std::make_unique<Slot[]>(std::bit_ceil(slots < 2 ? std::size_t{2} : slots))),
      mask_(static_cast<std::uint32_t>(std::bit_ceil(slots < 2 ? std::size_t{2} : slots) - 1)) {
  slots_[0].has_lock.store(true, std::memory_order_relaxed);
}

AndersonLock::~AndersonLock() = default;

void AndersonLock::acquire() noexcept {
  const std::uint32_t mine = next_.fetch_add(1, std::memory_order_relaxed);
  SpinWait w;
  // More than slots() threads in line: wait until the thread `slots` tickets ahead has taken
  // (and cleared) the slot this ticket shares with it.
  while (mine - released_.load(std::memory_order_acquire) > mask_) w.poll();
  Slot& s = slots_[mine & mask_];
  while (!s.has_lock.load(std::memory_order_acquire)) w.poll();
  s.has_lock.store(false, std::memory_order_relaxed);  // ready for the ticket `slots` later
  holder_ticket_ = mine;
}

bool AndersonLock::try_acquire() noexcept {
  // Free and nobody in line: the next ticket's slot holds the lock.
  std::uint32_t mine = next_.load(std::memory_order_relaxed);
  if (mine != released_.load(std::memory_order_acquire)) return false;
  if (!slots_[mine & mask_].has_lock.load(std::memory_order_acquire)) return false;
  if (!next_.compare_exchange_strong(mine, mine + 1, std::memory_order_acquire, std::memory_order_relaxed)) return false;
  slots_[mine & mask_].has_lock.store(false, std::memory_order_relaxed);
  holder_ticket_ = mine;
  return true;
}

void AndersonLock::release() noexcept {
  const std::uint32_t mine = holder_ticket_;
  released_.store(mine + 1, std::memory_order_release);
  slots_[(mine + 1) & mask_].has_lock.store(true, std::memory_order_release);
}

}  // namespace presto::locks
