#include <presto/wait_policy.hpp>

#include <limits>
#include <thread>

#include <presto/detail/cpu.hpp>
#include <presto/errors.hpp>
#include <presto/runtime.hpp>
#include <presto/this_thread.hpp>

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

void WaitState::give_way(unsigned times) {
  if (Runtime::current() == nullptr) {
    std::this_thread::yield();
  } else if (times % 16 == 0) {
    this_thread::sleep_for(std::chrono::microseconds(50));
  } else {
    this_thread::yield();
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
