#pragma once
// InstrumentedLock and InstrumentedMonitor: Lock and Monitor that also count acquisitions,
// how many found the lock held (contention), the time spent waiting to acquire it and the time
// it was held. Following Quartz, the lock is on the holder's profile stack from before the
// acquisition to after the release, so the Recorder charges waiting and holding processor time
// to it. Their figures go to the recorder when the object is destroyed, and stats() reads them
// at any time.
//
// lock()/unlock() (entry()/exit()) hide Lock's non-virtual ones: calls through a plain `Lock&`
// or `Monitor&` are not measured. A Condition wait inside an InstrumentedMonitor releases and
// re-acquires it unmeasured: the hold time then includes the wait.
//
// The recorder is the one given, or else the calling thread's (if it is an
// InstrumentedThread); with none, the object still measures, with the steady clock.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include <presto/instrument/recorder.hpp>
#include <presto/lock.hpp>
#include <presto/monitor.hpp>

namespace presto::instrument {

struct LockStats {
  std::uint64_t acquisitions = 0;
  std::uint64_t contended = 0;  // acquisitions that found the lock held
  Nanos acquire_wait = 0;       // total time from asking for the lock to getting it
  Nanos held = 0;               // total time from getting it to releasing it
};

// The measuring part of InstrumentedLock and InstrumentedMonitor.
class InstrumentedLockCore {
 public:
  InstrumentedLockCore(std::shared_ptr<Recorder> recorder, const std::string& description);
  InstrumentedLockCore(const InstrumentedLockCore&) = delete;
  InstrumentedLockCore& operator=(const InstrumentedLockCore&) = delete;

  void acquire(Lock& lock);
  bool try_acquire(Lock& lock);
  void release(Lock& lock);
  LockStats stats() const noexcept;
  // Hands the figures to the recorder, once (the owner's destructor).
  void report(const std::string& description) noexcept;

 private:
  Nanos now() const noexcept;
  void pop_entry() noexcept;

  std::shared_ptr<Recorder> recorder_;
  std::uint32_t entry_ = 0;  // the lock's line in the Quartz profile (with a recorder)
  // Written by the holder only; atomics so that stats() may read them at any time.
  std::atomic<std::uint64_t> acquisitions_{0};
  std::atomic<std::uint64_t> contended_{0};
  std::atomic<Nanos> wait_{0};
  std::atomic<Nanos> held_{0};
  Nanos acquired_at_ = 0;
};

class InstrumentedLock : public Lock {
 public:
  explicit InstrumentedLock(std::string name = {}, std::shared_ptr<Recorder> recorder = nullptr);
  ~InstrumentedLock() noexcept(false) override;

  void lock() { meter_.acquire(*this); }
  bool try_lock() { return meter_.try_acquire(*this); }
  void unlock() { meter_.release(*this); }
  LockStats stats() const noexcept { return meter_.stats(); }

 private:
  InstrumentedLockCore meter_;
};

class InstrumentedMonitor : public Monitor {
 public:
  explicit InstrumentedMonitor(std::string name = {}, std::shared_ptr<Recorder> recorder = nullptr);
  ~InstrumentedMonitor() noexcept(false) override;

  void entry() { meter_.acquire(*this); }
  void exit() { meter_.release(*this); }
  LockStats stats() const noexcept { return meter_.stats(); }

  // RAII entry guard, as Monitor::Entry.
  class Entry {
   public:
    explicit Entry(InstrumentedMonitor& monitor) : monitor_(monitor) { monitor_.entry(); }
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;
    ~Entry() noexcept(false) { monitor_.exit(); }
    InstrumentedMonitor& monitor() const noexcept { return monitor_; }

   private:
    InstrumentedMonitor& monitor_;
  };

 private:
  InstrumentedLockCore meter_;
};

}  // namespace presto::instrument
