#pragma once
// Workload and Job: Zahorjan and McCann's job classes as task graphs ("Processor Scheduling in
// Shared Memory Multiprocessors", 1990, section 2; seed 002).
//
//  - MVA(N,N): the (N+1) x (N+1) population lattice of a two-class Mean Value Analysis, solved as
//    a wavefront: task (i,j) needs (i-1,j) and (i,j-1); parallelism 1, 2, ..., N+1, ..., 2, 1.
//  - FJ(K): a sequential task, then K parallel tasks, repeated `cycles` times, then a final
//    sequential task (FJ(3): 2 cycles; FJ(11): 10 cycles).
//  - VFJ(K): as FJ, but each parallel phase is K units of work split, when the fork happens, into
//    as many equal tasks as the scheduler says (the processors the job has or can get at once).
// Every task's mean time is 1 except VFJ's parallel tasks (K / tasks); a task's actual time is
// its mean times Uniform(1 - spread, 1 + spread), drawn by the processor that runs it.
//
// Job is one job's progress through its graph: the ready tasks (first in, first out; a
// preempted task goes back to the front) and what completing a task makes ready. Workload also
// computes, by list-scheduling one job alone with deterministic task times, its elapsed time
// on p processors T(p) (the static policies' speed-up curve S(p) = T(1)/T(p)), and the
// measures of Table 1 (minimum, maximum and average parallelism, work, minimum elapsed time).
// Single-threaded: a Job belongs to the allocator LP that created it.

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace procsched {

struct Task {
  std::int32_t id = 0;   // lattice index (MVA), 0 for a sequential task, 1.. for a parallel one
  double size = 1;       // mean time
  double remaining = -1;  // work left after a preemption; < 0: not started
};

class Workload {
 public:
  enum class Shape { mva, fork_join, variable_fork_join };
  // The paper's six classes by name: "MVA(2,2)", "MVA(10,10)", "FJ(3)", "FJ(11)", "VFJ(3)",
  // "VFJ(11)"; std::invalid_argument naming them otherwise.
  static Workload named(const std::string& name);
  static const std::vector<std::string>& names();

  const std::string& name() const noexcept { return name_; }
  Shape shape() const noexcept { return shape_; }
  int width() const noexcept { return width_; }    // N + 1 (MVA) or K (FJ, VFJ)
  int cycles() const noexcept { return cycles_; }  // fork-join cycles (0 for MVA)
  double work() const noexcept;                    // total mean processor time
  // The least mean time of any task when a fork may make at most `processors` tasks.
  double smallest_task(int processors) const noexcept;

  // One job alone on p processors, deterministic task times, no overhead, FIFO dispatch; a VFJ
  // job forks p tasks.
  struct Profile {
    double elapsed = 0;
    int min_parallelism = 0, max_parallelism = 0;
    double average_parallelism() const noexcept;  // work / elapsed
    double work = 0;
  };
  Profile alone(int processors) const;

 private:
  Workload(std::string name, Shape shape, int width, int cycles)
      : name_(std::move(name)), shape_(shape), width_(width), cycles_(cycles) {}
  std::string name_;
  Shape shape_;
  int width_;
  int cycles_;
};

class Job {
 public:
  Job(const Workload& workload, int id, double arrival);

  const Workload& workload() const noexcept { return *workload_; }
  int id() const noexcept { return id_; }
  double arrival() const noexcept { return arrival_; }
  std::deque<Task>& ready() noexcept { return ready_; }
  bool finished() const noexcept { return finished_; }
  // A fork of a VFJ job is about to happen when `task` completes (the allocator then chooses
  // the number of tasks).
  bool forks_variably(const Task& task) const noexcept;
  // Marks `task` done and appends what that makes ready; `fork` is the number of tasks a VFJ
  // fork makes (ignored otherwise; at least 1).
  void complete(const Task& task, int fork);

 private:
  const Workload* workload_;
  int id_;
  double arrival_;
  std::deque<Task> ready_;
  std::vector<std::uint8_t> waiting_;  // MVA: predecessors not done, by lattice index
  int forks_done_ = 0;                 // FJ, VFJ
  int outstanding_ = 0;                // parallel tasks of the current fork not done
  bool finished_ = false;
};

}  // namespace procsched
