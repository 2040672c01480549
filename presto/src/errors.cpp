#include <presto/errors.hpp>

namespace presto {

namespace {
std::string deadlock_message(const std::vector<BlockedThread>& blocked) {
  std::string m = "deadlock: the system halted with " + std::to_string(blocked.size()) + " thread" +
                  (blocked.size() == 1 ? "" : "s") + " blocked forever:";
  for (const BlockedThread& b : blocked) m += "\n  " + b.thread + " waits on " + b.waiting_on;
  return m;
}
}  // namespace

Deadlock::Deadlock(std::vector<BlockedThread> blocked)
    : std::runtime_error(deadlock_message(blocked)), blocked_(std::move(blocked)) {}

Cancelled::Cancelled(std::string object, std::string thread, std::string_view operation)
    : std::runtime_error(std::string(operation) + " on " + object + " by " + thread +
                         " was cancelled: a stop was requested on its StopToken"),
      object_(std::move(object)),
      thread_(std::move(thread)) {}

std::string exception_text(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

}  // namespace presto
