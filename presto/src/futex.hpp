#pragma once
// Futex waits and wakes on 32-bit atomics: the one place PRESTO parks OS threads (idle
// processors, external threads, the timer thread). Linux-only, like the rest of the runtime.

#include <atomic>
#include <cstdint>
#include <optional>

#include <presto/synchro_object.hpp>

namespace presto::detail {

// Sleeps while word == expected, until woken, interrupted, or (if given) `deadline`.
// May return spuriously; callers recheck their condition.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                std::optional<Clock::time_point> deadline = std::nullopt) noexcept;
void futex_wake_one(std::atomic<std::uint32_t>& word) noexcept;
void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept;

}  // namespace presto::detail
