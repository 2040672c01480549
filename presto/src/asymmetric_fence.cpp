#include "asymmetric_fence.hpp"

#include <mutex>

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace presto::detail {

bool g_asymmetric_fences = false;
#if PRESTO_TSAN
std::atomic<unsigned> g_fence_word{0};
#endif

bool asymmetric_fences() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    if (PRESTO_TSAN) return;
    long supported = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (supported < 0 || (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
    g_asymmetric_fences = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  });
  return g_asymmetric_fences;
}

void heavy_fence() noexcept {
  if (g_asymmetric_fences && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
  full_fence();
}

}  // namespace presto::detail
