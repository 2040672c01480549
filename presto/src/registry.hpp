#pragma once
// Registry: the live threads started on one processor (or from OS threads, or kept after a
// faulty end), so the runtime can report every blocked thread, abandon the survivors of a
// failed run, and let debuggers list threads, without a lock on the thread-start path.
//
// A registered thread holds a slot: an atomic pointer in one of the registry's chunks, which
// live as long as the registry.
//   - Adding is done by one owner at a time: a processor on its own OS thread (add), or anyone
//     under the registry's lock for the shared registries (add_shared). It takes a slot the
//     owner emptied itself; when there is none, it sweeps the chunks for the slots others
//     emptied, and adds a chunk when fewer than a quarter of the slots are free.
//   - Anyone may remove, without a lock: the slot is emptied, and the owner's own removals
//     (by_owner) can be reused at once.
//   - Readers (for_each: reports, visit_threads, abandonment; rare) announce themselves and
//     pay a heavy fence; a remover pays a light fence, so it either is not seen by a reader or
//     sees the reader and waits for it to finish. A removed thread may then be reused or
//     destroyed. (The lock this replaced was taken twice a thread: two locked exchanges, about
//     11 ns of a 76 ns fork+join.)

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

#include <presto/detail/preempt_count.hpp>
#include <presto/detail/raw_spinlock.hpp>

#include "asymmetric_fence.hpp"

namespace presto {
class Thread;
}

namespace presto::detail {

class Registry {
 public:
  Registry() = default;
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // By the registry's single owner. std::bad_alloc (a new chunk) leaves t unregistered.
  void add(Thread& t);
  // By anyone, for the registries without a single owner.
  void add_shared(Thread& t);
  // By anyone; `by_owner` only on the owner's OS thread (for a shared registry: never).
  void remove(Thread& t, bool by_owner) noexcept;
  // The number of registered threads (a snapshot while threads start and end).
  std::size_t size() const noexcept;
  // Calls f(Thread&) for each registered thread. f must not block, and must not remove a
  // thread of a registry (removers wait for f's registry walk to end).
  template <class F>
  void for_each(F&& f) {
    preempt_disable();  // a remover on this processor would wait for this walk forever
    readers_.fetch_add(1, std::memory_order_relaxed);
    heavy_fence();  // pairs with remove()'s light fence
    for_each_slot([&](Slot& slot) {
      if (Thread* t = slot.load(std::memory_order_acquire)) f(*t);
    });
    readers_.fetch_sub(1, std::memory_order_release);
    preempt_enable_quietly();
  }

 private:
  using Slot = std::atomic<Thread*>;
  struct Chunk {
    explicit Chunk(std::size_t n) : size(n), slots(new Slot[n]()) {}
    const std::size_t size;
    const std::unique_ptr<Slot[]> slots;
    std::atomic<Chunk*> next{nullptr};
  };

  // Calls g(Slot&) for every slot of every chunk linked when it gets there.
  template <class G>
  void for_each_slot(G&& g) const {
    for (Chunk* c = head_.load(std::memory_order_acquire); c != nullptr; c = c->next.load(std::memory_order_acquire)) {
      for (std::size_t i = 0; i < c->size; ++i) g(c->slots[i]);
    }
  }
  void refill();
  [[gnu::cold]] void wait_for_readers() const noexcept;

  std::atomic<Chunk*> head_{nullptr};  // read by readers and the debugger
  Chunk* tail_ = nullptr;              // the owner's
  std::size_t capacity_ = 0;           // the owner's: slots in all chunks
  std::vector<Slot*> free_;            // the owner's: empty slots; capacity_ reserved
  // Read by every remover, on other processors too: a line of its own, apart from the owner's
  // fields above, which each add writes (sharing theirs cost a processor that ends threads
  // forked on another two transfers of the line a thread).
  alignas(64) std::atomic<unsigned> readers_{0};
  RawSpinlock shared_lock_;  // add_shared's
};

}  // namespace presto::detail
