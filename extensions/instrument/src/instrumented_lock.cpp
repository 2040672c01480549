#include <presto/instrument/instrumented_lock.hpp>

#include <chrono>

#include <presto/instrument/instrumented_thread.hpp>

namespace presto::instrument {

namespace {
std::shared_ptr<Recorder> recorder_or_current(std::shared_ptr<Recorder> given) {
  if (given) return given;
  InstrumentedThread* t = InstrumentedThread::current();
  return t != nullptr ? t->shared_recorder() : nullptr;
}
}  // namespace

InstrumentedLockCore::InstrumentedLockCore(std::shared_ptr<Recorder> recorder, const std::string& description)
    : recorder_(recorder_or_current(std::move(recorder))) {
  if (recorder_) entry_ = recorder_->entry(description);
}

Nanos InstrumentedLockCore::now() const noexcept {
  if (recorder_) return recorder_->now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void InstrumentedLockCore::pop_entry() noexcept {
  if (!recorder_) return;
  InstrumentedThread* me = InstrumentedThread::current();
  if (me != nullptr && &me->recorder() == recorder_.get()) me->pop_entry(entry_);
}

void InstrumentedLockCore::acquire(Lock& lock) {
  InstrumentedThread* me = recorder_ ? InstrumentedThread::current() : nullptr;
  if (me != nullptr && &me->recorder() == recorder_.get()) me->push_entry(entry_);
  const Nanos asked = now();
  bool contended = false;
  try {
    if (!lock.try_lock()) {
      contended = true;
      lock.lock();
    }
  } catch (...) {
    pop_entry();
    throw;
  }
  acquired_at_ = now();
  acquisitions_.fetch_add(1, std::memory_order_relaxed);
  if (contended) {
    contended_.fetch_add(1, std::memory_order_relaxed);
    wait_.fetch_add(acquired_at_ - asked, std::memory_order_relaxed);
  }
}

bool InstrumentedLockCore::try_acquire(Lock& lock) {
  if (!lock.try_lock()) return false;
  acquired_at_ = now();
  acquisitions_.fetch_add(1, std::memory_order_relaxed);
  InstrumentedThread* me = recorder_ ? InstrumentedThread::current() : nullptr;
  if (me != nullptr && &me->recorder() == recorder_.get()) me->push_entry(entry_);
  return true;
}

void InstrumentedLockCore::release(Lock& lock) {
  const Nanos held = now() - acquired_at_;
  lock.unlock();  // UsageError if the caller does not hold it: then nothing was held by it
  held_.fetch_add(held, std::memory_order_relaxed);
  pop_entry();
}

LockStats InstrumentedLockCore::stats() const noexcept {
  return LockStats{.acquisitions = acquisitions_.load(std::memory_order_relaxed),
                   .contended = contended_.load(std::memory_order_relaxed),
                   .acquire_wait = wait_.load(std::memory_order_relaxed),
                   .held = held_.load(std::memory_order_relaxed)};
}

void InstrumentedLockCore::report(const std::string& description) noexcept {
  if (!recorder_) return;
  const LockStats s = stats();
  try {
    recorder_->merge_lock(description, s.acquisitions, s.contended, s.acquire_wait, s.held);
  } catch (...) {  // out of memory for the record: the figures are lost, the program goes on
  }
  recorder_.reset();
}

InstrumentedLock::InstrumentedLock(std::string name, std::shared_ptr<Recorder> recorder)
    : Lock(std::move(name)), meter_(std::move(recorder), describe()) {}

InstrumentedLock::~InstrumentedLock() noexcept(false) {
  meter_.report(describe());
  check_destroyable();
}

InstrumentedMonitor::InstrumentedMonitor(std::string name, std::shared_ptr<Recorder> recorder)
    : Monitor(std::move(name)), meter_(std::move(recorder), describe()) {}

InstrumentedMonitor::~InstrumentedMonitor() noexcept(false) {
  meter_.report(describe());
  check_destroyable();
}

}  // namespace presto::instrument
