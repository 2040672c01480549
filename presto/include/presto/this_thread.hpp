#pragma once
// Operations on the calling thread. They work on presto threads and, falling back to the
// std::this_thread equivalents, on plain OS threads.

#include <chrono>
#include <cstdint>

#include <presto/stop_token.hpp>
#include <presto/synchro_object.hpp>
#include <presto/thread.hpp>

namespace presto {

class Runtime;

namespace this_thread {

// PRESTO's switch(): lets the other ready threads of this processor run first.
void yield();
// Sleeps until `deadline`, relinquishing the processor. A pending sleep keeps the runtime
// from halting.
void sleep_until(Clock::time_point deadline);
template <class Rep, class Period>
void sleep_for(const std::chrono::duration<Rep, Period>& duration) {
  sleep_until(Clock::now() + std::chrono::ceil<Clock::duration>(duration));
}
// As sleep_until / sleep_for, but throws Cancelled as soon as a stop is requested on `token`
// (presto/stop_token.hpp). On a plain OS thread too.
void sleep_until(Clock::time_point deadline, const StopToken& token);
template <class Rep, class Period>
void sleep_for(const std::chrono::duration<Rep, Period>& duration, const StopToken& token) {
  sleep_until(Clock::now() + std::chrono::ceil<Clock::duration>(duration), token);
}
inline Thread& get() noexcept { return Thread::current(); }
inline std::uint64_t get_id() noexcept { return Thread::current().id(); }
// The runtime of the calling presto thread; nullptr on other OS threads.
Runtime* runtime() noexcept;

}  // namespace this_thread

using this_thread::sleep_for;
using this_thread::sleep_until;

}  // namespace presto
