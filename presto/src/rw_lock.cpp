#include <presto/rw_lock.hpp>

#include <presto/errors.hpp>
#include <presto/thread.hpp>

namespace presto {

RwLock::RwLock(std::string name) : SynchroObject(std::move(name)) {}

RwLock::~RwLock() noexcept(false) {
  waiting_readers_.check();  // while the lock is whole, so the message can name it
  check_no_waiters();
}

void RwLock::misuse(const char* what) {
  spin_unlock();
  throw UsageError(Thread::current().describe() + " " + what + " " + describe());
}

bool RwLock::enter_locked(bool shared) {
  Thread& me = Thread::current();
  if (writer_ == &me) misuse("tried to acquire, while holding it exclusively,");
  if (writer_ != nullptr) return false;
  if (shared) {
    if (has_waiters()) return false;  // a writer waits: readers queue behind it
    ++readers_;
    return true;
  }
  if (readers_ > 0 || has_waiters()) return false;
  writer_ = &me;
  return true;
}

void RwLock::admit_readers(ThreadQueue& woken) noexcept {
  waiting_readers_.spin_lock();
  while (Thread* t = waiting_readers_.recall()) {
    ++readers_;
    woken.push_back(*t);
  }
  waiting_readers_.spin_unlock();
}

Thread* RwLock::admit_writer() noexcept {
  Thread* t = recall();
  if (t != nullptr) writer_ = t;
  return t;
}

void RwLock::lock() {
  spin_lock();
  if (enter_locked(false)) {
    spin_unlock();
    return;
  }
  block();  // the releasing thread hands us the lock
}

bool RwLock::try_lock() {
  spin_lock();
  const bool entered = enter_locked(false);
  spin_unlock();
  return entered;
}

void RwLock::unlock() {
  spin_lock();
  if (writer_ != &Thread::current()) misuse("released (unlock) an exclusive hold it does not have on");
  writer_ = nullptr;
  ThreadQueue woken;
  admit_readers(woken);  // phase-fair: the readers that waited through this writer go first
  Thread* writer = woken.empty() ? admit_writer() : nullptr;
  spin_unlock();
  waiting_readers_.wakeup_all(woken);
  if (writer != nullptr) writer->wakeup(*this);
}

void RwLock::lock_shared() {
  spin_lock();
  if (enter_locked(true)) {
    spin_unlock();
    return;
  }
  waiting_readers_.spin_lock();  // held from here until we sleep: a releaser finds us queued
  spin_unlock();
  waiting_readers_.block();
}

bool RwLock::try_lock_shared() {
  spin_lock();
  const bool entered = enter_locked(true);
  spin_unlock();
  return entered;
}

void RwLock::unlock_shared() {
  spin_lock();
  if (readers_ == 0) misuse("released (unlock_shared) a shared hold it does not have on");
  Thread* writer = --readers_ == 0 ? admit_writer() : nullptr;
  spin_unlock();
  if (writer != nullptr) writer->wakeup(*this);
}

bool RwLock::lock_until(bool shared, const Clock::time_point* deadline, const StopToken& token) {
  SynchroObject& queue = shared ? static_cast<SynchroObject&>(waiting_readers_) : *this;
  CancellableWait waiting{queue, token};
  spin_lock();
  if (enter_locked(shared)) {
    spin_unlock();
    return true;
  }
  if (shared) {
    waiting_readers_.spin_lock();
    spin_unlock();
  }
  const WaitStatus status = waiting.block(deadline);
  if (status == WaitStatus::woken) return true;  // handed over
  if (!shared) {
    // This writer may have been the one holding readers back.
    ThreadQueue woken;
    spin_lock();
    if (writer_ == nullptr && !has_waiters()) admit_readers(woken);
    spin_unlock();
    waiting_readers_.wakeup_all(woken);
  }
  if (status == WaitStatus::cancelled) waiting.throw_cancelled(shared ? "lock_shared" : "lock");
  return false;
}

std::size_t RwLock::readers() const noexcept {
  auto& self = const_cast<RwLock&>(*this);
  self.spin_lock();
  const std::size_t n = readers_;
  self.spin_unlock();
  return n;
}

bool RwLock::held_exclusively() const noexcept {
  auto& self = const_cast<RwLock&>(*this);
  self.spin_lock();
  const bool w = writer_ != nullptr;
  self.spin_unlock();
  return w;
}

}  // namespace presto
