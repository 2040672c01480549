#pragma once
// RwLock: a relinquishing readers-writer lock. Any number of readers hold it together
// (lock_shared), or one writer alone (lock). Std SharedLockable, so std::shared_lock,
// std::unique_lock and std::scoped_lock work.
//
// Fairness: phase-fair (Brandenburg and Anderson, "Spin-Based Reader-Writer Synchronization
// for Multiprocessor Real-Time Systems", 2010), built on sleeping rather than spinning:
// - A reader enters at once unless a writer holds the lock or waits for it: a waiting writer
//   stops new readers (writer preference), so a stream of readers cannot starve a writer.
// - When a writer unlocks, every reader waiting at that moment enters together, before the
//   next writer; writers queue behind them in FIFO order. So a stream of writers cannot starve
//   readers either: a reader waits for at most one writer phase, a writer for at most one
//   reader phase plus the writers queued before it.
// - Waiters are handed the lock by the thread that releases it (no barging, no re-check).
//
// Timed and cancellable forms (try_lock_until, lock(token), ...) give up cleanly: a writer
// that gives up lets in the readers it was holding back, if no other writer waits.
//
// Not recursive, and not upgradable: acquiring it in either mode while holding it exclusively
// raises UsageError; lock() while holding it shared waits forever (reported by Deadlock:
// readers are counted, not named). unlock() by a thread that is not the writer, and
// unlock_shared() with no reader inside, raise UsageError.

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include <presto/stop_token.hpp>
#include <presto/synchro_object.hpp>

namespace presto {

class RwLock : public SynchroObject {
 public:
  explicit RwLock(std::string name = {});
  ~RwLock() noexcept(false) override;

  // Exclusive (writer) side.
  void lock();
  bool try_lock();
  void unlock();
  bool try_lock_until(Clock::time_point deadline) { return lock_until(false, &deadline, {}); }
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout) {
    return try_lock_until(Clock::now() + std::chrono::ceil<Clock::duration>(timeout));
  }
  void lock(const StopToken& token) { lock_until(false, nullptr, token); }  // Cancelled

  // Shared (reader) side.
  void lock_shared();
  bool try_lock_shared();
  void unlock_shared();
  bool try_lock_shared_until(Clock::time_point deadline) { return lock_until(true, &deadline, {}); }
  template <class Rep, class Period>
  bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& timeout) {
    return try_lock_shared_until(Clock::now() + std::chrono::ceil<Clock::duration>(timeout));
  }
  void lock_shared(const StopToken& token) { lock_until(true, nullptr, token); }  // Cancelled

  // Snapshots, for tests and reports.
  std::size_t readers() const noexcept;
  bool held_exclusively() const noexcept;

  std::string_view kind() const noexcept override { return "rw lock"; }

 private:
  // The readers' wait queue; writers wait on the RwLock itself.
  class ReaderQueue final : public SynchroObject {
   public:
    explicit ReaderQueue(const RwLock& owner) : owner_(owner) {}
    ~ReaderQueue() noexcept(false) override { check_no_waiters(); }
    void check() { check_no_waiters(); }
    std::string_view kind() const noexcept override { return "readers of"; }
    std::string describe() const override { return "readers of " + owner_.describe(); }

   private:
    const RwLock& owner_;
  };

  // Spinlock held: may the caller enter in this mode now? (and enters if so). UsageError
  // (spinlock released) if it holds the lock exclusively already.
  bool enter_locked(bool shared);
  bool lock_until(bool shared, const Clock::time_point* deadline, const StopToken& token);
  // Spinlock held: hand the lock to the waiting readers (all) or writer (next); queues the
  // threads to wake on `woken` (readers) or returns the writer.
  void admit_readers(ThreadQueue& woken) noexcept;
  Thread* admit_writer() noexcept;
  [[noreturn, gnu::cold]] void misuse(const char* what);

  // Guarded by the spinlock.
  std::size_t readers_ = 0;
  Thread* writer_ = nullptr;
  ReaderQueue waiting_readers_{*this};
};

}  // namespace presto
