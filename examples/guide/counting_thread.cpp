// Guide, chapter 4: a Thread subclass installed as the runtime's prototype (the paper's
// InstrumentedThread, reduced to counting). It redefines the lowest-level primitives, sleep
// and wakeup, and layers them on Thread's. set_thread_prototype() installs it in the running
// system: from then on every thread the runtime creates is cloned from it through the
// virtual constructor newthread().
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <presto/presto.hpp>

using namespace std::chrono_literals;

namespace {

// Where finished threads report their counts.
struct Report {
  presto::Spinlock lock;
  std::vector<std::string> lines;
};

class CountingThread : public presto::Thread {
 public:
  CountingThread(Report& report, presto::ThreadAttributes attributes = {})
      : Thread(std::move(attributes)), report_(report) {}

  // The virtual constructor: clones carry the prototype's report.
  std::unique_ptr<Thread> newthread(presto::ThreadAttributes attributes) const override {
    return std::make_unique<CountingThread>(report_, std::move(attributes));
  }

  // Runs on this thread, which is going to sleep.
  void sleep(presto::SynchroObject& so) override {
    ++sleeps_;
    Thread::sleep(so);
  }
  // Timed sleeps (sleep_for, timed waits) come here instead.
  bool sleep_until(presto::SynchroObject& so, presto::Clock::time_point deadline) override {
    ++sleeps_;
    return Thread::sleep_until(so, deadline);
  }
  // Runs on the waker (another thread, or the timer); count before the thread can run again.
  void wakeup(presto::SynchroObject& so) override {
    ++wakeups_;
    Thread::wakeup(so);
  }

 protected:
  // The body: what the thread was started with, then the report.
  void run() override {
    Thread::run();
    std::scoped_lock guard{report_.lock};
    report_.lines.push_back(describe() + ": " + std::to_string(sleeps_) + " sleeps, " + std::to_string(wakeups_) +
                            " wake-ups");
  }
  // A recycled control block starts a new thread: reset the per-thread state.
  void reinitialize(presto::ThreadAttributes attributes) override {
    Thread::reinitialize(std::move(attributes));
    sleeps_ = 0;
    wakeups_ = 0;
  }

 private:
  Report& report_;
  int sleeps_ = 0;
  int wakeups_ = 0;
};

}  // namespace

int main() {
  Report report;
  presto::Runtime rt{{.processors = 1}};
  bool counted = false;
  rt.run([&] {
    // Lateral extension: replace the prototype while the system runs. The old one comes back.
    std::unique_ptr<presto::Thread> old = rt.set_thread_prototype(std::make_unique<CountingThread>(report));
    presto::Semaphore ping_turn{0, "ping"}, pong_turn{0, "pong"};
    auto ping = presto::fork(presto::ThreadAttributes{.name = "ping"}, [&] {
      for (int i = 0; i < 3; ++i) {
        pong_turn.release();
        ping_turn.acquire();
      }
      presto::sleep_for(1ms);
    });
    auto pong = presto::fork(presto::ThreadAttributes{.name = "pong"}, [&] {
      for (int i = 0; i < 3; ++i) {
        pong_turn.acquire();
        ping_turn.release();
      }
      presto::sleep_for(1ms);
    });
    counted = dynamic_cast<const CountingThread*>(&ping.thread()) != nullptr;
    ping.join();
    pong.join();
  });
  std::printf("forked threads are CountingThreads: %s\n", counted ? "yes" : "no");
  for (const std::string& line : report.lines) std::printf("%s\n", line.c_str());
  if (!counted || report.lines.size() != 2) return 1;
  if (rt.processors() != 1) return 0;  // PRESTO_PROCESSORS overrode the config: counts vary
  return report.lines[0] == "thread 'pong' (id 3): 3 sleeps, 3 wake-ups" &&
                 report.lines[1] == "thread 'ping' (id 2): 4 sleeps, 4 wake-ups"
             ? 0
             : 1;
}
