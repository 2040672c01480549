#pragma once
// ThreadCache: the free lists of the control blocks and default-size stacks of finished
// threads, kept where RuntimeConfig::free_lists says: in each processor's ProcessorState,
// touched only by that processor and without a lock (per_processor), or in one list of each
// for the whole runtime under `lock` (central). Anderson, Lazowska and Levy's free-list
// alternatives; docs/design/runtime.md, "Free lists".

#include <atomic>
#include <cstddef>
#include <vector>

#include <presto/detail/execution_context.hpp>
#include <presto/runtime.hpp>
#include <presto/spinlock.hpp>

namespace presto::detail {

struct ProcessorState;
class StackAllocator;

class ThreadCache {
 public:
  // Per-processor lists hold up to `blocks` control blocks and `stacks` stacks each; the
  // central lists `processors` times as many.
  ThreadCache(FreeLists policy, std::size_t blocks, std::size_t stacks, std::size_t processors);
  ThreadCache(const ThreadCache&) = delete;
  ThreadCache& operator=(const ThreadCache&) = delete;

  // `ps` is the calling processor's state. take_* return nullptr / false when the list is
  // empty; keep_* return false when it is full (the caller frees the object).
  Thread* take_block(ProcessorState& ps) noexcept;
  bool keep_block(ProcessorState& ps, Thread& t) noexcept;
  bool take_stack(ProcessorState& ps, Stack& s) noexcept;
  bool keep_stack(ProcessorState& ps, const Stack& s) noexcept;

  // Stacks in the central list (the per-processor ones are counted in ProcessorState).
  std::size_t central_stacks() const noexcept { return central_stacks_.load(std::memory_order_relaxed); }
  // Frees everything the central lists hold (the runtime is being destroyed).
  void clear(StackAllocator& allocator) noexcept;

  // Runtime::free_list_lock(): guards the central lists, and the ready queue of a pool that
  // shares it (SingleLockPool).
  Spinlock lock;

 private:
  const FreeLists policy_;
  const std::size_t block_limit_;  // of the list in use: per processor, or all of them
  const std::size_t stack_limit_;
  std::vector<Thread*> blocks_;    // central, under lock
  std::vector<Stack> stacks_;      // central, under lock
  std::atomic<std::size_t> central_stacks_{0};
};

}  // namespace presto::detail
