#include <presto/psim/link.hpp>

#include <memory>

#include <presto/psim/logical_process.hpp>

namespace presto::psim {

// The receiver's mutex as the link's spinlock. SynchroObject counts the spinlock as held around
// these calls (Spinlock's contract), so they use the mutex's algorithm without the count.
class Link::ReceiverLock final : public Spinlock {
 public:
  explicit ReceiverLock(LogicalProcess::Mutex& mutex) noexcept : mutex_(mutex) {}

 protected:
  void acquire() noexcept override { mutex_.acquire_uncounted(); }
  bool try_acquire() noexcept override { return mutex_.try_acquire_uncounted(); }
  void release() noexcept override { mutex_.release_uncounted(); }

 private:
  LogicalProcess::Mutex& mutex_;
};

Link::Link(LogicalProcess& from, LogicalProcess& to, Time lookahead)
    : SynchroObject(from.name() + "->" + to.name()), from_(from), to_(to), lookahead_(lookahead) {
  set_spinlock(std::make_unique<ReceiverLock>(to.mutex_));
}

Link::~Link() noexcept(false) { check_no_waiters(); }

Time Link::clock() const noexcept { return to_.in_[slot_].clock; }

std::uint64_t Link::null_messages() const noexcept { return to_.in_[slot_].null_messages; }

}  // namespace presto::psim
