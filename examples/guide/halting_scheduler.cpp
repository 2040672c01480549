// Guide, chapter 4: a Scheduler that changes when the system halts (PSIM's trick).
// Simulated processes sleep on a VirtualClock until a virtual time. Nothing ever wakes them
// but the scheduler: when every thread is blocked, the runtime calls halt(), and this
// scheduler advances virtual time to the earliest wake-up and makes those threads ready.
// Only when no thread waits on the clock does it fall back to the default halt(), which
// ends the run (or reports a deadlock).
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <presto/presto.hpp>

namespace {

// A SynchroObject: waiters sleep until virtual time reaches their wake-up time.
class VirtualClock : public presto::SynchroObject {
 public:
  explicit VirtualClock(std::string name) : SynchroObject(std::move(name)) {}
  ~VirtualClock() noexcept(false) override { check_no_waiters(); }

  long now() {
    spin_lock();
    long t = now_;
    spin_unlock();
    return t;
  }

  // Sleeps until virtual time `t`.
  void sleep_until(long t) {
    presto::Thread& me = presto::Thread::current();
    spin_lock();
    if (t <= now_) {
      spin_unlock();
      return;
    }
    wake_at_[&me] = t;
    block();  // remember this thread and sleep; returns once advance() woke us, unlocked
  }

  // Advances to the earliest wake-up time and wakes every thread due then. Returns how many.
  std::size_t advance() {
    presto::ThreadQueue due;
    spin_lock();
    if (!wake_at_.empty()) {
      now_ = std::min_element(wake_at_.begin(), wake_at_.end(),
                              [](const auto& a, const auto& b) { return a.second < b.second; })
                 ->second;
      // recall(t) dequeues one particular waiter, to be woken once the spinlock is released.
      for (auto it = wake_at_.begin(); it != wake_at_.end();) {
        presto::Thread* t = const_cast<presto::Thread*>(it->first);
        if (it->second == now_ && recall(*t)) {
          due.push_back(*t);
          it = wake_at_.erase(it);
        } else {
          ++it;
        }
      }
    }
    spin_unlock();
    std::size_t woken = 0;
    for (; presto::Thread* t = due.pop_front(); ++woken) t->wakeup(*this);
    return woken;
  }

  std::string_view kind() const noexcept override { return "virtual clock"; }

 private:
  // Both guarded by the spinlock.
  long now_ = 0;
  std::unordered_map<const presto::Thread*, long> wake_at_;  // each waiter's wake-up time
};

class SimulationScheduler : public presto::Scheduler {
 public:
  explicit SimulationScheduler(VirtualClock& clock) : clock_(clock) {}

  void halt() override {
    if (clock_.advance() > 0) return;  // threads are ready again: the run goes on
    Scheduler::halt();                  // nothing left to simulate: halt (or report deadlock)
  }
  std::string_view name() const noexcept override { return "simulation"; }

 private:
  VirtualClock& clock_;
};

}  // namespace

int main() {
  VirtualClock clock{"virtual time"};  // outlives the runtime
  presto::Runtime rt{{.processors = 2, .scheduler = std::make_unique<SimulationScheduler>(clock)}};

  std::multimap<long, std::string> log;  // time -> event, sorted for a deterministic print
  presto::Spinlock log_lock;
  rt.run([&] {
    auto process = [&](std::string name, long period, long until) {
      for (long t = period; t <= until; t += period) {
        clock.sleep_until(t);
        std::scoped_lock guard{log_lock};
        log.emplace(clock.now(), name);
      }
    };
    auto a = presto::fork(process, std::string("fast"), 3, 12);
    auto b = presto::fork(process, std::string("slow"), 5, 15);
    a.join();
    b.join();
  });
  std::string line;
  for (const auto& [t, name] : log) line += "t=" + std::to_string(t) + " " + name + "; ";
  std::printf("scheduler '%s': %s\n", std::string(rt.scheduler().name()).c_str(), line.c_str());
  std::printf("virtual time at the end: %ld\n", clock.now());
  return line == "t=3 fast; t=5 slow; t=6 fast; t=9 fast; t=10 slow; t=12 fast; t=15 slow; " ? 0 : 1;
}
