#pragma once
// parallel_for: runs body(i) once for every i in [begin, end), on presto threads of the
// current runtime, and returns when all have run.
//
//   presto::parallel_for(0, n, [&](int i) { c[i] = a[i] * b[i]; });             // guided
//   presto::parallel_for(0u, rows, multiply_row, presto::Schedule::chunked(4));
//
// The team is the calling thread plus one forked thread per further processor of the runtime
// (never more threads than indices), counted after the runtime's allocation policy had its
// say (Runtime::begin_parallel_region; presto/allocation_policy.hpp). How the indices are spread over the team is the
// schedule (Severance's "iteration scheduling"; ../shared/research/seed-001-asat.md §3):
//   static_blocks() - each thread takes one contiguous block at the start, the first
//                     n % P threads one index more (1000 over 3: 334, 333, 333). No shared
//                     counter, but a slow or descheduled thread delays the whole loop.
//   chunked(k)      - chunk self-scheduling: threads take k indices at a time from a shared
//                     counter until none are left.
//   self()          - pure self-scheduling: chunked(1). Ideal balance, one claim per index.
//   guided(k)       - guided self-scheduling, GSS(k) (Polychronopoulos and Kuck): a thread
//                     takes max(k, ceil(R / P)) of the R indices remaining: large chunks
//                     first, shrinking as the loop drains. The default, with k = 1.
// A shared counter is claimed with an atomic compare-and-swap, the lock-free form of the
// thesis's critical section.
//
// Contracts:
// - Callable from a presto thread only (UsageError otherwise, naming the caller). The body
//   runs concurrently on several threads and processors, so what it shares it synchronizes.
//   It may block (on monitors, locks...) like any presto thread.
// - I is any integral type but bool, signed or unsigned; begin >= end is an empty loop.
// - If body throws, no thread starts another index after it sees the failure (indices
//   already running finish); parallel_for then waits for the whole team and rethrows the first
//   exception. The indices that never ran are unspecified: the loop is cancelled, not
//   completed. Without an exception every index runs exactly once.

#include <algorithm>
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <presto/runtime.hpp>

namespace presto {

class Schedule {
 public:
  enum class Kind : unsigned char { static_blocks, chunked, self, guided };

  static constexpr Schedule static_blocks() noexcept { return {Kind::static_blocks, 0}; }
  // UsageError if k is 0.
  static Schedule chunked(std::size_t k);
  static constexpr Schedule self() noexcept { return {Kind::self, 1}; }
  // GSS(k): chunks of max(k, ceil(remaining / threads)). UsageError if k is 0.
  static Schedule guided(std::size_t k = 1);

  Kind kind() const noexcept { return kind_; }
  // The chunk size (chunked), the smallest chunk (guided), 1 (self), 0 (static_blocks).
  std::size_t chunk() const noexcept { return chunk_; }
  // "static", "chunked(4)", "self", "guided(1)".
  std::string describe() const;

 private:
  constexpr Schedule(Kind kind, std::size_t chunk) noexcept : kind_(kind), chunk_(chunk) {}

  Kind kind_;
  std::size_t chunk_;
};

// LoopClaims: the iterations [0, n) of one loop, handed to `threads` team members by a
// schedule, and the loop's first exception: the dispenser parallel_for runs on, public so
// that another loop construct can be layered on the same schedules. Shared by the team;
// every method is thread-safe but rethrow_if_failed, called once the team has finished.
class LoopClaims {
 public:
  LoopClaims(std::uint64_t n, std::size_t threads, Schedule schedule) noexcept
      : n_(n), threads_(threads), schedule_(schedule) {}

  // The next iterations [first, last) for team member `member` (0 .. threads - 1), which has
  // claimed `claimed` times before; false once none are left or the loop was cancelled.
  bool claim(std::size_t member, std::size_t claimed, std::uint64_t& first, std::uint64_t& last) noexcept;
  bool cancelled() const noexcept { return failed_.load(std::memory_order_relaxed); }
  // Records e if it is the loop's first exception, and cancels the loop.
  void fail(std::exception_ptr e) noexcept;
  // After the whole team has finished: rethrows the first exception, if any.
  void rethrow_if_failed();

 private:
  std::uint64_t n_;
  std::size_t threads_;
  Schedule schedule_;
  alignas(64) std::atomic<std::uint64_t> next_{0};
  std::atomic<bool> failed_{false};
  std::atomic<bool> recorded_{false};
  std::exception_ptr exception_;
};

namespace detail {

template <class I, class Body>
void run_team_member(LoopClaims& claims, std::size_t member, I begin, Body& body) noexcept {
  using U = std::make_unsigned_t<I>;
  try {
    std::uint64_t first = 0;
    std::uint64_t last = 0;
    for (std::size_t claimed = 0; claims.claim(member, claimed, first, last); ++claimed) {
      for (std::uint64_t k = first; k < last && !claims.cancelled(); ++k) {
        // Unsigned wrap-around, then conversion back: exact for every index in [begin, end).
        std::invoke(body, static_cast<I>(static_cast<U>(static_cast<U>(begin) + static_cast<U>(k))));
      }
    }
  } catch (...) {
    claims.fail(std::current_exception());
  }
}

}  // namespace detail

template <std::integral I, class Body>
  requires(!std::same_as<I, bool> && std::invocable<Body&, I>)
void parallel_for(I begin, I end, Body&& body, Schedule schedule = Schedule::guided()) {
  using U = std::make_unsigned_t<I>;
  Runtime& rt = detail::current_runtime("presto::parallel_for");
  if (!(begin < end)) return;
  rt.begin_parallel_region();  // the allocation policy's safe point: the team is sized after it
  const auto n = static_cast<std::uint64_t>(static_cast<U>(static_cast<U>(end) - static_cast<U>(begin)));
  const std::size_t team = static_cast<std::size_t>(std::min<std::uint64_t>(rt.processors(), n));
  LoopClaims claims(n, team, schedule);
  std::vector<JoinHandle<void>> helpers;
  try {
    helpers.reserve(team - 1);
    for (std::size_t m = 1; m < team; ++m) {
      helpers.push_back(rt.fork(detail::run_team_member<I, std::remove_reference_t<Body>>, std::ref(claims), m,
                                begin, std::ref(body)));
    }
  } catch (...) {  // no memory for another thread: cancel, and wait for those already forked
    claims.fail(std::current_exception());
  }
  detail::run_team_member(claims, 0, begin, body);
  for (auto& h : helpers) h.join();  // members catch everything: join does not throw
  claims.rethrow_if_failed();
}

}  // namespace presto
