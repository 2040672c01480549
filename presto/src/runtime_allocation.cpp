#include "runtime_allocation.hpp"

#include <dirent.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include <spdlog/spdlog.h>

#include <presto/asat_allocation.hpp>
#include <presto/detail/cpu.hpp>
#include <presto/errors.hpp>
#include <presto/hybrid_allocation.hpp>
#include <presto/load_allocation.hpp>
#include <presto/processor.hpp>
#include <presto/runtime.hpp>
#include <presto/this_thread.hpp>

namespace presto::detail {

namespace {

bool is_fixed(const AllocationPolicy& p) { return typeid(p) == typeid(FixedAllocation); }

// One member of the timed barrier: arrive, wait for all, leave. Polls, and yields its
// processor now and then so that a member that landed on a busy processor cannot starve it.
struct TimedBarrier {
  explicit TimedBarrier(std::size_t n) : members(n), enter(n), leave(n) {}
  void pass(std::size_t slot) noexcept {
    enter[slot] = Clock::now();
    arrived.fetch_add(1, std::memory_order_acq_rel);
    for (unsigned polls = 1; arrived.load(std::memory_order_acquire) < members && !abandoned.load(std::memory_order_relaxed);
         ++polls) {
      if (polls % 1024 == 0) {  // members are presto threads
        this_thread::yield();
      } else {
        relax_cpu();
      }
    }
    leave[slot] = Clock::now();
  }
  std::chrono::nanoseconds passage() const {
    return *std::max_element(leave.begin(), leave.end()) - *std::min_element(enter.begin(), enter.end());
  }
  std::atomic<std::size_t> arrived{0};
  std::atomic<bool> abandoned{false};  // a member could not be forked: the others leave
  std::size_t members;
  std::vector<Clock::time_point> enter;
  std::vector<Clock::time_point> leave;
};

// The running count of /proc/loadavg ("0.62 1.52 2.20 3/90 25258": 3): runnable threads of
// the whole system, the reader included.
std::size_t system_running() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return 0;
  unsigned long running = 0;
  unsigned long total = 0;
  double l1 = 0, l5 = 0, l15 = 0;
  const int got = std::fscanf(f, "%lf %lf %lf %lu/%lu", &l1, &l5, &l15, &running, &total);
  std::fclose(f);
  return got == 5 ? running : 0;
}

// Threads of this process in state R (running or runnable), from /proc/self/task/*/stat.
std::size_t own_running() {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return 1;
  std::size_t running = 0;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const std::string path = std::string("/proc/self/task/") + e->d_name + "/stat";
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (f == nullptr) continue;  // the thread has ended
    char line[512];
    const std::size_t n = std::fread(line, 1, sizeof line - 1, f);
    std::fclose(f);
    line[n] = '\0';
    // "tid (comm) S ...": the state follows the last ')' (comm may hold parentheses).
    if (const char* close = std::strrchr(line, ')'); close != nullptr && close[1] == ' ' && close[2] == 'R') ++running;
  }
  closedir(dir);
  return std::max<std::size_t>(running, 1);  // the reader runs
}

}  // namespace

RuntimeAllocation::RuntimeAllocation(Runtime& rt, std::unique_ptr<AllocationPolicy> policy)
    : rt_(rt),
      policy_(policy ? std::move(policy) : std::make_unique<FixedAllocation>()),
      limit_(rt.processors()),
      adaptive_(!is_fixed(*policy_)) {
  if (adaptive_.load(std::memory_order_relaxed)) {
    rt_.logger().info("runtime '{}': allocation policy {}, at most {} processors", rt_.name(), policy_->describe(), limit_);
  }
}

std::unique_ptr<AllocationPolicy> RuntimeAllocation::replace(std::unique_ptr<AllocationPolicy> next, std::size_t limit) {
  if (!next) throw UsageError("set_allocation_policy: runtime '" + rt_.name() + "': the new policy is null");
  if (deciding_.load(std::memory_order_relaxed) == &Thread::current()) {
    throw UsageError("set_allocation_policy called by " + Thread::current().describe() + " inside " +
                     policy_->describe() + "'s decide(), in runtime '" + rt_.name() + "'");
  }
  Backoff backoff;
  while (!try_enter()) {  // a region entry is inside decide(): wait for it to leave
    if (Processor::current() != nullptr) {  // a presto thread
      this_thread::yield();
    } else {
      backoff.pause();
    }
  }
  limit_ = limit != 0 ? limit : rt_.processors();
  std::unique_ptr<AllocationPolicy> old = std::exchange(policy_, std::move(next));
  adaptive_.store(!is_fixed(*policy_), std::memory_order_relaxed);
  rt_.logger().info("runtime '{}': allocation policy {} replaces {}, at most {} processors", rt_.name(),
                    policy_->describe(), old->describe(), limit_);
  exit();
  return old;
}

void RuntimeAllocation::consult() {
  if (!try_enter()) return;  // another region is asking: go on with the current count
  deciding_.store(&Thread::current(), std::memory_order_relaxed);
  struct Exit {
    RuntimeAllocation& a;
    ~Exit() {
      a.deciding_.store(nullptr, std::memory_order_relaxed);
      a.exit();
    }
  } guard{*this};
  const std::size_t current = rt_.processors();
  std::size_t want = 0;
  try {
    want = policy_->decide(current, limit_, *this);
  } catch (...) {
    if (rt_.processors() != current) rt_.set_processors(current);  // a probe may have added one
    throw;
  }
  const std::size_t most = std::max(limit_, current);
  if (want == 0 || want > most) {
    // A probe may have started processors: put the count back before reporting.
    if (rt_.processors() != current) rt_.set_processors(current);
    throw UsageError("allocation policy " + policy_->describe() + " of runtime '" + rt_.name() + "' asked for " +
                     std::to_string(want) + " processors (allowed: 1 to " + std::to_string(most) + "), in " +
                     Thread::current().describe());
  }
  if (rt_.processors() != want) {
    rt_.logger().debug("runtime '{}': {} sets {} processors (were {})", rt_.name(), policy_->describe(), want, current);
    rt_.set_processors(want);
  }
}

std::chrono::nanoseconds RuntimeAllocation::now() { return Clock::now().time_since_epoch(); }

std::chrono::nanoseconds RuntimeAllocation::timed_barrier(std::size_t processors) {
  if (processors == 0) throw UsageError("AllocationEnvironment::timed_barrier(0): a barrier needs a processor");
  if (processors > rt_.processors()) {
    try {
      rt_.set_processors(processors);
    } catch (const std::exception& e) {
      throw std::runtime_error("allocation policy " + policy_->describe() + " of runtime '" + rt_.name() +
                               "': its probe could not start processor " + std::to_string(processors - 1) + ": " +
                               e.what());
    }
  }
  TimedBarrier barrier(processors);
  const Processor* here = Processor::current();
  const bool joins = here != nullptr && &here->runtime() == &rt_ && here->index() < processors;
  std::vector<JoinHandle<void>> members;
  members.reserve(processors);
  std::size_t slot = joins ? 1 : 0;
  try {
    for (std::size_t k = 0; k < processors; ++k) {
      if (joins && k == here->index()) continue;
      members.push_back(rt_.fork(ThreadAttributes{.name = "timed barrier", .affinity = k},
                                 [&barrier, s = slot] { barrier.pass(s); }));
      ++slot;
    }
  } catch (...) {  // no memory for a member: release those already waiting, then report
    barrier.abandoned.store(true, std::memory_order_relaxed);
    for (auto& m : members) m.join();
    throw;
  }
  if (joins) barrier.pass(0);
  for (auto& m : members) m.join();
  return barrier.passage();
}

std::size_t RuntimeAllocation::others_running() {
  const std::size_t all = system_running();
  const std::size_t mine = own_running();
  return all > mine ? all - mine : 0;
}

std::size_t RuntimeAllocation::hardware_processors() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));  // taskset is obeyed
  return std::max(1u, std::thread::hardware_concurrency());
}

std::unique_ptr<AllocationPolicy> RuntimeAllocation::from_environment() {
  const char* v = std::getenv("PRESTO_ALLOCATION");
  if (v == nullptr || *v == '\0') return nullptr;
  const std::string name = v;
  if (name == "fixed") return std::make_unique<FixedAllocation>();
  if (name == "asat") return std::make_unique<AsatAllocation>();
  if (name == "load") return std::make_unique<LoadAllocation>();
  if (name == "hybrid") return std::make_unique<HybridAllocation>();
  throw UsageError("PRESTO_ALLOCATION='" + name + "' is not one of fixed, asat, load, hybrid");
}

}  // namespace presto::detail
