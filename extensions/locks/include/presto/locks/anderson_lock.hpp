#pragma once
// AndersonLock: Anderson's array-based queue lock (1990). A waiter takes a ticket with one
// fetch-and-add and spins on a flag of its own, slot ticket % slots, each slot on a cache line
// of its own; the holder's release sets the next slot's flag. A release therefore costs one
// miss (the next waiter's) whatever the number of waiters: the flat curve of Anderson's Figure 3.
//
// FIFO, in ticket order. `slots` (rounded up to a power of two) bounds how many threads spin
// at once on their own flags; a thread whose ticket is `slots` or more ahead of the last
// release first waits for a free slot (still correct, just slower). Give it at least the
// number of OS threads that may contend: the runtime's processors plus plain OS threads (a
// presto thread spinning for a Spinlock keeps its processor, so no more presto threads than
// processors ever spin at once). Memory: 64 bytes per slot.
//
// Oversubscribed (more processors than cores) it suffers as every FIFO lock does: the thread
// whose slot was set may be descheduled, and nobody behind it can pass.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include <presto/locks/spin_wait.hpp>
#include <presto/spinlock.hpp>

namespace presto::locks {

class AndersonLock final : public Spinlock {
 public:
  explicit AndersonLock(std::size_t slots = 64);
  ~AndersonLock() override;
  std::size_t slots() const noexcept { return mask_ + 1; }

 protected:
  void acquire() noexcept override;
  bool try_acquire() noexcept override;
  void release() noexcept override;

 private:
  struct alignas(kCacheLine) Slot {
    std::atomic<bool> has_lock{false};
  };
  std::unique_ptr<Slot[]> slots_;
  std::uint32_t mask_;
  alignas(kCacheLine) std::atomic<std::uint32_t> next_{0};      // next ticket
  alignas(kCacheLine) std::atomic<std::uint32_t> released_{0};  // releases so far
  std::uint32_t holder_ticket_ = 0;                              // the holder's, for release
};

}  // namespace presto::locks
