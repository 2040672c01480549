#pragma once
// Threads switching to each other from two different call sites, each keeping values live
// across the switches in callee-saved registers and in a 16-byte-aligned local: what each
// computes must be what it computes with no switch at all. For the tests of the
// predicted-return entries (<presto/predicted_return.hpp>), which may return to their callers
// by a jump rather than a `ret`.

#include <array>
#include <cstdint>
#include <string>

#include "test_support.hpp"

namespace presto::test {

// Mixes a running value so that a register clobbered across a yield shows in the result.
[[gnu::always_inline]] inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  return (h ^ v) * 0x9E3779B97F4A7C15ull;
}

// Three call sites (Site 0, 1, 2) of a switch, each with values live across it: what they
// compute must be what they compute with no switch at all.
template <int Site, class Switch>
[[gnu::noinline]] std::uint64_t compute(int rounds, Record& record, Switch&& switch_threads) {
  std::uint64_t a = Site + 1, b = Site * 7 + 3, c = 0xC0FFEE + Site, h = 0;
  alignas(16) std::array<double, 2> aligned{1.0 * Site, 2.0};
  for (int r = 0; r < rounds; ++r) {
    switch_threads();
    record.expect(reinterpret_cast<std::uintptr_t>(aligned.data()) % 16 == 0,
                  "site " + std::to_string(Site) + ": a 16-byte-aligned local is misaligned after a switch");
    a += b;
    b ^= c;
    c = c * 3 + static_cast<std::uint64_t>(r);
    h = mix(h, a + b + c);
    aligned[0] += aligned[1];
  }
  return mix(h, static_cast<std::uint64_t>(aligned[0]));
}

template <int Site>
std::uint64_t expected(int rounds) {
  Record unused;
  return compute<Site>(rounds, unused, [] {});
}

// On a presto thread: Site 0 here and Site 1 on a forked thread, each switching by its own
// call; both results.
template <class Switch0, class Switch1>
std::array<std::uint64_t, 2> from_two_sites(int rounds, Record& record, Switch0 switch0, Switch1 switch1) {
  auto other = fork([&] { return compute<1>(rounds, record, switch1); });
  std::array<std::uint64_t, 2> got{compute<0>(rounds, record, switch0), 0};
  got[1] = other.join();
  return got;
}

inline void check_two_sites(const Record& record, const std::array<std::uint64_t, 2>& got, int rounds) {
  PRESTO_CHECK_RECORD(record);
  CHECK(got[0] == expected<0>(rounds));
  CHECK(got[1] == expected<1>(rounds));
}

}  // namespace presto::test
