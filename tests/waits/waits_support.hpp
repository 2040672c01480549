#pragma once
// Helpers of the waits suite.

#include <presto/presto.hpp>

namespace presto::test {

// Yields until `t` is asleep (blocked on some object): the wait under test has begun.
inline void await_blocked(const Thread& t) {
  while (t.state() != ThreadState::blocked) this_thread::yield();
}

}  // namespace presto::test
