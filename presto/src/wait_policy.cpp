#include <presto/wait_policy.hpp>

#include <limits>
#include <thread>

#include <presto/detail/cpu.hpp>
#include <presto/errors.hpp>
#include <presto/processor.hpp>
#include <presto/runtime.hpp>
#include <presto/this_thread.hpp>

#include "dispatch.hpp"

namespace presto {

const char* to_string(WaitMode mode) noexcept {
  switch (mode) {
    case WaitMode::inherit: return "inherit";
    case WaitMode::block: return "block";
    case WaitMode::spin: return "spin";
    case WaitMode::spin_then_block: return "spin-then-block";
    case WaitMode::competitive: return "competitive";
  }
  return "?";
}

namespace detail {

namespace {
std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

void WaitState::set_policy(WaitPolicy p, const std::string& object) {
  if (p.budget.count() < 0) {
    throw UsageError(object + ": wait policy with a negative budget (" + std::to_string(p.budget.count()) + " ns)");
  }
  if (p.mode > WaitMode::competitive) throw UsageError(object + ": unknown wait mode");
  policy_ = p;
}

WaitPolicy WaitState::resolve() const noexcept {
  if (policy_.mode != WaitMode::inherit) return policy_;
  if (const Runtime* rt = Runtime::current()) return rt->wait_policy();
  return WaitPolicy{.mode = WaitMode::block};
}

std::int64_t WaitState::budget_ns(const WaitPolicy& p) const noexcept {
  switch (p.mode) {
    case WaitMode::spin: return std::numeric_limits<std::int64_t>::max();
    case WaitMode::spin_then_block: return p.budget.count();
    case WaitMode::competitive: return block_cost_ns_.load(std::memory_order_relaxed);
    default: return 0;
  }
}

void WaitState::pause() noexcept { relax_cpu(); }

// On a processor: a yield, and a nap of 50 us every 16th time instead. In the spin mode, also a
// short nap after a yield that ran at most one other thread here though more were waiting
// here. A pool that serves the newest thread first (LifoPool, LocalQueuePool's LIFO order)
// passes the processor between two spinners and never reaches the holder below them by
// yields: it ran only on their long naps, and 6 threads on 1 processor took 3,000 times as
// long under these two pools as under the others. The short nap takes the spinner off the
// queue until the threads below have had the processor. A pool that cycles runs every thread
// waiting here before the yielder's turn comes again, unless another processor takes some
// meanwhile: short naps are rare there. (The other modes' polls end with their budget, and a
// short nap cost them 2-3% of a Barrier's phase, 4 threads on 2 processors: none for them.)
void WaitState::give_way(unsigned times, bool unbounded) {
  if (Runtime::current() == nullptr) {
    std::this_thread::yield();
    return;
  }
  if (times % 16 == 0) {
    this_thread::sleep_for(std::chrono::microseconds(50));
    return;
  }
  Processor* const p = unbounded ? Processor::current() : nullptr;
  const std::size_t waiting = p != nullptr ? Dispatch::ready_here(*p) : 0;
  const std::uint64_t before = waiting != 0 ? p->dispatches() : 0;
  this_thread::yield();
  if (waiting == 0) return;
  // The yield's dispatches here: the threads it ran and this one's return (none if it ran
  // nobody). If it moved this thread to another processor, others ran.
  const std::uint64_t ran = p->dispatches() - before;
  if (Processor::current() == p && ran <= 2 && ran <= waiting && Dispatch::has_work_for(*p)) {
    this_thread::sleep_for(std::chrono::microseconds(5));
  }
}

void WaitState::stamp() noexcept { wake_stamp_ns_.store(now_ns(), std::memory_order_relaxed); }

void WaitState::measure() noexcept {
  const std::int64_t stamp = wake_stamp_ns_.load(std::memory_order_relaxed);
  const std::int64_t sample = now_ns() - stamp;
  if (stamp == 0 || sample <= 0 || sample > 1'000'000'000) return;  // no stamp yet, or a stale one
  const std::int64_t old = block_cost_ns_.load(std::memory_order_relaxed);
  block_cost_ns_.store(old == 0 ? sample : old + (sample - old) / 8, std::memory_order_relaxed);
}

}  // namespace detail
}  // namespace presto
