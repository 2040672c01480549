#pragma once
// Reactor: presto::io's IdlePoller, one per runtime (Reactor::of), made on first use and owned
// by the runtime (Runtime::install_idle_poller). Threads that would block on a descriptor sleep
// on its FdWaiters (one per descriptor and direction) and the polling processor's
// epoll_wait wakes them.
//
// Registration: each wait arms the descriptor one-shot and level-triggered (EPOLL_CTL_MOD,
// or EPOLL_CTL_ADD the first time or after the kernel dropped a closed descriptor), for the
// directions that have waiters. Level-triggered arming reports readiness that came before
// it, so no wake-up is lost between the failed system call and the sleep; arming per wait
// (rather than once per descriptor) keeps a descriptor number that was closed with ::close
// and reused correct. The event disarms it; the poller re-arms it if the other direction
// still has waiters.
//
// Busy processors: readiness is noticed by idle processors (presto/idle_poller.hpp). So that
// a runtime whose processors all compute still sees its I/O, a backstop OS thread (Go's sysmon
// does this for its netpoller) looks every kBackstop while threads wait, no processor waits in
// epoll_wait and none has polled for kBackstop, and wakes the threads whose descriptors are
// ready; they run when a processor next dispatches (at the latest at its next preemption). It
// holds a KeepAlive while it does: lowering waiting() off the processors, it owes the runtime
// a halt check, which the KeepAlive's release makes (presto/idle_poller.hpp).
//
// Locks: a direction's SynchroObject spinlock, then the descriptor's arm lock. The count of
// waiters of a direction changes under its spinlock and is read under the arm lock.

#include <atomic>
#include <presto/stop_token.hpp>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <presto/idle_poller.hpp>
#include <presto/runtime.hpp>
#include <presto/spinlock.hpp>
#include <presto/synchro_object.hpp>

namespace presto::io::detail {

enum class Direction : unsigned char { read, write };

// The threads waiting for one direction of one descriptor. Deadlock reports and gdb name it
// by the operation that waits ("read on fd 7").
class FdWaiters final : public SynchroObject {
 public:
  FdWaiters(int fd, Direction d);
  std::string_view kind() const noexcept override { return "file descriptor"; }
  std::string describe() const override;

  // Waiters (remembered and not yet recalled or timed out); written under the spinlock.
  std::atomic<std::uint32_t> count{0};
  // The operation of the latest waiter ("read", "accept", ...), for describe().
  std::atomic<const char*> operation{"wait"};

 private:
  int fd_;
};

struct FdState {
  explicit FdState(int fd) : readers(fd, Direction::read), writers(fd, Direction::write) {}
  FdWaiters& waiters(Direction d) noexcept { return d == Direction::read ? readers : writers; }

  FdWaiters readers;
  FdWaiters writers;
  Spinlock arm_lock;
  // Bumped by presto::io::close (under both spinlocks): a waiter that saw another value was
  // closed while it waited.
  std::atomic<std::uint32_t> generation{0};
  std::atomic<bool> nonblocking{false};  // presto::io made it O_NONBLOCK since the last close
};

class Reactor final : public IdlePoller {
 public:
  enum class Outcome : unsigned char { ready, timed_out, closed };

  explicit Reactor(Runtime& rt);
  ~Reactor() override;

  // The reactor of `rt`, installed on first use. UsageError if rt has another IdlePoller.
  static Reactor& of(Runtime& rt);

  // The state of descriptor `fd`, made on first use and kept until the reactor dies.
  // UsageError for a negative descriptor or one beyond kMaxFd.
  FdState& state(int fd);
  // The one place a presto thread waits for a descriptor: sleeps until `fd` may be ready in
  // direction `d`, the deadline passes, or presto::io::close closes it (its generation is no
  // longer `generation`, read before the system call that found it not ready). May return
  // `ready` spuriously: the caller retries its system call. Throws presto::Cancelled, no longer
  // waiting, if a stop is requested on `token` before or while it sleeps (see Deadline).
  Outcome wait(int fd, FdState& s, Direction d, std::uint32_t generation, Clock::time_point deadline,
               const StopToken& token, const char* operation);
  // presto::io::close's work before ::close: wake every waiter, forget the descriptor.
  void close(int fd, FdState& s);

  void poll(Processor& p, bool block) noexcept override;
  void wake() noexcept override;
  bool waiting() const noexcept override { return waiting_.load(std::memory_order_seq_cst) != 0; }
  // Threads abandoned while they waited never lower the counts: start again from zero.
  void run_ended() noexcept override;

  static constexpr int kMaxFd = (1 << 22) - 1;
  static constexpr std::chrono::milliseconds kBackstop{5};

 private:
  static constexpr int kChunkBits = 10;
  static constexpr std::size_t kChunk = std::size_t{1} << kChunkBits;
  static constexpr std::size_t kChunks = (static_cast<std::size_t>(kMaxFd) + 1) / kChunk;
  struct Chunk {
    std::atomic<FdState*> slots[kChunk] = {};
  };

  // Arms fd for the directions that have waiters. Throws std::system_error if epoll refuses
  // (EPERM: a regular file, always ready, is reported as `false`: do not wait).
  bool arm(int fd, FdState& s);
  // Wakes the waiters of `d`; returns how many.
  std::size_t wake_all(FdWaiters& w);
  void dispatch(int fd, std::uint32_t events) noexcept;
  // epoll_wait (blocking or not) and dispatch of what it returned.
  void collect(bool block) noexcept;
  void backstop() noexcept;
  template <class F>
  void for_each_state(F&& f) {
    for (std::size_t i = 0; i < kChunks; ++i) {
      if (Chunk* c = chunks_[i].load(std::memory_order_acquire)) {
        for (auto& slot : c->slots) {
          if (FdState* s = slot.load(std::memory_order_acquire)) f(*s);
        }
      }
    }
  }

  Runtime& runtime_;
  int epoll_ = -1;
  int event_ = -1;  // eventfd: wake()
  std::atomic<bool> woken_{false};
  // Threads asleep here; drops only after the woken are ready, or by the waiter itself.
  std::atomic<std::size_t> waiting_{0};
  std::unique_ptr<std::atomic<Chunk*>[]> chunks_;
  // For the backstop: when a poll last began (Clock ticks), and whether one blocks now.
  std::atomic<Clock::rep> last_poll_{0};
  std::atomic<bool> blocking_{false};
  std::mutex backstop_mutex_;  // held by the backstop while it looks (and by run_ended)
  std::condition_variable backstop_stop_;
  bool stopping_ = false;  // guarded by backstop_mutex_
  std::thread backstop_;
};

}  // namespace presto::io::detail
