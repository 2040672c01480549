#pragma once
// Errors raised by PRESTO.
//
// UsageError: a PRESTO object was used against its contract (exiting a monitor one does not
// hold, starting a thread twice, ...). The message always names the object and the thread,
// e.g. "thread 'worker' (id 7) exited monitor 'buffer' which it does not hold (owner: thread
// 'main' (id 1))". Raised in the offending thread, before any state was changed.
//
// Deadlock: thrown by Runtime::run() when the system halted (no thread ready or running, no
// timer pending, no KeepAlive held) while threads were still blocked. blocked() lists every
// one of them with the object it waits on; the message says the same in words.

#include <presto/version.hpp>  // first: the C++20 check

#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace presto {

class UsageError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// One thread that was blocked when the system halted.
struct BlockedThread {
  std::string thread;      // e.g. "thread 'consumer' (id 3)"
  std::uint64_t id = 0;
  std::string waiting_on;  // e.g. "condition 'nonempty' of monitor 'buffer'"
};

class Deadlock : public std::runtime_error {
 public:
  explicit Deadlock(std::vector<BlockedThread> blocked);
  const std::vector<BlockedThread>& blocked() const noexcept { return blocked_; }

 private:
  std::vector<BlockedThread> blocked_;
};

// What an exception says: what() for a std::exception, a fixed phrase for anything else. For
// log lines about exceptions nobody received (an unjoined thread's, an unobserved future's).
std::string exception_text(const std::exception_ptr& e);

}  // namespace presto
