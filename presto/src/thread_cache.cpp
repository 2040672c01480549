#include "thread_cache.hpp"

#include <mutex>
#include <new>

#include "runtime_impl.hpp"
#include "stack_allocator.hpp"

namespace presto::detail {

ThreadCache::ThreadCache(FreeLists policy, std::size_t blocks, std::size_t stacks, std::size_t processors)
    : policy_(policy),
      block_limit_(policy == FreeLists::central ? blocks * processors : blocks),
      stack_limit_(policy == FreeLists::central ? stacks * processors : stacks) {
  if (policy_ == FreeLists::central) stacks_.reserve(stack_limit_);
}

Thread* ThreadCache::take_block(ProcessorState& ps) noexcept {
  std::unique_lock guard(lock, std::defer_lock);
  std::vector<Thread*>* list = &ps.threads;
  if (policy_ == FreeLists::central) {
    guard.lock();
    list = &blocks_;
  }
  if (list->empty()) return nullptr;
  Thread* t = list->back();
  list->pop_back();
  return t;
}

bool ThreadCache::keep_block(ProcessorState& ps, Thread& t) noexcept {
  std::unique_lock guard(lock, std::defer_lock);
  std::vector<Thread*>* list = &ps.threads;
  if (policy_ == FreeLists::central) {
    guard.lock();
    list = &blocks_;
  }
  if (list->size() >= block_limit_) return false;
  try {
    list->push_back(&t);
  } catch (const std::bad_alloc&) {  // no memory to grow the list: free the block instead
    return false;
  }
  return true;
}

bool ThreadCache::take_stack(ProcessorState& ps, Stack& s) noexcept {
  if (policy_ == FreeLists::per_processor) {
    if (ps.stacks.empty()) return false;
    s = ps.stacks.back();
    ps.stacks.pop_back();
    ps.cached_stacks.fetch_sub(1, std::memory_order_relaxed);
    return true;
  }
  std::lock_guard guard(lock);
  if (stacks_.empty()) return false;
  s = stacks_.back();
  stacks_.pop_back();
  central_stacks_.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

bool ThreadCache::keep_stack(ProcessorState& ps, const Stack& s) noexcept {
  // Both lists were reserved at their limit: push_back never allocates.
  if (policy_ == FreeLists::per_processor) {
    if (ps.stacks.size() >= stack_limit_) return false;
    ps.stacks.push_back(s);
    ps.cached_stacks.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  std::lock_guard guard(lock);
  if (stacks_.size() >= stack_limit_) return false;
  stacks_.push_back(s);
  central_stacks_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void ThreadCache::clear(StackAllocator& allocator) noexcept {
  for (Thread* t : blocks_) delete t;
  blocks_.clear();
  for (const Stack& s : stacks_) allocator.deallocate(s);
  stacks_.clear();
  central_stacks_.store(0, std::memory_order_relaxed);
}

}  // namespace presto::detail
