// Run-To-Completion (Zahorjan and McCann, section 3.1.1), a static policy:
//   "Upon job arrival: 1. If there are idle processors, the job is allocated the lesser of the
//    number of idle processors and the job's maximum parallelism, M_j. 2. Otherwise, the job
//    waits until processors become available. Upon job completion: 3. Each of the processors
//    released by the completed job is assigned in turn to that waiting job j whose current
//    assignment of processors p_j is less than M_j and for which the expected improvement in
//    elapsed execution time, T_j(p_j) - T_j(p_j+1), is greatest. When all released processors
//    have been assigned, the processors are actually allocated to the jobs, which begin
//    execution (after a processor allocation overhead time)."
// Ties go to the job that arrived first. A job keeps its processors until it completes; a VFJ
// job forks as many tasks as it has processors.

#include "policies.hpp"

namespace procsched {

void RunToCompletion::arrived(int id) {
  const int idle = idle_count();
  if (idle == 0) {
    waiting_.push_back(id);
    return;
  }
  const int n = std::min(idle, max_parallelism(id));
  job(id).allocation = n;
  for (int k = 0; k < n; ++k) give(first_idle(), id);
}

void RunToCompletion::available(int x) { start(x); }

void RunToCompletion::task_done(int x) {
  start(x);
  start_spinning(procs()[static_cast<std::size_t>(x)].job);
}

void RunToCompletion::job_done(int, const std::vector<int>& freed) {
  std::vector<std::pair<int, int>> grants;  // (processor, job)
  for (int x : freed) {
    int best = -1;
    double gain = 0;
    for (int id : waiting_) {
      const int p = job(id).allocation;
      if (p >= max_parallelism(id)) continue;
      const double g = elapsed(id, p) - elapsed(id, p + 1);
      if (best < 0 || g > gain) best = id, gain = g;
    }
    if (best < 0) break;  // nobody can use more: the rest stay idle
    ++job(best).allocation;
    grants.emplace_back(x, best);
  }
  for (auto [x, id] : grants) give(x, id);
  std::erase_if(waiting_, [this](int id) { return job(id).allocation > 0; });
}

int RunToCompletion::fork_size(int id) { return job(id).allocation; }

}  // namespace procsched
