#pragma once
// StackAllocator: the runtime's source of thread stacks. Stacks are mmap'ed with a guard page
// below the usable region, cached for reuse (so mmap and the guard cost are paid once), and
// returned to the system when the runtime is destroyed.
//
// Guard pages, in order of preference:
// 1. MADV_GUARD_INSTALL (Linux 6.13+): a guard inside a larger mapping, without splitting
//    it; stacks are carved from 2 MiB slabs, so a million stacks need a few thousand mappings.
// 2. mprotect(PROT_NONE): one mapping per stack, two VMAs each. vm.max_map_count (65,530 by
//    default) bounds how many such stacks can exist; past half of it the allocator stops.
// 3. No guard: stacks from slabs with a canary word at the bottom, checked whenever the
//    thread switches out and when it finishes. The first such stack logs a warning naming
//    vm.max_map_count.
// PRESTO_STACK_GUARD=madvise|mprotect|canary forces one of them (tests, diagnosis).
// Either way an overflow ends the program with "thread 'NAME' (id N) overflowed its K KiB
// stack" (stack_guard.cpp) instead of corrupting memory silently.
//
// Thread-safe. Processors keep small caches of their own in front of it.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include <presto/detail/execution_context.hpp>

namespace spdlog {
class logger;
}

namespace presto::detail {

class StackAllocator {
 public:
  explicit StackAllocator(spdlog::logger& log);
  StackAllocator(const StackAllocator&) = delete;
  StackAllocator& operator=(const StackAllocator&) = delete;
  ~StackAllocator();

  static std::size_t page_size() noexcept;
  // The usable size a request turns into: whole pages, at least kMinimumSize.
  static std::size_t round_size(std::size_t requested) noexcept;
  static constexpr std::size_t kMinimumSize = 16 * 1024;
  static constexpr std::uint64_t kCanary = 0x5052455354304f4bULL;  // "PRESTO0K"

  Stack allocate(std::size_t usable_size);  // throws std::bad_alloc when the system says no
  void deallocate(Stack stack) noexcept;

  // True if the canary of an unguarded stack is intact (guarded stacks: always true).
  static bool canary_intact(const Stack& stack) noexcept {
    return stack.guarded || *static_cast<const std::uint64_t*>(stack.base) == kCanary;
  }

  std::size_t in_use() const noexcept { return in_use_.load(std::memory_order_relaxed); }
  std::size_t cached() const noexcept { return cached_.load(std::memory_order_relaxed); }
  std::size_t unguarded() const noexcept { return unguarded_.load(std::memory_order_relaxed); }

 private:
  enum class GuardMode { unknown, madvise, mprotect, none };
  struct Region {
    void* address;
    std::size_t length;
  };

  void choose_guard_mode();
  Stack carve_from_slab(std::size_t usable, bool guard);
  Stack map_single(std::size_t usable);
  void note_unguarded();

  spdlog::logger& log_;
  std::mutex mutex_;
  GuardMode mode_ = GuardMode::unknown;
  std::size_t mprotect_budget_ = 0;   // stacks that may still get an mprotect guard
  std::map<std::size_t, std::vector<Stack>> free_;  // by usable size
  std::vector<Region> regions_;       // every mapping, unmapped at destruction
  // The slab stacks are being carved from, per usable size.
  std::map<std::size_t, std::pair<char*, std::size_t>> slab_;  // next unit, units left
  bool warned_unguarded_ = false;
  std::atomic<std::size_t> in_use_{0};
  std::atomic<std::size_t> cached_{0};
  std::atomic<std::size_t> unguarded_{0};
};

}  // namespace presto::detail
