#include "suite.hpp"

#include <pthread.h>

#include <cstdio>

#include <boost/fiber/all.hpp>
#include <thread>
#include <vector>

#if PRESTO_BENCH_ONETBB
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#endif

namespace presto::bench {

const Result& Suite::measure(std::string name, std::string system, std::size_t processors, std::uint64_t operations,
                             const std::function<void()>& body, std::uint64_t param, int repetitions) {
  results_.push_back(bench::measure(std::move(name), std::move(system), processors, operations,
                                    repetitions > 0 ? repetitions : options_.repetitions, body, param));
  return results_.back();
}

const Result& Suite::measure_timed(std::string name, std::string system, std::size_t processors,
                                   std::uint64_t operations, const Timed& body, std::uint64_t param) {
  results_.push_back(
      bench::measure_timed(std::move(name), std::move(system), processors, operations, options_.repetitions, body, param));
  return results_.back();
}

void Suite::measure_alternating(const std::vector<Alternative>& alts) {
  for (Result& r : bench::measure_alternating(alts, options_.repetitions)) results_.push_back(std::move(r));
}

const Result& Suite::add(Result r) {
  print_json(r);
  results_.push_back(std::move(r));
  return results_.back();
}

const Result* Suite::find(const std::string& name, const std::string& system, std::size_t processors,
                          std::uint64_t param) const {
  for (const Result& r : results_) {
    if (r.name == name && r.system == system && r.processors == processors && r.param == param) return &r;
  }
  return nullptr;
}

namespace {

// The CPUs of `allowed` from its `skip`-th on, `take` of them at most (in CPU order).
cpu_set_t some_of(const cpu_set_t& allowed, std::size_t skip, std::size_t take) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  for (int cpu = 0; cpu < CPU_SETSIZE && take > 0; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    if (skip > 0) {
      --skip;
      continue;
    }
    CPU_SET(cpu, &mask);
    --take;
  }
  return mask;
}

}  // namespace

Pinned::Pinned(std::size_t cpus) {
  pthread_getaffinity_np(pthread_self(), sizeof saved_, &saved_);
  const cpu_set_t mask = some_of(saved_, 0, cpus);
  pthread_setaffinity_np(pthread_self(), sizeof mask, &mask);
}

void Pinned::only(std::size_t index) {
  cpu_set_t allowed;
  pthread_getaffinity_np(pthread_self(), sizeof allowed, &allowed);
  const int count = CPU_COUNT(&allowed);
  if (count == 0) return;
  const cpu_set_t mask = some_of(allowed, index % static_cast<std::size_t>(count), 1);
  pthread_setaffinity_np(pthread_self(), sizeof mask, &mask);
}

Pinned::~Pinned() { pthread_setaffinity_np(pthread_self(), sizeof saved_, &saved_); }

void with_fibers(std::size_t processors, const std::function<void()>& body) {
  namespace fibers = boost::fibers;
  Pinned pin{processors};
  std::thread main{[&] {
    if (processors == 1) {
      body();
      return;
    }
    // shared_work without suspension: idle helpers poll the shared queue, as Boost's own
    // examples and benchmarks run it.
    fibers::use_scheduling_algorithm<fibers::algo::shared_work>();
    fibers::mutex mutex;
    fibers::condition_variable done_cv;
    bool done = false;
    std::vector<std::thread> helpers;
    for (std::size_t i = 1; i < processors; ++i) {
      helpers.emplace_back([&] {
        fibers::use_scheduling_algorithm<fibers::algo::shared_work>();
        std::unique_lock lock{mutex};
        done_cv.wait(lock, [&] { return done; });
      });
    }
    body();
    {
      std::unique_lock lock{mutex};
      done = true;
    }
    done_cv.notify_all();
    for (auto& h : helpers) h.join();
  }};
  main.join();
}

#if PRESTO_BENCH_ONETBB
// oneTBB sizes its worker pool by the CPU mask it finds the first time it starts, which may be
// a 1-CPU Pinned: the limit is given explicitly (it is a ceiling, the arena the count).
struct OneTbb::State {
  explicit State(std::size_t processors)
      : limit(tbb::global_control::max_allowed_parallelism, processors), arena(static_cast<int>(processors)) {}
  tbb::task_scheduler_handle handle{tbb::attach{}};
  tbb::global_control limit;
  tbb::task_arena arena;
};

OneTbb::OneTbb(std::size_t processors) : pin_(processors), state_(std::make_unique<State>(processors)) {
  state_->arena.initialize();
}

OneTbb::~OneTbb() {
  state_->arena.terminate();
  // Waits for the workers to exit; false if some arena still held them.
  if (!tbb::finalize(state_->handle, std::nothrow)) {
    std::fprintf(stderr, "presto_bench: oneTBB's workers did not stop: its next figures may run on the wrong CPUs\n");
  }
}

void OneTbb::run(const std::function<void()>& body) { state_->arena.execute(body); }
#endif

}  // namespace presto::bench
