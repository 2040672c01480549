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
extern bool g_asymmetric_fences;

inline void light_fence() noexcept {
  if (PRESTO_TSAN || !g_asymmetric_fences) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  } else {
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
}

void heavy_fence() noexcept;

}  // namespace presto::detail
