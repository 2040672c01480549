#pragma once
// OnItsOwnCpu: a Processor pinned to a CPU of its own, for tests that need two processors to
// run at the same moment (tests/core/owned_queue_test.cpp, tests/races).

#include <atomic>
#include <memory>
#include <vector>

#include <pthread.h>
#include <sched.h>

#include <presto/processor.hpp>

namespace presto::test {

// A processor pinned to a CPU of its own: a served steal needs the thief and the owner on their
// CPUs at once, within the thief's wait of a few microseconds. Unpinned, a loaded machine kept
// them apart (found 2026-12-06: with two busy processes on a 2-core machine, no steal in 2,000
// rounds was served, and about 200 revoked): the OS placed the thief's processor, woken by the
// owner's batch, on the owner's CPU, so it ran only while the owner did not.
class OnItsOwnCpu final : public Processor {
 public:
  // The CPUs this process may run on, or fewer than two if it cannot run on two at once.
  static std::vector<int> cpus() {
    cpu_set_t set;
    std::vector<int> found;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return found;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) found.push_back(cpu);
    }
    return found;
  }
  // Counts the processors it failed to pin into `unpinned` (checked after the run: Catch's
  // assertions are for the test's own thread).
  explicit OnItsOwnCpu(std::atomic<int>& unpinned) : unpinned_(unpinned) {}
  std::unique_ptr<Processor> newprocessor() const override { return std::make_unique<OnItsOwnCpu>(unpinned_); }

 protected:
  void on_start() override {
    const std::vector<int> allowed = cpus();
    if (allowed.empty() || sched_getaffinity(0, sizeof before_, &before_) != 0) {
      unpinned_.fetch_add(1);
      return;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(allowed[index() % allowed.size()], &set);
    pinned_ = pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
    if (!pinned_) unpinned_.fetch_add(1);
  }
  // Processor 0 is the test's own thread: it may go on to run anywhere again.
  void on_stop() override {
    if (pinned_) pthread_setaffinity_np(pthread_self(), sizeof before_, &before_);
  }

 private:
  std::atomic<int>& unpinned_;
  cpu_set_t before_{};
  bool pinned_ = false;
};

}  // namespace presto::test
