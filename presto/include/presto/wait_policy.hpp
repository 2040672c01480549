#pragma once
// WaitPolicy: how a thread waits when a Lock (and so a Monitor's entry), a Semaphore or a
// Barrier makes it wait. Blocking frees the processor for other threads but costs a block and
// a wake-up (a switch out, a trip through the ready pool, perhaps waking a parked processor);
// spinning costs nothing when the wait is short but wastes the processor when it is long
// (Karlin, Li, Manasse and Owicki; Ousterhout's two-phase waiting). docs/guide/waiting.md
// measures both.
//
//   presto::Lock l{"table"};
//   l.set_wait_policy({.mode = presto::WaitMode::spin_then_block, .budget = 20us});
//   presto::Runtime rt{{.wait_policy = {.mode = presto::WaitMode::competitive}}};  // every object's default
//
// Modes:
//   inherit          (objects only, their default) the runtime's RuntimeConfig::wait_policy
//                    in the waiting thread's runtime; `block` for plain OS threads
//   block            sleep at once: PRESTO's behaviour, and the runtime default
//   spin             poll until the wait is over; never sleeps on the object. Every 1,024
//                    polls the thread yields its processor to other ready threads, and every
//                    16th time it naps for 50 us instead; after a yield that ran at most one
//                    other thread though more were waiting on its processor, it naps for 5 us
//                    (a LIFO pool passes the processor between the two newest threads, two
//                    spinners, and never reaches the holder below them by yields): a presto
//                    thread spinning on one processor for a holder on the same processor would
//                    otherwise never let it run. So it never deadlocks, but it keeps a
//                    processor busy
//   spin_then_block  poll for `budget`, then sleep
//   competitive      poll for as long as one block + wake-up costs on this object, then sleep:
//                    the 2-competitive rule (a wait never costs more than twice what an oracle
//                    choosing between spinning and blocking would pay). The cost is measured:
//                    each time a competitive waiter of the object sleeps, the time from its
//                    waker's wake-up to its resumption updates a moving average (1/8 weight);
//                    until the first measurement the waiter sleeps at once.
//
// A spinning waiter polls without the object's spinlock and takes what it waits for (the lock,
// a unit, the end of a phase) as soon as it sees it; it does not queue, so FIFO hand-off holds
// among sleeping waiters only. The default path (block) costs what it did: the policy is read
// only when a thread is about to wait.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace presto {

class Thread;

enum class WaitMode : unsigned char { inherit, block, spin, spin_then_block, competitive };

struct WaitPolicy {
  WaitMode mode = WaitMode::inherit;
  std::chrono::nanoseconds budget{0};  // spin_then_block: how long to poll before sleeping
};

const char* to_string(WaitMode mode) noexcept;

namespace detail {

// The waiting state an object with a wait policy keeps: its policy and, for the competitive
// mode, the measured cost of a block + wake-up. For Lock, Semaphore and Barrier; the calls
// come from their slow paths only.
class WaitState {
 public:
  WaitPolicy policy() const noexcept { return policy_; }
  // UsageError (naming `object`) for a negative budget or an unknown mode.
  void set_policy(WaitPolicy p, const std::string& object);
  // The measured cost of one block + wake-up on this object (0 until measured).
  std::chrono::nanoseconds block_cost() const noexcept {
    return std::chrono::nanoseconds(block_cost_ns_.load(std::memory_order_relaxed));
  }

  // The policy in force for the calling thread (inherit resolved); never inherit.
  WaitPolicy resolve() const noexcept;
  // Polls under `p` until try_take() returns true (then true) or the budget runs out (false:
  // the caller sleeps). try_take is called without the object's spinlock.
  template <class TryTake>
  bool spin(const WaitPolicy& p, TryTake&& try_take) {
    const std::int64_t budget = budget_ns(p);
    if (budget <= 0) return false;
    if (try_take()) return true;
    const auto start = std::chrono::steady_clock::now();
    for (unsigned polls = 1;; ++polls) {
      if (try_take()) return true;
      pause();
      if (polls % 64 == 0) {
        if (p.mode != WaitMode::spin && std::chrono::steady_clock::now() - start >= std::chrono::nanoseconds(budget)) {
          return false;
        }
        if (polls % 1024 == 0) give_way(polls / 1024, p.mode == WaitMode::spin);
      }
    }
  }
  // Around the sleep of a waiter under `p`: a competitive waiter asks its waker for a time
  // stamp and measures how long it took to run again.
  void before_sleep(const WaitPolicy& p) noexcept {
    if (p.mode == WaitMode::competitive) stamp_wanted_.store(true, std::memory_order_relaxed);
  }
  void after_sleep(const WaitPolicy& p) noexcept {
    if (p.mode == WaitMode::competitive) measure();
  }
  // The waker, just before it wakes sleepers of this object.
  void on_wakeup() noexcept {
    if (stamp_wanted_.load(std::memory_order_relaxed)) [[unlikely]] stamp();
  }

 private:
  std::int64_t budget_ns(const WaitPolicy& p) const noexcept;
  static void pause() noexcept;
  // Every 1,024 polls (the `times`th time): see wait_policy.cpp. `unbounded`: the spin mode,
  // which polls until the wait is over.
  static void give_way(unsigned times, bool unbounded);
  void stamp() noexcept;
  void measure() noexcept;

  WaitPolicy policy_{};
  std::atomic<bool> stamp_wanted_{false};
  std::atomic<std::int64_t> wake_stamp_ns_{0};
  std::atomic<std::int64_t> block_cost_ns_{0};
};

}  // namespace detail
}  // namespace presto
