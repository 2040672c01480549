#pragma once
// Race points: named places in the runtime between two steps that another processor may come
// between, for tests that must make such an interleaving happen every time rather than once in a
// few hundred runs (tests/races). A library configured with `-Drace_points=true` calls the
// installed hook at each point, with the point's name, on the OS thread that reached it; the
// hook may hold that thread there (spin, sleep) while another processor takes its step. Other
// builds compile the points to nothing: set_race_point_hook then installs nothing and returns
// false.
//
// Contract for a hook: it runs inside the runtime's dispatch code (a processor's gate may be
// held, a record half-read), so it must not fork, join, wait, yield or take a PRESTO lock; it
// may spin or sleep its OS thread, and read atomics and counters (LocalQueuePool::
// served_steals(), say). One hook at a time for the whole process. The points:
// presto/src (grep PRESTO_RACE_POINT); docs/design/runtime.md, "Race points".

namespace presto::detail {

using RacePointHook = void (*)(const char* point) noexcept;

// Installs `hook` (nullptr: none). Returns whether this build has race points.
bool set_race_point_hook(RacePointHook hook) noexcept;

}  // namespace presto::detail
