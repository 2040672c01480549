#pragma once
// The paper's three policies as Allocator subclasses (rules quoted in run_to_completion.cpp,
// round_robin.cpp and dynamic.cpp).

#include <cstdint>
#include <deque>
#include <vector>

#include "allocator.hpp"

namespace procsched {

class RunToCompletion final : public Allocator {
 public:
  using Allocator::Allocator;

 private:
  void arrived(int job) override;
  void available(int x) override;
  void task_done(int x) override;
  void job_done(int job, const std::vector<int>& freed) override;
  int fork_size(int job) override;

  std::vector<int> waiting_;  // jobs without processors, in arrival order
};

class RoundRobin final : public Allocator {
 public:
  using Allocator::Allocator;

 private:
  struct Slot {
    std::uint64_t id;
    std::vector<int> jobs;
  };
  void arrived(int job) override;
  void available(int x) override;
  void task_done(int x) override;
  void job_done(int job, const std::vector<int>& freed) override;
  void stopped(int x) override;
  void quantum_end(std::int64_t number) override;
  int fork_size(int job) override;

  int allocated(const Slot& s);
  double speedup(int job, int p);
  std::size_t position(std::uint64_t slot_id) const;  // slots_.size() if gone
  void begin(std::uint64_t slot_id);                  // its quantum starts now
  void fill();  // idle processors to the running slot's jobs, then the next slot's (steps 4, 6)

  std::vector<Slot> slots_;
  std::uint64_t slot_ids_ = 0;
  std::uint64_t running_ = 0;  // the slot whose quantum runs (0: none)
  double quantum_end_ = 0;
  std::int64_t quantum_ = 0;   // the pending quantum end's number
  bool completions_ = false;   // a job completed during this quantum
};

class Dynamic final : public Allocator {
 public:
  using Allocator::Allocator;

 private:
  void arrived(int job) override;
  void available(int x) override;
  void task_done(int x) override;
  void job_done(int job, const std::vector<int>& freed) override;
  int fork_size(int job) override;

  int want(int job);          // its outstanding request
  bool others_want(int job);  // does another job want processors?
  int free_processor(int for_job);  // an idle processor, or one spinning in another job; -1: none
  void serve();               // rules 1, 3 and 4

  std::uint64_t stamp_ = 0;
};

}  // namespace procsched
