#include "stack_allocator.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <fstream>
#include <new>

#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102  // Linux 6.13 uapi; older kernels answer EINVAL
#endif

namespace presto::detail {

namespace {

constexpr std::size_t kSlabBytes = 2 * 1024 * 1024;
// Stacks kept resident for reuse; beyond this, freed stacks give their memory back
// (MADV_DONTNEED) but keep their address range for the next allocation.
constexpr std::size_t kWarmStacks = 4096;

std::size_t max_map_count() {
  std::ifstream in("/proc/sys/vm/max_map_count");
  std::size_t n = 0;
  if (in >> n) return n;
  return 65530;
}

void* map_anonymous(std::size_t length) {
  void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return p;
}

}  // namespace

StackAllocator::StackAllocator(spdlog::logger& log) : log_(log) {}

StackAllocator::~StackAllocator() {
  for (const Region& r : regions_) munmap(r.address, r.length);
}

std::size_t StackAllocator::page_size() noexcept {
  static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

std::size_t StackAllocator::round_size(std::size_t requested) noexcept {
  std::size_t page = page_size();
  std::size_t size = requested < kMinimumSize ? kMinimumSize : requested;
  return (size + page - 1) / page * page;
}

Stack StackAllocator::allocate(std::size_t usable) {
  usable = round_size(usable);
  std::lock_guard lock(mutex_);
  in_use_.fetch_add(1, std::memory_order_relaxed);
  auto it = free_.find(usable);
  if (it != free_.end() && !it->second.empty()) {
    Stack s = it->second.back();
    it->second.pop_back();
    cached_.fetch_sub(1, std::memory_order_relaxed);
    if (!s.guarded) *static_cast<std::uint64_t*>(s.base) = kCanary;
    return s;
  }
  try {
    if (mode_ == GuardMode::unknown) choose_guard_mode();
    if (mode_ == GuardMode::madvise) return carve_from_slab(usable, true);
    if (mode_ == GuardMode::mprotect && mprotect_budget_ > 0) {
      --mprotect_budget_;
      return map_single(usable);
    }
    mode_ = GuardMode::none;
    return carve_from_slab(usable, false);
  } catch (...) {
    in_use_.fetch_sub(1, std::memory_order_relaxed);
    throw;
  }
}

Stack StackAllocator::carve_from_slab(std::size_t usable, bool guard) {
  const std::size_t page = page_size();
  const std::size_t unit = usable + page;
  auto& [next, left] = slab_[usable];
  if (left == 0) {
    std::size_t units = kSlabBytes / unit > 0 ? kSlabBytes / unit : 1;
    next = static_cast<char*>(map_anonymous(units * unit));
    left = units;
    regions_.push_back({next, units * unit});
  }
  char* unit_start = next;
  next += unit;
  --left;
  Stack s{unit_start + page, usable, false};
  if (guard && madvise(unit_start, page, MADV_GUARD_INSTALL) == 0) {
    s.guarded = true;
  } else {
    *static_cast<std::uint64_t*>(s.base) = kCanary;
    note_unguarded();
  }
  return s;
}

void StackAllocator::choose_guard_mode() {
  // PRESTO_STACK_GUARD forces a mode (for tests and diagnosis): madvise, mprotect or canary.
  if (const char* forced = std::getenv("PRESTO_STACK_GUARD")) {
    std::string mode = forced;
    if (mode == "mprotect") {
      mode_ = GuardMode::mprotect;
      std::size_t maps = max_map_count();
      mprotect_budget_ = maps > 8192 ? (maps - 8192) / 2 : 0;
      return;
    }
    if (mode == "canary") {
      mode_ = GuardMode::none;
      warned_unguarded_ = true;  // asked for: nothing to warn about
      return;
    }
    if (mode != "madvise") log_.warn("PRESTO_STACK_GUARD='{}' is not madvise, mprotect or canary: ignored", mode);
  }
  const std::size_t page = page_size();
  void* probe = map_anonymous(2 * page);
  bool lightweight = madvise(probe, page, MADV_GUARD_INSTALL) == 0;
  munmap(probe, 2 * page);
  if (lightweight) {
    mode_ = GuardMode::madvise;
    return;
  }
  mode_ = GuardMode::mprotect;
  std::size_t maps = max_map_count();
  mprotect_budget_ = maps > 8192 ? (maps - 8192) / 2 : 0;
}

Stack StackAllocator::map_single(std::size_t usable) {
  const std::size_t page = page_size();
  char* p = static_cast<char*>(map_anonymous(usable + page));
  if (mprotect(p, page, PROT_NONE) != 0) {
    munmap(p, usable + page);
    throw std::bad_alloc();
  }
  regions_.push_back({p, usable + page});
  return Stack{p + page, usable, true};
}

void StackAllocator::note_unguarded() {
  unguarded_.fetch_add(1, std::memory_order_relaxed);
  if (warned_unguarded_) return;
  warned_unguarded_ = true;
  log_.warn(
      "stack guard pages exhausted (vm.max_map_count={}); further stacks are protected by a "
      "canary check instead. Raise vm.max_map_count, or use Linux 6.13+, to guard every stack.",
      max_map_count());
}

void StackAllocator::deallocate(Stack stack) noexcept {
  if (stack.empty()) return;
  std::lock_guard lock(mutex_);
  in_use_.fetch_sub(1, std::memory_order_relaxed);
  std::size_t cached = cached_.fetch_add(1, std::memory_order_relaxed);
  if (cached >= kWarmStacks) madvise(stack.base, stack.size, MADV_DONTNEED);
  try {
    free_[stack.size].push_back(stack);
  } catch (...) {
    cached_.fetch_sub(1, std::memory_order_relaxed);  // dropped: unmapped with its region later
  }
}

}  // namespace presto::detail
