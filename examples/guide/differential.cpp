// Guide, chapter 4: differential extension. A class derived from an existing one redefines
// only what differs, and layers the new operation on the old one: DeadlineThread's body is
// presto::Thread's, followed by a check of the thread's deadline. Installed as the thread
// prototype, every thread the runtime makes is one (the virtual constructor clones it).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>

#include <presto/presto.hpp>

class DeadlineThread : public presto::Thread {
 public:
  DeadlineThread(std::atomic<int>& met, std::atomic<int>& missed, presto::ThreadAttributes a = {})
      : presto::Thread(std::move(a)), met_(met), missed_(missed) {}

  std::unique_ptr<presto::Thread> newthread(presto::ThreadAttributes a) const override {
    return std::make_unique<DeadlineThread>(met_, missed_, std::move(a));
  }

 protected:
  void run() override {
    presto::Thread::run();  // the body the thread was started with
    if (const auto d = deadline()) (presto::Clock::now() <= *d ? met_ : missed_).fetch_add(1);
  }

 private:
  std::atomic<int>& met_;
  std::atomic<int>& missed_;
};

int main() {
  std::atomic<int> met{0}, missed{0};
  presto::Runtime rt{{.processors = 2, .thread_prototype = std::make_unique<DeadlineThread>(met, missed)}};
  rt.run([] {
    const auto now = presto::Clock::now();
    auto late = presto::fork(presto::ThreadAttributes{.name = "late", .deadline = now - std::chrono::seconds(1)}, [] {});
    auto on_time = presto::fork(presto::ThreadAttributes{.name = "on time", .deadline = now + std::chrono::hours(1)}, [] {});
    auto no_deadline = presto::fork([] {});  // not counted
    late.join();
    on_time.join();
    no_deadline.join();
  });
  std::printf("deadlines met: %d, missed: %d\n", met.load(), missed.load());
  return met == 1 && missed == 1 ? 0 : 1;
}
