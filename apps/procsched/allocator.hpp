#pragma once
// Allocator: the operating system's processor allocator of Zahorjan and McCann's model, as a
// PSIM logical process, with the job-side task dispatch folded in (both act at the same
// instants: arrivals, task completions, processors becoming available). It receives the job
// stream from Arrivals and `done`/`stopped` from each Processor, and sends `run`/`preempt`.
//
// The mechanics shared by every policy live here: giving a processor to a job costs the
// reallocation overhead O (the processor reaches the job O later; releasing is free), a job's
// processors take its ready tasks first in, first out, and the statistics. A policy is a
// subclass that answers the hooks below (see run_to_completion.cpp, round_robin.cpp and
// dynamic.cpp for the paper's rules, quoted there). The hooks run on the allocator's own
// thread while it handles one event; they call give/release/start/preempt.
//
// Processor states: idle (nobody's), switching (given to a job, arriving after O), spinning
// (the job's, without a task), busy (running a task), preempting (asked to stop; it moves on
// when its `stopped` arrives).

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <presto/psim/logical_process.hpp>

#include "workload.hpp"

namespace procsched {

enum class Policy { run_to_completion, round_robin, dynamic };
const char* to_string(Policy policy) noexcept;

struct AllocatorConfig {
  int processors = 20;
  double overhead = 0;    // O
  double warmup = 500;    // jobs arriving earlier are not measured
  double quantum = 39;    // Round-Robin's quantum length
};

// What a run measured: jobs that arrived at or after the warm-up and completed by the end.
struct Measures {
  std::uint64_t jobs = 0;
  double response = 0;        // sum of response times
  double processors = 0;      // sum over jobs of (processor time held) / (response time)
  std::uint64_t grants = 0;   // processors given to jobs, all jobs (each costs O)
  std::uint64_t arrived = 0;  // all jobs
  std::uint64_t left = 0;     // jobs still in the system at the end
  std::vector<std::uint64_t> class_jobs;  // jobs and response sums by class (workload index)
  std::vector<double> class_response;
  double mean_response() const noexcept { return jobs ? response / static_cast<double>(jobs) : 0; }
  double mean_processors() const noexcept { return jobs ? processors / static_cast<double>(jobs) : 0; }
  // The queue grew without bound: more than 10 jobs, and more than 5% of those that arrived
  // after the warm-up, still in the system at the end.
  bool unstable() const noexcept {
    return static_cast<double>(left) > 10 + 0.05 * static_cast<double>(jobs + left);
  }
  bool operator==(const Measures&) const = default;
};

class Allocator : public presto::psim::LogicalProcess {
 public:
  Allocator(std::string name, const std::vector<Workload>& workloads, AllocatorConfig config);
  // The measures, after the run (jobs still in the system counted in `left`).
  Measures measures() const;

 protected:
  enum class State { idle, switching, spinning, busy, preempting };
  struct Proc {
    int job = -1;
    State state = State::idle;
    Task task{};
    std::int64_t run = 0;    // the run it is doing (busy, preempting)
    std::int64_t grant = 0;  // its latest grant (switching)
    int next = -1;           // preempting: the job it goes to next (-1: none)
  };
  struct JobState {
    Job job;
    int held = 0;        // processors given to it (switching included)
    int switching = 0;   // of which still arriving
    double held_time = 0, since = 0;
    // For the policies:
    int allocation = 0;  // static policies: its processor count
    int slot = -1;       // Round-Robin
    std::uint64_t asked = 0;  // Dynamic: when its outstanding request was made (FCFS); 0: none
  };

  // Hooks (see run_to_completion.cpp, round_robin.cpp, dynamic.cpp).
  virtual void arrived(int job) = 0;
  // Processor x reached its job (now spinning there).
  virtual void available(int x) = 0;
  // Processor x (now spinning) completed a task of its job, which goes on; the job's new
  // ready tasks are queued.
  virtual void task_done(int x) = 0;
  // A job completed; `freed` are the processors it held (now idle).
  virtual void job_done(int job, const std::vector<int>& freed) = 0;
  // Processor x's preempted task is back in its job's queue (or completed); x is spinning.
  virtual void stopped(int x) { (void)x; }
  virtual void quantum_end(std::int64_t number) { (void)number; }
  // The number of tasks a VFJ job forks now.
  virtual int fork_size(int job) = 0;

  // Mechanics for the hooks.
  void give(int x, int job);          // x (not busy) to `job`, arriving after O
  void release(int x);                // x (not busy) to nobody
  bool start(int x);                  // x (spinning) takes its job's first ready task, if any
  void preempt(int x, int next_job);  // x (busy) stops; then goes to next_job (-1: nobody)
  void start_spinning(int job);       // the job's spinning processors take its ready tasks
  int idle_count() const;
  int first_idle() const;

  const AllocatorConfig& config() const noexcept { return config_; }
  std::vector<Proc>& procs() noexcept { return procs_; }
  JobState& job(int id) { return jobs_[static_cast<std::size_t>(id)]; }
  const std::vector<int>& active() const noexcept { return active_; }  // in arrival order
  const std::vector<Workload>& workloads() const noexcept { return workloads_; }
  // What the static policies are told of a job (its class's curve, deterministic task times):
  // T(p), its elapsed time alone on p processors (T(0): very large, so that a job without a
  // processor gains most from one); M, the least p with the greatest speed-up; A = T(1)/T(P),
  // its average parallelism, rounded to a processor count (at least 1).
  double elapsed(int id, int p) { return curves_[workload_of(id)].elapsed[static_cast<std::size_t>(p)]; }
  int max_parallelism(int id) { return curves_[workload_of(id)].max; }
  int average_parallelism(int id) { return curves_[workload_of(id)].average; }

  void initialize() override;
  void handle(const presto::psim::Message& m) override;

 private:
  struct Curve {
    std::vector<double> elapsed;  // by p = 0..P
    int max = 1, average = 1;
  };
  std::size_t workload_of(int id) { return static_cast<std::size_t>(&job(id).job.workload() - workloads_.data()); }
  void touch(JobState& j);
  void completed(int x);  // x's task is done: the job goes on or ends

  const std::vector<Workload>& workloads_;
  AllocatorConfig config_;
  std::vector<Proc> procs_;
  std::deque<JobState> jobs_;
  std::vector<int> active_;
  std::uint32_t first_processor_ = 0;  // LP index of processor 0
  std::int64_t runs_ = 0, grants_ = 0;
  Measures measures_;
  std::vector<Curve> curves_;
};

}  // namespace procsched
