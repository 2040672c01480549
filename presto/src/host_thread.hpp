#pragma once
// HostThread: the OS thread that hosts one of a runtime's processor slots 1, 2, ... (slot 0 is
// run()'s caller). It is made when its slot is first started and then kept: parked on a futex
// between runs, and while set_processors has its slot retired, until the runtime is destroyed.
// So each run wakes OS threads the kernel has already placed on cores. A new OS thread may wait
// milliseconds for its first time slice, while run()'s caller runs the whole workload alone
// (docs/design/runtime.md §1).
//
// Contract: start() and wait_idle() are called by one thread at a time (the runtime holds
// os_threads_mutex); start() only while idle.

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

 private:
  enum State : std::uint32_t { kIdle, kStarted, kExiting };
  void main() noexcept;

  std::string name_;
  std::function<void()> loop_;
  std::atomic<std::uint32_t> state_{kIdle};
  std::thread thread_;
};

}  // namespace presto::detail
