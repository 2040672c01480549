#include <presto/parallel_for.hpp>

#include <algorithm>

#include <presto/errors.hpp>

namespace presto {

Schedule Schedule::chunked(std::size_t k) {
  if (k == 0) throw UsageError("Schedule::chunked(0): a chunk holds at least one index");
  return {Kind::chunked, k};
}

Schedule Schedule::guided(std::size_t k) {
  if (k == 0) throw UsageError("Schedule::guided(0): the smallest chunk holds at least one index");
  return {Kind::guided, k};
}

std::string Schedule::describe() const {
  switch (kind_) {
    case Kind::static_blocks: return "static";
    case Kind::chunked: return "chunked(" + std::to_string(chunk_) + ")";
    case Kind::self: return "self";
    case Kind::guided: return "guided(" + std::to_string(chunk_) + ")";
  }
  return "?";
}

bool LoopClaims::claim(std::size_t member, std::size_t claimed, std::uint64_t& first, std::uint64_t& last) noexcept {
  if (cancelled()) return false;
  if (schedule_.kind() == Schedule::Kind::static_blocks) {
    if (claimed != 0) return false;
    const std::uint64_t q = n_ / threads_;
    const std::uint64_t r = n_ % threads_;
    first = member * q + std::min<std::uint64_t>(member, r);
    last = first + q + (member < r ? 1 : 0);
    return first < last;
  }
  if (schedule_.kind() != Schedule::Kind::guided) {  // chunked, self: a fixed chunk
    const std::uint64_t k = schedule_.chunk();
    // Bounded before the add, so the counter cannot wrap however many claims fail.
    std::uint64_t start = next_.load(std::memory_order_relaxed);
    do {
      if (start >= n_) return false;
    } while (!next_.compare_exchange_weak(start, start + std::min(k, n_ - start), std::memory_order_relaxed));
    first = start;
    last = start + std::min(k, n_ - start);
    return true;
  }
  std::uint64_t start = next_.load(std::memory_order_relaxed);
  std::uint64_t size = 0;
  do {
    if (start >= n_) return false;
    const std::uint64_t remaining = n_ - start;
    size = std::min(remaining, std::max<std::uint64_t>(schedule_.chunk(), (remaining + threads_ - 1) / threads_));
  } while (!next_.compare_exchange_weak(start, start + size, std::memory_order_relaxed));
  first = start;
  last = start + size;
  return true;
}

void LoopClaims::fail(std::exception_ptr e) noexcept {
  failed_.store(true, std::memory_order_relaxed);
  if (!recorded_.exchange(true, std::memory_order_acq_rel)) exception_ = std::move(e);
}

void LoopClaims::rethrow_if_failed() {
  if (exception_) std::rethrow_exception(exception_);
}

}  // namespace presto
