#pragma once
// Asymmetric fences. light_fence() is executed on the hot side (a processor entering its
// gate, millions of times a second) and costs a compiler barrier; heavy_fence() is executed on
// the rare side (a replacer, a few times a run) and makes every thread of the process execute a
// full memory barrier (Linux membarrier, ~0.4 us). A light/heavy pair orders a store before a
// later load on each side exactly as two seq_cst fences would. Where membarrier is missing, or
// under ThreadSanitizer (which does not model it), both sides use seq_cst fences.

#include <atomic>

#include "sanitizers.hpp"

namespace presto::detail {

// Decided once per process (the kernel facility is process-wide).
bool asymmetric_fences() noexcept;
// Hidden: the library's own, read in place rather than through the GOT on every gate entry.
extern bool g_asymmetric_fences [[gnu::visibility("hidden")]];

#if PRESTO_TSAN
// ThreadSanitizer does not model standalone fences (and GCC refuses them under it): a seq_cst
// read-modify-write of one shared word gives the same store-load ordering between the threads
// that execute it, in a form TSan understands.
extern std::atomic<unsigned> g_fence_word;
inline void full_fence() noexcept { g_fence_word.fetch_add(0, std::memory_order_seq_cst); }
#else
inline void full_fence() noexcept { std::atomic_thread_fence(std::memory_order_seq_cst); }
#endif

[[gnu::always_inline]] inline void light_fence() noexcept {
  if (PRESTO_TSAN || !g_asymmetric_fences) [[unlikely]] {  // laid out off the hot path
    full_fence();
  } else {
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
}

void heavy_fence() noexcept;

}  // namespace presto::detail
