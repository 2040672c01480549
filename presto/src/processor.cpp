#include <presto/processor.hpp>

#include <presto/runtime.hpp>

#include "asymmetric_fence.hpp"
#include "current.hpp"
#include "dispatch.hpp"
#include "futex.hpp"
#include "race_point.hpp"
#include "runtime_impl.hpp"

namespace presto {

namespace detail {
// The processor of this OS thread. Read through Processor::current(), a call the compiler
// cannot inline or cache across a context switch (after which a presto thread may be on
// another OS thread), or, where current.hpp's rule holds, through its inline readers.
constinit thread_local __attribute__((tls_model("initial-exec"))) Processor* tl_processor = nullptr;

void set_current_processor(Processor* p) noexcept { tl_processor = p; }
}  // namespace detail

Processor::Processor() = default;
Processor::~Processor() = default;

std::unique_ptr<Processor> Processor::newprocessor() const { return std::make_unique<Processor>(); }

__attribute__((noinline)) Processor* Processor::current() noexcept { return detail::current_processor(); }

// Reads tl_processor itself rather than through Processor::current(): one call, not two.
__attribute__((noinline)) Thread& Thread::current() noexcept {
  if (Thread* t = detail::running_thread()) [[likely]] return *t;
  return external();
}

bool Processor::parking() const noexcept { return state_ != nullptr && state_->parking; }

std::uint64_t Processor::dispatches() const noexcept {
  // A record run as a call (Dispatch::call_record) is counted once: where it ends without a
  // thread, on this processor (threadless), or in dispatches_ when it is made a thread while it
  // runs (Dispatch::make_running_thread); the hot path's end pays one counter, not two.
  const std::uint64_t calls = state_ != nullptr ? state_->threadless.load(std::memory_order_relaxed) : 0;
  return dispatches_.load(std::memory_order_relaxed) + calls;
}

bool Processor::work_available() const noexcept {
  auto& r = detail::RuntimeImpl::of(*runtime_);
  return r.stopping() || phase_.load(std::memory_order_acquire) != Phase::active ||
         detail::Dispatch::has_work_for(const_cast<Processor&>(*this));
}

// Spins (polls for work) for a while, then parks; spins only while no more processors spin
// than run threads: each poll reads the other processors' queues, and a steal takes their
// locks, so many spinners slow down the processors that make the work. (Go's scheduler has a
// like bound.) One forker on 16 processors, Figure 3's pattern, forked 40,000 threads about
// 9 times slower than alone while every idle processor polled its queue.
void Processor::idle() {
  auto& r = detail::RuntimeImpl::of(*runtime_);
  IdlePoller* poller = r.poller.load(std::memory_order_acquire);
  const std::size_t idlers = r.idle.load(std::memory_order_relaxed);
  const std::size_t live = r.live.load(std::memory_order_relaxed);
  const std::size_t running = live > idlers ? live - idlers : 0;
  const std::size_t spins = r.spinning.load(std::memory_order_relaxed) <= running ? r.idle_spin : 0;
  r.spinning.fetch_add(1, std::memory_order_seq_cst);
  bool drained = false;  // a poll here left no thread waiting for the poller
  for (std::size_t i = 0;; ++i) {
    if (work_available()) break;
    // Threads wait for the poller's events: look for them once, then park (in the poller, or
    // on the futex) instead of spinning. A spinning processor takes a core from the programs
    // at the other ends of those descriptors: an echo round trip on the 2-core VM took 177 us
    // at the median with the spin, 6.9 us without (apps/echo, one connection). The look comes
    // before the spin bound: a processor that may not spin still polls once as it goes idle,
    // as IdlePoller promises (halting_test's scripted poller checks it, with idle_spin 0).
    if (poller != nullptr && i % 64 == 0 && poller->waiting()) {
      poller->poll(*this, false);
      // The poll may have let the last waiter go after the processor that ran the woken
      // thread checked for halting (and saw waiting() still true): that check is ours to
      // redo, so return to the loop instead of parking (see presto/idle_poller.hpp).
      drained = !poller->waiting();
      break;
    }
    if (i >= spins) break;
    for (int k = 0; k < 32; ++k) detail::relax_cpu();
  }
  const bool park_now = !drained && !work_available();
  r.spinning.fetch_sub(1, std::memory_order_seq_cst);
  if (park_now) park();
}

void Processor::park() {
  auto& r = detail::RuntimeImpl::of(*runtime_);
  park_word_.store(0, std::memory_order_relaxed);
  IdlePoller* poller = r.poller.load(std::memory_order_acquire);
  r.parked_lock.lock();
  // With an IdlePoller installed, one parked processor waits in poll() instead of its futex.
  const bool polls = poller != nullptr && r.polling == nullptr;
  if (polls) r.polling = this;
  r.parked.push_back(this);  // capacity reserved for every processor
  r.sleepers.fetch_add(1, std::memory_order_seq_cst);
  r.parked_lock.unlock();
  // Pairs with the fence in RuntimeImpl::wake_if_needed(): either we see the ready thread
  // here, or its putter sees us parked and wakes us.
  detail::full_fence();
  state_->parking = true;
  const bool work = work_available();
  state_->parking = false;
  if (!work && !r.recheck.exchange(false, std::memory_order_seq_cst)) {
    PRESTO_RACE_POINT("Processor::park: no work seen, not yet asleep");
    detail::QuantumTimer* timer = state_->quantum_timer;  // no preemption signals while parked
    if (timer != nullptr) timer->pause();
    state_->parks.fetch_add(1, std::memory_order_relaxed);
    if (polls) {
      poller->poll(*this, true);
    } else {
      detail::futex_wait(park_word_, 0);
    }
    if (timer != nullptr) timer->resume();
  }
  r.parked_lock.lock();
  for (auto it = r.parked.begin(); it != r.parked.end(); ++it) {
    if (*it == this) {  // not taken by a waker: woken spuriously, or work was already there
      r.parked.erase(it);
      r.sleepers.fetch_sub(1, std::memory_order_relaxed);
      break;
    }
  }
  if (polls) r.polling = nullptr;
  const bool token = std::exchange(state_->spin_token, false);
  r.parked_lock.unlock();
  // Counted as spinning since its waker took it: it looks for work next, in its idle loop.
  if (token) r.spinning.fetch_sub(1, std::memory_order_seq_cst);
  // Threads still wait for the poller's events: a parked processor takes over the polling.
  if (polls && poller->waiting() && r.sleepers.load(std::memory_order_seq_cst) != 0) r.wake_one();
}

}  // namespace presto
