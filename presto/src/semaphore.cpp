#include <presto/semaphore.hpp>

#include <presto/errors.hpp>
#include <presto/thread.hpp>

namespace presto {

Semaphore::Semaphore(std::ptrdiff_t initial, std::string name) : SynchroObject(std::move(name)), count_(initial) {
  if (initial < 0) throw UsageError(describe() + " created with a negative count " + std::to_string(initial));
}

Semaphore::~Semaphore() noexcept(false) { check_no_waiters(); }

void Semaphore::acquire() {
  spin_lock();
  if (count_ > 0) {
    --count_;
    spin_unlock();
    return;
  }
  block();  // release() hands us its unit directly
}

bool Semaphore::try_acquire() noexcept {
  spin_lock();
  const bool got = count_ > 0;
  if (got) --count_;
  spin_unlock();
  return got;
}

bool Semaphore::try_acquire_until(Clock::time_point deadline) {
  spin_lock();
  if (count_ > 0) {
    --count_;
    spin_unlock();
    return true;
  }
  return block_until(deadline);
}

void Semaphore::release(std::ptrdiff_t n) {
  if (n < 0) {
    throw UsageError(Thread::current().describe() + " released " + describe() + " by a negative count " +
                     std::to_string(n));
  }
  ThreadQueue woken;
  spin_lock();
  for (; n > 0; --n) {
    Thread* t = recall();
    if (t == nullptr) break;
    woken.push_back(*t);
  }
  count_ += n;
  spin_unlock();
  wakeup_all(woken);
}

std::ptrdiff_t Semaphore::value() const noexcept {
  auto& self = const_cast<Semaphore&>(*this);
  self.spin_lock();
  std::ptrdiff_t v = count_;
  self.spin_unlock();
  return v;
}

}  // namespace presto
