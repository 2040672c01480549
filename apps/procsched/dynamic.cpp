// Dynamic (Zahorjan and McCann, section 3.2): jobs gain and release processors as their
// parallelism changes.
//   Allocator, when a job requests processors (an arrival requests one): "1. If there are idle
//   processors, use them to satisfy the request. 2. Otherwise, if the job making the request is
//   a new arrival, allocate it a single processor by taking one away from any job currently
//   allocated two or more. 3. If any portion of the request cannot be satisfied, it remains
//   outstanding until either a processor becomes available for it or the task dispatcher
//   rescinds it." On release: "4. ... Assign a single processor to each job in the list that
//   currently has no processors ... then ... allocating the rest of the processors on a FCFS
//   basis."
//   Task dispatcher, when a processor finishes a task of job j: "5. If there is a newly arrived
//   job that has not yet received a processor and job j holds two or more processors, the task
//   dispatcher releases its processor. 6. Otherwise ... If q_j = 1 the task dispatcher simply
//   dequeues the task and starts its execution. 7. If q_j > 1 the task dispatcher advertises
//   that job j wants q_j - 1 additional processors ... and then begins executing the first task
//   8. Finally, if q_j = 0, [and] any of [the other jobs] want additional processors ... it
//   releases the processor. [Otherwise it spins;] if a task arrives to j's ready queue before
//   any other jobs make processor requests, the task can begin executing without a context
//   switch penalty."
// Choices where the paper is silent: tasks are never preempted, so rule 2 takes the processor
// at the next task boundary of a job holding two or more (rule 5); a job's outstanding request
// is its ready tasks less the processors already on their way to it (so it is rescinded as its
// own processors take the tasks); "idle" processors in rule 1 are unallocated ones first, then
// processors spinning in other jobs (which, by rule 8, release as soon as anyone asks); FCFS
// orders requests by when they became outstanding; a VFJ job forks as many tasks as the
// processors it holds plus those idle or spinning elsewhere.

#include "policies.hpp"

namespace procsched {

int Dynamic::want(int id) {
  JobState& js = job(id);
  return std::max(0, static_cast<int>(js.job.ready().size()) - js.switching);
}

bool Dynamic::others_want(int id) {
  for (int k : active()) {
    if (k != id && want(k) > 0) return true;
  }
  return false;
}

int Dynamic::free_processor(int for_job) {
  const int idle = first_idle();
  if (idle >= 0) return idle;
  for (int y = 0; y < config().processors; ++y) {
    const Proc& p = procs()[static_cast<std::size_t>(y)];
    if (p.state == State::spinning && p.job != for_job) return y;
  }
  return -1;
}

void Dynamic::serve() {
  while (true) {
    // Requests become outstanding (FCFS order) or are rescinded.
    for (int id : active()) {
      JobState& js = job(id);
      if (want(id) == 0) {
        js.asked = 0;
      } else if (js.asked == 0) {
        js.asked = ++stamp_;
      }
    }
    int chosen = -1;
    for (int id : active()) {  // jobs without a processor first, in arrival order
      if (job(id).held == 0 && want(id) > 0) {
        chosen = id;
        break;
      }
    }
    if (chosen < 0) {
      for (int id : active()) {
        if (want(id) > 0 && (chosen < 0 || job(id).asked < job(chosen).asked)) chosen = id;
      }
    }
    if (chosen < 0) return;
    const int x = free_processor(chosen);
    if (x < 0) return;  // outstanding (rule 3)
    give(x, chosen);
  }
}

void Dynamic::arrived(int) { serve(); }

void Dynamic::available(int x) {
  const int id = procs()[static_cast<std::size_t>(x)].job;
  if (!start(x) && others_want(id)) release(x);
  serve();
}

void Dynamic::task_done(int x) {
  const int id = procs()[static_cast<std::size_t>(x)].job;
  bool starving = false;
  for (int k : active()) starving = starving || job(k).held == 0;
  if (starving && job(id).held >= 2) {                        // rule 5
    release(x);
    start_spinning(id);
  } else if (start(x)) {                                      // rules 6 and 7
    start_spinning(id);
  } else if (others_want(id)) {                               // rule 8
    release(x);
  }
  serve();
}

void Dynamic::job_done(int, const std::vector<int>&) { serve(); }

int Dynamic::fork_size(int id) {
  int n = job(id).held;
  for (const Proc& p : procs()) n += p.state == State::idle || (p.state == State::spinning && p.job != id);
  return n;
}

}  // namespace procsched
