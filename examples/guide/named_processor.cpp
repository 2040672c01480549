// Guide, chapter 4: a Processor subclass. Each processor names its OS thread (visible in top,
// ps -L and gdb), tries to pin it to one CPU, and counts how often it idles. The runtime
// makes its processors by cloning RuntimeConfig::processor_prototype through newprocessor().
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <presto/presto.hpp>

namespace {

struct ProcessorLog {
  presto::Spinlock lock;
  std::vector<std::string> lines;
};

class PinnedProcessor : public presto::Processor {
 public:
  explicit PinnedProcessor(ProcessorLog& log) : log_(log) {}

  std::unique_ptr<Processor> newprocessor() const override { return std::make_unique<PinnedProcessor>(log_); }

  std::uint64_t idles() const { return idles_; }

 protected:
  // On the processor's own OS thread, before its first dispatch. Processor 0 is the OS thread
  // that called run(), so whatever is changed here is restored in on_stop().
  void on_start() override {
    pthread_getname_np(pthread_self(), saved_name_, sizeof saved_name_);
    const std::string name = "sim-cpu-" + std::to_string(index());
    pthread_setname_np(pthread_self(), name.c_str());

    pinned_ = false;
    if (pthread_getaffinity_np(pthread_self(), sizeof saved_mask_, &saved_mask_) == 0) {
      const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(index() % cpus, &one);
      pinned_ = pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;  // may be refused
    }
    char check[16] = {};
    pthread_getname_np(pthread_self(), check, sizeof check);
    std::scoped_lock guard{log_.lock};
    log_.lines.push_back("processor " + std::to_string(index()) + " runs on OS thread '" + check + "'");
  }

  void on_stop() override {
    if (pinned_) pthread_setaffinity_np(pthread_self(), sizeof saved_mask_, &saved_mask_);
    pthread_setname_np(pthread_self(), saved_name_);
  }

  // Called when no thread is ready. The default spins briefly, then parks the OS thread.
  void idle() override {
    ++idles_;
    Processor::idle();
  }

 private:
  ProcessorLog& log_;
  char saved_name_[16] = {};
  cpu_set_t saved_mask_{};
  bool pinned_ = false;
  std::uint64_t idles_ = 0;  // touched only by this processor's OS thread
};

}  // namespace

int main() {
  ProcessorLog log;
  presto::Runtime rt{{.processors = 2, .processor_prototype = std::make_unique<PinnedProcessor>(log)}};
  long sum = rt.run([] {
    std::vector<presto::JoinHandle<long>> hs;
    for (long i = 1; i <= 100; ++i) hs.push_back(presto::fork([i] { return i; }));
    long s = 0;
    for (auto& h : hs) s += h.join();
    return s;
  });
  std::sort(log.lines.begin(), log.lines.end());
  for (const std::string& line : log.lines) std::printf("%s\n", line.c_str());
  std::uint64_t dispatches = 0;
  for (std::size_t i = 0; i < rt.processors(); ++i) dispatches += rt.processor(i).dispatches();
  const auto& p0 = dynamic_cast<const PinnedProcessor&>(rt.processor(0));
  std::printf("sum %ld; %llu dispatches over %zu processors (the runtime counted %llu); processor 0 idled %llu times\n",
              sum, static_cast<unsigned long long>(dispatches), rt.processors(),
              static_cast<unsigned long long>(rt.stats().dispatches), static_cast<unsigned long long>(p0.idles()));
  return sum == 5050 && log.lines.size() == rt.processors() && dispatches == rt.stats().dispatches ? 0 : 1;
}
