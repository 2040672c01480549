// Guide, chapter 4: new synchronization objects from SynchroObject.
// A SynchroObject is a spinlock, a FIFO queue of waiting threads and a name, with no
// semantics: Event and CountDownLatch below supply the policy (when to wait, whom to wake).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <presto/presto.hpp>

using namespace std::chrono_literals;

namespace {

// Wakes the threads recall()ed under the spinlock into `woken`, after the spinlock was
// released, as the recipe in synchro_object.hpp does. wakeup() accepts only a thread that
// was recall()ed from `so` and is on no queue, so each is popped off `woken` first.
void wake_all(presto::ThreadQueue& woken, presto::SynchroObject& so) {
  while (presto::Thread* t = woken.pop_front()) t->wakeup(so);
}

// A one-shot event: wait() sleeps until set(); once set it stays set.
class Event : public presto::SynchroObject {
 public:
  explicit Event(std::string name = {}) : SynchroObject(std::move(name)) {}
  ~Event() noexcept(false) override { check_no_waiters(); }

  void wait() {
    spin_lock();
    if (set_.load(std::memory_order_relaxed)) {
      spin_unlock();
      return;
    }
    block();  // remember this thread and sleep; returns woken, without the spinlock
  }

  // false if the deadline passed first.
  bool wait_until(presto::Clock::time_point deadline) {
    spin_lock();
    if (set_.load(std::memory_order_relaxed)) {
      spin_unlock();
      return true;
    }
    return block_until(deadline);  // on a timeout the thread is no longer a waiter
  }

  void set() {
    presto::ThreadQueue woken;
    spin_lock();
    set_.store(true, std::memory_order_release);
    while (presto::Thread* t = recall()) woken.push_back(*t);
    spin_unlock();
    wake_all(woken, *this);
  }

  bool is_set() const noexcept { return set_.load(std::memory_order_acquire); }
  std::string_view kind() const noexcept override { return "event"; }

 private:
  std::atomic<bool> set_{false};  // written under the spinlock
};

// A count-down latch: wait() sleeps until count_down() has been called `count` times.
class CountDownLatch : public presto::SynchroObject {
 public:
  explicit CountDownLatch(long count, std::string name = {}) : SynchroObject(std::move(name)), count_(count) {}
  ~CountDownLatch() noexcept(false) override { check_no_waiters(); }

  void count_down() {
    presto::ThreadQueue woken;
    spin_lock();
    if (count_ > 0 && --count_ == 0) {
      while (presto::Thread* t = recall()) woken.push_back(*t);
    }
    spin_unlock();
    wake_all(woken, *this);
  }

  void wait() {
    spin_lock();
    if (count_ == 0) {
      spin_unlock();
      return;
    }
    block();
  }

  std::string_view kind() const noexcept override { return "latch"; }

 private:
  long count_;  // guarded by the spinlock
};

}  // namespace

int main() {
  presto::Runtime rt{{.processors = 2}};
  return rt.run([] {
    int failures = 0;
    Event start{"start"};
    CountDownLatch finished{4, "finished"};
    presto::AtomicInt started_early{0}, ran{0};

    std::vector<presto::JoinHandle<void>> workers;
    for (int i = 0; i < 4; ++i) {
      workers.push_back(presto::fork([&] {
        start.wait();  // all four sleep here until the event is set
        if (!start.is_set()) ++started_early;
        ++ran;
        finished.count_down();
      }));
    }
    presto::this_thread::yield();  // give the workers a chance to reach wait()
    std::printf("before set: %ld workers ran\n", static_cast<long>(ran));
    failures += ran != 0;
    start.set();
    finished.wait();
    std::printf("after set: %ld workers ran, %ld before the event\n", static_cast<long>(ran),
                static_cast<long>(started_early));
    failures += ran != 4 || started_early != 0;
    for (auto& w : workers) w.join();

    Event never{"never"};
    bool woken = never.wait_until(presto::Clock::now() + 1ms);
    std::printf("timed wait on an event nobody sets: %s\n", woken ? "woken" : "timed out");
    failures += woken;

    // Destroying an object that threads wait on is a usage error naming it; here it is
    // avoided: every worker has passed both objects before they go out of scope.
    return failures;
  });
}
