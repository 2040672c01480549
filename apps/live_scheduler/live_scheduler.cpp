// presto-live-scheduler: PRESTO's ThreadPriorityHeap story, end to end. A program starts
// under the default scheduler and pool; while it runs, with a batch of jobs ready, it
// installs an earliest-deadline-first pool inside a scheduler that logs its decisions
// (edf_pool.hpp), and the order in which the jobs are dispatched changes from the order they
// were created to the order of their deadlines.
//
// Each phase makes --jobs jobs with deadlines in a seeded random order. While they are being
// made, every other processor is held by a "holder" thread, so that all the jobs are ready
// before any runs and the order of dispatch is the pool's alone. Checked: in phase 2 the
// scheduler's log lists the jobs in deadline order, and every job of both phases ran once.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <presto/presto.hpp>

#include "command_line.hpp"
#include "edf_pool.hpp"

namespace {

struct Options {
  std::size_t processors = 1;
  std::size_t jobs = 8;
  std::uint64_t seed = 1;
};

constexpr const char* usage =
    "usage: %s [--processors P] [--jobs N] [--seed S]\n"
    "Runs N jobs (default 8) with random deadlines (seed S, default 1) on P processors\n"
    "(default 1) under the default pool, installs an earliest-deadline-first pool and a\n"
    "logging scheduler while the program runs, runs N more, and prints both orders of\n"
    "dispatch. Exits 1 if the second order does not follow the deadlines. P = 0: one\n"
    "processor per hardware thread.\n";

bool parse(int argc, char** argv, Options& o) {
  presto::apps::CommandLine cl{usage};
  cl.processors(o.processors).option("--jobs", o.jobs).option("--seed", o.seed);
  if (!cl.parse(argc, argv)) return false;
  if (o.jobs == 0) return cl.error("--jobs must be positive");
  return true;
}

struct Job {
  std::string name;
  int deadline_ms;  // after the phase's base time
  std::uint64_t id = 0;
};

// One phase: holds the other processors, makes the jobs (ready, none running yet), calls
// `install` with them ready, lets the processors go and waits for the jobs. Returns the jobs
// in the order they began to run, as they recorded it.
template <class Install>
std::vector<std::size_t> phase(std::vector<Job>& jobs, std::size_t processors, Install install) {
  presto::Spinlock lock;
  std::vector<std::size_t> started;
  started.reserve(jobs.size());
  std::atomic<std::size_t> holding{0};
  std::atomic<bool> release{false};
  std::vector<presto::JoinHandle<void>> holders;
  for (std::size_t p = 1; p < processors; ++p) {
    holders.push_back(presto::fork(presto::ThreadAttributes{.name = "holder", .affinity = p}, [&] {
      holding.fetch_add(1);
      while (!release.load()) std::this_thread::yield();  // an OS yield: keeps the processor
    }));
  }
  while (holding.load() != holders.size()) presto::this_thread::yield();

  const auto base = presto::Clock::now() + std::chrono::seconds(1);
  std::vector<presto::JoinHandle<void>> handles;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    presto::ThreadAttributes a{.name = jobs[i].name, .deadline = base + std::chrono::milliseconds(jobs[i].deadline_ms)};
    handles.push_back(presto::fork(std::move(a), [&lock, &started, i] {
      std::scoped_lock guard{lock};
      started.push_back(i);
    }));
    jobs[i].id = handles.back().thread().id();
  }
  install();
  release.store(true);
  for (auto& h : holders) h.join();
  for (auto& h : handles) h.join();
  return started;
}

void print_order(const char* what, const std::vector<std::size_t>& order, const std::vector<Job>& jobs) {
  std::printf("  %s:", what);
  for (std::size_t i : order) std::printf(" %s(+%dms)", jobs[i].name.c_str(), jobs[i].deadline_ms);
  std::printf("\n");
}

std::vector<Job> make_jobs(const char* prefix, std::size_t n, std::mt19937_64& random) {
  std::vector<int> slots(n);
  std::iota(slots.begin(), slots.end(), 1);
  std::shuffle(slots.begin(), slots.end(), random);
  std::vector<Job> jobs;
  for (std::size_t i = 0; i < n; ++i) jobs.push_back({prefix + std::to_string(i), slots[i] * 10});
  return jobs;
}

bool ran_once(const std::vector<std::size_t>& started, std::size_t n) {
  std::vector<std::size_t> sorted = started;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::size_t> all(n);
  std::iota(all.begin(), all.end(), std::size_t{0});
  return sorted == all;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  presto::Runtime rt{{.processors = o.processors, .seed = o.seed}};
  std::mt19937_64 random{o.seed};
  std::vector<Job> first = make_jobs("a", o.jobs, random);
  std::vector<Job> second = make_jobs("b", o.jobs, random);
  bool ok = true;
  std::printf("presto-live-scheduler: %zu jobs a phase, %zu processor%s, seed %llu\n", o.jobs, rt.processors(),
              rt.processors() == 1 ? "" : "s", static_cast<unsigned long long>(o.seed));
  rt.run([&] {
    presto::Runtime& self = *presto::this_thread::runtime();
    std::printf("phase 1: scheduler '%s', pool '%s'\n", std::string(self.scheduler().name()).c_str(),
                std::string(self.scheduler().pool().name()).c_str());
    auto started = phase(first, o.processors, [] {});
    print_order("jobs in the order they started", started, first);
    ok = ran_once(started, first.size()) && ok;

    LoggingScheduler* logging = nullptr;
    auto order = phase(second, o.processors, [&] {
      std::printf("installing scheduler 'logging' with pool 'earliest-deadline-first' while %zu jobs are ready\n",
                  second.size());
      auto next = std::make_unique<LoggingScheduler>(std::make_unique<EdfPool>());
      logging = next.get();
      auto old = self.replace_scheduler(std::move(next));
      std::printf("  (replaced scheduler '%s' and its pool '%s')\n", std::string(old->name()).c_str(),
                  std::string(old->pool().name()).c_str());
    });
    std::printf("phase 2: scheduler '%s', pool '%s'\n", std::string(self.scheduler().name()).c_str(),
                std::string(self.scheduler().pool().name()).c_str());
    print_order("jobs in the order they started", order, second);
    ok = ran_once(order, second.size()) && ok;

    // The scheduler's own log: the jobs, in the order it dispatched them (holders and main
    // are left out).
    std::vector<std::size_t> dispatched;
    for (std::uint64_t id : logging->dispatched()) {
      for (std::size_t i = 0; i < second.size(); ++i) {
        if (second[i].id == id) dispatched.push_back(i);
      }
    }
    print_order("the scheduler's log of dispatches", dispatched, second);
    const bool by_deadline =
        dispatched.size() == second.size() &&
        std::is_sorted(dispatched.begin(), dispatched.end(),
                       [&](std::size_t a, std::size_t b) { return second[a].deadline_ms < second[b].deadline_ms; });
    std::printf("check: phase 2 dispatched in deadline order: %s; every job ran once: %s\n", by_deadline ? "ok" : "FAILED",
                ok ? "ok" : "FAILED");
    ok = ok && by_deadline;
  });
  return ok ? 0 : 1;
}
