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
//
// Cancelled: a blocking operation given a StopToken (presto/stop_token.hpp) gave up because a
// stop was requested. Raised in the waiting thread, which no longer waits and holds nothing it
// did not hold before the call (a Condition wait reacquires its monitor first, as every wait
// does). object() and thread() name the object and the thread, as the message does.

#include <presto/version.hpp>  // first: the C++20 check

#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
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

class Cancelled : public std::runtime_error {
 public:
  // `operation` is what was cancelled, e.g. "acquire" or "lock".
  Cancelled(std::string object, std::string thread, std::string_view operation);
  const std::string& object() const noexcept { return object_; }  // e.g. "semaphore 'slots'"
  const std::string& thread() const noexcept { return thread_; }  // e.g. "thread 'worker' (id 7)"

 private:
  std::string object_;
  std::string thread_;
};

// What an exception says: what() for a std::exception, a fixed phrase for anything else. For
// log lines about exceptions nobody received (an unjoined thread's, an unobserved future's).
std::string exception_text(const std::exception_ptr& e);

}  // namespace presto
