#include <presto/futures/when_any.hpp>

#include <limits>

#include <presto/errors.hpp>
#include <presto/thread.hpp>

namespace presto::futures::detail {

// What a wait_any sleeps on; the first watcher to fire chooses.
class AnyGate final : public SynchroObject {
 public:
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  AnyGate() : SynchroObject("when_any") {}
  ~AnyGate() noexcept(false) override { check_no_waiters(); }
  std::string_view kind() const noexcept override { return "gate"; }
  Thread* waiter = nullptr;
  std::size_t chosen = kNone;  // guarded by the spinlock
};

void AnyEntry::notify() noexcept {
  // Under the promise's spinlock (order: promise, then gate, as everywhere here).
  AnyGate& g = *gate;
  Thread* t = g.waiter;
  g.spin_lock();
  bool wake = false;
  if (g.chosen == AnyGate::kNone) {
    g.chosen = index;
    wake = g.recall(*t);  // false: it has not slept yet, or gave up (timed out, cancelled)
  }
  g.spin_unlock();
  if (wake) {
    try {
      t->wakeup(g);  // the last touch of the gate: its thread may return once this runs
    } catch (...) {
      // Only a subclass's wakeup can throw; the thread then shows in the deadlock report.
    }
  }
}

std::optional<std::size_t> wait_any(std::span<AnyEntry> entries, const Clock::time_point* deadline,
                                    const StopToken& token) {
  if (entries.empty()) {
    throw UsageError(Thread::current().describe() + " called wait_any on no futures: none could ever be ready");
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].ready(entries[i].promise)) return i;  // the lowest already ready
  }
  AnyGate gate;
  gate.waiter = &Thread::current();
  std::size_t watched = 0;
  for (; watched < entries.size(); ++watched) {
    AnyEntry& e = entries[watched];
    e.gate = &gate;
    e.index = watched;
    if (!e.watch(e.promise, e)) {  // settled meanwhile
      e.notify();
      ++watched;
      break;
    }
  }
  WaitStatus status = WaitStatus::woken;
  {
    CancellableWait waiting{gate, token};
    gate.spin_lock();
    if (gate.chosen == AnyGate::kNone) {
      status = waiting.block(deadline);
    } else {
      gate.spin_unlock();
    }
    for (std::size_t i = 0; i < watched; ++i) entries[i].unwatch(entries[i].promise, entries[i]);
    // Every watcher is off its promise now: nothing touches the gate any more.
    if (status == WaitStatus::cancelled) waiting.throw_cancelled("wait_any");
  }
  gate.spin_lock();
  const std::size_t chosen = gate.chosen;  // set even after a time-out, if one fired meanwhile
  gate.spin_unlock();
  if (chosen == AnyGate::kNone) return std::nullopt;
  return chosen;
}

}  // namespace presto::futures::detail
