#pragma once
// ThreadCache: the free lists of the control blocks and default-size stacks of finished
// threads, kept where RuntimeConfig::free_lists says: in each processor's own FreeList,
// touched only by that processor and without a lock (per_processor), or in one FreeList for
// the whole runtime under `lock` (central). Anderson, Lazowska and Levy's free-list
// alternatives; docs/design/runtime.md §8, "Free lists". Inline: the per-processor path is
// the fork and finish hot path, one predictable branch longer than a bare vector.
//
// Per processor, a list holds at most 2 x kBatch control blocks; beyond, its oldest kBatch go
// to a depot shared by all processors, and an empty list takes kBatch back from it, one
// lock per kBatch blocks. Without the depot, a program that forks on one processor and
// recycles on another (a forker whose joins migrate it) allocated on the one while the
// other's list filled up: Figure 3's 40,000 threads on 2 processors allocated 10-30% of their
// blocks afresh in every run.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <new>
#include <vector>

#include <presto/detail/execution_context.hpp>
#include <presto/detail/raw_spinlock.hpp>
#include <presto/runtime.hpp>
#include <presto/spinlock.hpp>
#include <presto/thread.hpp>

#include "stack_allocator.hpp"

namespace presto::detail {

// One set of free lists: a processor's (in its ProcessorState) or the runtime's central one.
struct FreeList {
  std::vector<Thread*> blocks;
  std::vector<Stack> stacks;                   // capacity reserved by ThreadCache::prepare
  std::atomic<std::size_t> cached_stacks{0};  // stacks.size(), for Runtime::stats()
};

class ThreadCache {
 public:
  // Control blocks moved between a processor's list and the depot at a time.
  static constexpr std::size_t kBatch = 128;

  // Up to `blocks` x `processors` control blocks are kept: per processor, at most `blocks`
  // and at most 2 x kBatch of them in its own list, the rest in the depot; or all in the
  // central list. Stacks: `stacks` per processor, or `stacks` x `processors` centrally.
  ThreadCache(FreeLists policy, std::size_t blocks, std::size_t stacks, std::size_t processors)
      : policy_(policy),
        block_limit_(policy == FreeLists::central ? blocks * processors : std::min(blocks, 2 * kBatch)),
        depot_limit_(policy == FreeLists::central ? 0 : (blocks - block_limit_) * processors),
        stack_limit_(policy == FreeLists::central ? stacks * processors : stacks) {
    if (policy_ == FreeLists::central) central_.stacks.reserve(stack_limit_);
  }
  ThreadCache(const ThreadCache&) = delete;
  ThreadCache& operator=(const ThreadCache&) = delete;

  // Readies a processor's list (reserves room for its stacks: keeping one never allocates).
  // A processor added while the runtime lives needs it too; one removed, clear().
  void prepare(FreeList& local) const { local.stacks.reserve(stack_limit_); }

  // `local` is the calling processor's list. take_* return nullptr / false when the list in
  // use is empty; keep_* return false when it is full (the caller frees the object). Under
  // FreeLists::per_processor each is the bare list operation after one branch.
  Thread* take_block(FreeList& local) noexcept {
    if (policy_ == FreeLists::central) [[unlikely]] return central_take_block();
    // (The count is a hint read without the lock: a fork that finds both empty allocates
    // without taking the depot's lock, as every fork of a first burst does.)
    if (local.blocks.empty() && depot_size_.load(std::memory_order_relaxed) != 0) [[unlikely]] refill_blocks(local);
    return pop_block(local);
  }
  bool keep_block(FreeList& local, Thread& t) noexcept {
    if (policy_ == FreeLists::central) [[unlikely]] return central_keep_block(t);
    if (local.blocks.size() >= block_limit_ && depot_limit_ != 0) [[unlikely]] spill_blocks(local);
    return push_block(local, t);
  }
  bool take_stack(FreeList& local, Stack& s) noexcept {
    if (policy_ == FreeLists::central) [[unlikely]] return central_take_stack(s);
    return pop_stack(local, s);
  }
  bool keep_stack(FreeList& local, const Stack& s) noexcept {
    if (policy_ == FreeLists::central) [[unlikely]] return central_keep_stack(s);
    return push_stack(local, s);
  }

  // Stacks in the central list (the per-processor ones are counted in their FreeLists).
  std::size_t central_stacks() const noexcept { return central_.cached_stacks.load(std::memory_order_relaxed); }

  // Frees everything `list` holds (its processor retires, or the runtime is being destroyed).
  static void clear(FreeList& list, StackAllocator& allocator) noexcept {
    for (Thread* t : list.blocks) delete t;
    list.blocks.clear();
    for (const Stack& s : list.stacks) allocator.deallocate(s);
    list.stacks.clear();
    list.cached_stacks.store(0, std::memory_order_relaxed);
  }
  // Frees the shared lists: the central ones and the depot (the runtime is being destroyed).
  void clear_shared(StackAllocator& allocator) noexcept {
    clear(central_, allocator);
    for (Thread* t : depot_) delete t;
    depot_.clear();
    depot_size_.store(0, std::memory_order_relaxed);
  }

  // Runtime::free_list_lock(): guards the central lists, and the ready queue of a pool that
  // shares it (SingleLockPool).
  Spinlock lock;

 private:
  // The depot's paths, out of line: once per kBatch blocks at most.
  [[gnu::noinline]] void refill_blocks(FreeList& local) noexcept {
    depot_lock_.lock();
    const std::size_t n = std::min(kBatch, depot_.size());
    try {  // a list that cannot grow takes nothing
      local.blocks.insert(local.blocks.end(), depot_.end() - static_cast<std::ptrdiff_t>(n), depot_.end());
      depot_.resize(depot_.size() - n);
      depot_size_.store(depot_.size(), std::memory_order_relaxed);
    } catch (const std::bad_alloc&) {  // nothing taken: the caller allocates a block
    }
    depot_lock_.unlock();
  }
  // Moves local's oldest kBatch blocks (the coldest) to the depot; those it has no room for
  // are freed.
  [[gnu::noinline]] void spill_blocks(FreeList& local) noexcept {
    const auto batch_end = local.blocks.begin() + static_cast<std::ptrdiff_t>(kBatch);
    std::size_t moved = 0;
    depot_lock_.lock();
    try {
      moved = std::min(kBatch, depot_limit_ - std::min(depot_limit_, depot_.size()));
      depot_.insert(depot_.end(), local.blocks.begin(), local.blocks.begin() + static_cast<std::ptrdiff_t>(moved));
      depot_size_.store(depot_.size(), std::memory_order_relaxed);
    } catch (const std::bad_alloc&) {  // no memory to grow the depot: free the batch instead
      moved = 0;
    }
    depot_lock_.unlock();
    for (auto it = local.blocks.begin() + static_cast<std::ptrdiff_t>(moved); it != batch_end; ++it) delete *it;
    local.blocks.erase(local.blocks.begin(), batch_end);
  }

  // The central paths, out of line so that the per-processor path stays small.
  [[gnu::noinline]] Thread* central_take_block() noexcept {
    std::lock_guard guard(lock);
    return pop_block(central_);
  }
  [[gnu::noinline]] bool central_keep_block(Thread& t) noexcept {
    std::lock_guard guard(lock);
    return push_block(central_, t);
  }
  [[gnu::noinline]] bool central_take_stack(Stack& s) noexcept {
    std::lock_guard guard(lock);
    return pop_stack(central_, s);
  }
  [[gnu::noinline]] bool central_keep_stack(const Stack& s) noexcept {
    std::lock_guard guard(lock);
    return push_stack(central_, s);
  }
  static Thread* pop_block(FreeList& list) noexcept {
    if (list.blocks.empty()) return nullptr;
    Thread* t = list.blocks.back();
    list.blocks.pop_back();
    return t;
  }
  bool push_block(FreeList& list, Thread& t) const noexcept {
    if (list.blocks.size() >= block_limit_) return false;
    try {
      list.blocks.push_back(&t);
    } catch (const std::bad_alloc&) {  // no memory to grow the list: free the block instead
      return false;
    }
    return true;
  }
  static bool pop_stack(FreeList& list, Stack& s) noexcept {
    if (list.stacks.empty()) return false;
    s = list.stacks.back();
    list.stacks.pop_back();
    list.cached_stacks.store(list.stacks.size(), std::memory_order_relaxed);
    return true;
  }
  bool push_stack(FreeList& list, const Stack& s) const noexcept {
    // Never allocates: a list holds what prepare() reserved (an unprepared one keeps nothing).
    if (list.stacks.size() >= stack_limit_ || list.stacks.size() == list.stacks.capacity()) return false;
    list.stacks.push_back(s);
    list.cached_stacks.store(list.stacks.size(), std::memory_order_relaxed);
    return true;
  }

  const FreeLists policy_;
  const std::size_t block_limit_;  // of the list in use: a processor's, or the central one
  const std::size_t depot_limit_;  // 0 under FreeLists::central
  const std::size_t stack_limit_;
  FreeList central_;               // FreeLists::central only; under lock
  RawSpinlock depot_lock_;
  std::vector<Thread*> depot_;     // FreeLists::per_processor's shared blocks; under depot_lock_
  std::atomic<std::size_t> depot_size_{0};  // depot_.size(), written under depot_lock_
};

}  // namespace presto::detail
