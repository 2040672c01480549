#include <presto/latch.hpp>

#include <presto/errors.hpp>
#include <presto/thread.hpp>

namespace presto {

Latch::Latch(std::ptrdiff_t expected, std::string name) : SynchroObject(std::move(name)), count_(expected) {
  if (expected < 0) throw UsageError(describe() + " created with a negative count " + std::to_string(expected));
}

Latch::~Latch() noexcept(false) { check_no_waiters(); }

void Latch::count_down(std::ptrdiff_t n) {
  if (n < 0) {
    throw UsageError(Thread::current().describe() + " counted " + describe() + " down by a negative " +
                     std::to_string(n));
  }
  add(-n, "count_down");
}

void Latch::add(std::ptrdiff_t n, const char* operation) {
  spin_lock();
  const std::ptrdiff_t c = count_.load(std::memory_order_relaxed) + n;
  if (c < 0) {
    spin_unlock();
    throw UsageError(Thread::current().describe() + " called " + operation + "(" + std::to_string(n) + ") on " +
                     describe() + ", whose count would go negative (" + std::to_string(c) + ")");
  }
  count_.store(c, std::memory_order_release);
  ThreadQueue woken;
  if (c == 0) {
    while (Thread* t = recall()) woken.push_back(*t);
  }
  spin_unlock();
  wakeup_all(woken);  // the waiters may destroy the latch once woken: nothing touches it after
}

void Latch::wait() {
  if (try_wait()) return;
  spin_lock();
  if (count_.load(std::memory_order_relaxed) == 0) {
    spin_unlock();
    return;
  }
  block();  // woken only when the count reached zero (a WaitGroup may count up again since)
}

WaitStatus Latch::wait_on(const Clock::time_point* deadline, const StopToken& token) {
  if (try_wait()) return WaitStatus::woken;
  CancellableWait waiting{*this, token};
  spin_lock();
  if (count_.load(std::memory_order_relaxed) == 0) {
    spin_unlock();
    return WaitStatus::woken;
  }
  return waiting.block(deadline);
}

void Latch::wait(const StopToken& token) {
  if (wait_on(nullptr, token) == WaitStatus::cancelled) {
    throw Cancelled(describe(), Thread::current().describe(), "wait");
  }
}

bool Latch::wait_until(Clock::time_point deadline) { return wait_on(&deadline, {}) == WaitStatus::woken || try_wait(); }

void Latch::arrive_and_wait(std::ptrdiff_t n) {
  count_down(n);
  wait();
}

}  // namespace presto
