#pragma once
// HostThread: an OS thread that a runtime keeps for its whole life and runs one loop on, again
// and again: each processor slot 1, 2, ... has one (slot 0 is run()'s caller), and so has the
// timer service. It is made by its first start(), parked on a futex whenever its loop has
// returned (between runs; while set_processors has its slot retired), and ended by its
// destructor. So each run wakes OS threads the kernel has already placed on cores: a new OS
// thread may wait milliseconds for its first time slice, while run()'s caller runs the whole
// workload alone (docs/design/runtime.md §1).
//
// Contract: the owner calls start(), wait_idle() and the destructor one at a time (the runtime
// holds os_threads_mutex, or is the run's caller); start() only while idle. The loop must not
// throw. A child process made by fork(2) has none of its parent's OS threads: a runtime made
// before the fork must not be run in the child.

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

namespace presto::detail {

class HostThread {
 public:
  // `name`: the OS thread's name (at most 15 bytes are kept); `loop`: what each start() runs.
  HostThread(std::string name, std::function<void()> loop);
  HostThread(const HostThread&) = delete;
  HostThread& operator=(const HostThread&) = delete;
  // Waits for the loop in progress, if any, to return; then ends and joins the OS thread.
  ~HostThread();

  // Runs the loop once more on this OS thread; the first call creates the thread (and throws
  // std::system_error if it cannot). Precondition: idle.
  void start();
  // Returns once the loop last started has returned (at once if none runs). Everything the loop
  // did happens before the return.
  void wait_idle() noexcept;
  // Whether no loop runs: never started, or its loop has returned (as wait_idle() waits for).
  bool idle() const noexcept { return state_.load(std::memory_order_acquire) == kIdle; }

 private:
  enum State : std::uint32_t { kIdle, kStarted, kExiting };
  void main() noexcept;

  std::string name_;
  std::function<void()> loop_;
  std::atomic<std::uint32_t> state_{kIdle};
  std::thread thread_;
};

}  // namespace presto::detail
