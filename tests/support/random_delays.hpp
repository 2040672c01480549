#pragma once
// Random delays at the library's race points (presto/detail/race_point.hpp): a stress net for
// races no one has named yet. Where RaceWindow holds one arrival at one point until a known
// step is taken, this hook spins a random 0 to 20 us at about one point in `one_in`, on
// whichever OS thread gets there, so that the interleavings of steals, withdrawals, drains and
// retirements a plain run meets once in thousands come round more often.
//
// Two users: the races suite's delays test installs them for its own cases (its Delays guard), and
// any test executable runs every one of its cases under them when PRESTO_TEST_DELAYS=N is set
// (catch_main.cpp; one point in N, in a library built with -Drace_points=true). A test that
// installs a hook of its own puts back the session's when it ends (restore_session_hook).
// A net, not a replay: a failure prints the seed of the delays (PRESTO_SEED), which replays
// them only roughly (the OS decides the rest).

#include <atomic>
#include <chrono>
#include <cstdint>

#include <presto/detail/race_point.hpp>

namespace presto::test {

namespace random_delays_state {
inline std::atomic<std::uint64_t> seed{1};
inline std::atomic<std::uint64_t> one_in{20};
inline std::atomic<std::uint64_t> made{0};  // delays made since the last install
// The session's one_in (PRESTO_TEST_DELAYS), or 0: none.
inline std::atomic<std::uint64_t> session_one_in{0};
}  // namespace random_delays_state

// The hook: one point in one_in spins 0 to 20 us. Each OS thread draws from its own xorshift,
// seeded from the installed seed and the thread's first arrival. Spins, never sleeps: a point
// may be inside a processor's gate or a queue's hold (race_point.hpp's contract).
inline void random_delay(const char*) noexcept {
  namespace s = random_delays_state;
  thread_local std::uint64_t x = 0;
  if (x == 0) x = s::seed.fetch_add(0x9e3779b97f4a7c15ULL, std::memory_order_relaxed) | 1;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  if (x % s::one_in.load(std::memory_order_relaxed) != 0) return;
  s::made.fetch_add(1, std::memory_order_relaxed);
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds((x >> 32) % 20'000);
  while (std::chrono::steady_clock::now() < until) {
  }
}

// Installs random_delay with `seed`, at one point in `one_in` (>= 1), and zeroes the count.
// Returns whether this build has race points (if not, nothing is installed).
inline bool install_random_delays(std::uint64_t seed, std::uint64_t one_in) noexcept {
  namespace s = random_delays_state;
  s::seed.store(seed | 1);
  s::one_in.store(one_in == 0 ? 1 : one_in);
  s::made.store(0);
  return detail::set_race_point_hook(&random_delay);
}

// Delays made since the last install_random_delays.
inline std::uint64_t random_delays_made() noexcept { return random_delays_state::made.load(); }

// The session's delays (PRESTO_TEST_DELAYS=N): installed for the whole test process, with the
// process's seed (test_support.hpp's seed()), by catch_main.cpp.
inline bool install_session_delays(std::uint64_t seed, std::uint64_t one_in) noexcept {
  if (!install_random_delays(seed, one_in)) return false;
  random_delays_state::session_one_in.store(random_delays_state::one_in.load());
  return true;
}

// For a test that installed a hook of its own, as it ends: puts back the session's delays, or
// no hook.
inline void restore_session_hook() noexcept {
  namespace s = random_delays_state;
  if (const std::uint64_t one_in = s::session_one_in.load(); one_in != 0) {
    install_random_delays(s::seed.load(), one_in);
  } else {
    detail::set_race_point_hook(nullptr);
  }
}

}  // namespace presto::test
