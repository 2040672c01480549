#include <presto/barrier.hpp>

#include <presto/errors.hpp>
#include <presto/thread.hpp>

namespace presto {

Barrier::Barrier(std::size_t parties, std::string name) : SynchroObject(std::move(name)), parties_(parties) {
  if (parties == 0) throw UsageError(describe() + " created for 0 parties");
}

Barrier::~Barrier() noexcept(false) { check_no_waiters(); }

bool Barrier::arrive_and_wait() {
  spin_lock();
  if (++arrived_ < parties_) {
    block();  // the last arrival wakes the whole phase
    return false;
  }
  arrived_ = 0;
  ++phase_;
  ThreadQueue woken;
  while (Thread* t = recall()) woken.push_back(*t);
  spin_unlock();
  wakeup_all(woken);
  return true;
}

std::uint64_t Barrier::phase() const noexcept {
  auto& self = const_cast<Barrier&>(*this);
  self.spin_lock();
  std::uint64_t p = phase_;
  self.spin_unlock();
  return p;
}

}  // namespace presto
