// Round-Robin co-scheduling (Zahorjan and McCann, section 3.1.2, after Ousterhout), a static
// policy: jobs sit in slots; all P processors move from slot to slot each quantum; a job gets
// the same number of processors whenever its slot runs. With F_n = P - (processors allocated
// in slot n), N slots and C = sum over jobs of S_k(p_k):
//   "Upon arrival of job j: 1. Let slot max be the one with the most unallocated processors.
//    Then if F_max >= A_j ... the job is allocated to slot max and is given A_j processors.
//    2. Otherwise, if (S_j(F_max) + C)/N >= (S_j(Min(P, A_j)) + C)/(N+1) the job is allocated
//    F_max processors in slot max. 3. If allocating to a new slot, N+1, allocate the job
//    Min(P, A_j) processors. 4. If job j is allocated to the slot currently in execution and
//    that slot has processors not used at the moment (see Step 6), begin executing j as long as
//    the remaining time in the quantum exceeds the context switch overhead time O.
//   Upon the completion of a quantum for slot n: 5. If there have been any job completions
//    during the quantum, calculate the new number of unallocated processors F_n in this slot.
//    Scan the list of slots sequentially. If the number of allocated processors in a scanned
//    slot is less than F_n combine that slot with slot n, update F_n, and stop the scan.
//   When scheduling slot n: 6. Allocate the F_n unused processors to jobs in the immediately
//    succeeding slot, giving multiple processors to a single job in preference to fewer
//    processors to many jobs."
// Choices where the paper is silent: A_j is rounded to a processor count; a slot may take a
// slot whose allocation equals F_n (it fits; the paper's remark after step 6 implies so); a
// quantum is O + the quantum length (the switch, then the work); at a quantum's end only the
// processors whose job changes are preempted and pay O (a processor that stays with its job
// keeps running, so one slot alone runs without switches); a preempted task resumes first,
// on any of its job's processors; processors left unused in the running slot (freed by a job
// that completes, or never taken) go, as steps 4 and 6 say of unused processors, to the running
// slot's jobs short of their allocation (arrivals that found none idle), then to the next
// slot's, largest allocation first, while the quantum has more than O left.

#include "policies.hpp"

#include "messages.hpp"

#include <algorithm>

namespace procsched {

int RoundRobin::allocated(const Slot& s) {
  int n = 0;
  for (int id : s.jobs) n += job(id).allocation;
  return n;
}

double RoundRobin::speedup(int id, int p) { return p <= 0 ? 0 : elapsed(id, 1) / elapsed(id, p); }

std::size_t RoundRobin::position(std::uint64_t slot_id) const {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].id == slot_id) return i;
  }
  return slots_.size();
}

void RoundRobin::arrived(int id) {
  const int P = config().processors;
  const int a = average_parallelism(id);
  const int cap = std::min(P, a);
  JobState& js = job(id);
  if (slots_.empty()) {
    js.allocation = cap;
    slots_.push_back(Slot{++slot_ids_, {id}});
    js.slot = static_cast<int>(slots_.front().id);
    begin(slots_.front().id);
    return;
  }
  std::size_t max = 0;
  for (std::size_t i = 1; i < slots_.size(); ++i) {
    if (allocated(slots_[i]) < allocated(slots_[max])) max = i;
  }
  const int f = P - allocated(slots_[max]);
  double c = 0;
  for (int k : active()) {
    if (k != id) c += speedup(k, job(k).allocation);
  }
  const auto n = static_cast<double>(slots_.size());
  std::size_t into = slots_.size();
  if (f >= a) {
    js.allocation = a;
    into = max;
  } else if (f >= 1 && (speedup(id, f) + c) / n >= (speedup(id, cap) + c) / (n + 1)) {
    js.allocation = f;
    into = max;
  } else {
    js.allocation = cap;
    slots_.push_back(Slot{++slot_ids_, {}});
  }
  slots_[into].jobs.push_back(id);
  js.slot = static_cast<int>(slots_[into].id);
  fill();  // step 4
}

void RoundRobin::fill() {
  if (running_ == 0 || quantum_end_ - now() <= config().overhead) return;
  const std::size_t at = position(running_);
  std::vector<int> takers = slots_[at].jobs;  // the running slot's jobs, then (step 6) the next slot's
  if (slots_.size() > 1) {
    std::vector<int> lend = slots_[(at + 1) % slots_.size()].jobs;
    std::stable_sort(lend.begin(), lend.end(), [this](int a, int b) { return job(a).allocation > job(b).allocation; });
    takers.insert(takers.end(), lend.begin(), lend.end());
  }
  for (int id : takers) {
    while (job(id).held < job(id).allocation) {
      const int x = first_idle();
      if (x < 0) return;
      give(x, id);
    }
  }
}

void RoundRobin::available(int x) { start(x); }

void RoundRobin::task_done(int x) {
  start(x);
  start_spinning(procs()[static_cast<std::size_t>(x)].job);
}

void RoundRobin::job_done(int id, const std::vector<int>&) {
  const std::size_t at = position(static_cast<std::uint64_t>(job(id).slot));
  std::erase(slots_[at].jobs, id);
  completions_ = true;
  fill();
  if (active().empty()) {  // nothing left: the rotation stops until the next arrival
    slots_.clear();
    running_ = 0;
    ++quantum_;  // the pending quantum end is stale
  }
}

void RoundRobin::stopped(int x) {
  Proc& p = procs()[static_cast<std::size_t>(x)];
  const int from = p.job;
  const int next = p.next;
  p.next = -1;
  if (next >= 0 && !job(next).job.finished()) {
    give(x, next);
  } else {
    release(x);
  }
  start_spinning(from);
}

void RoundRobin::quantum_end(std::int64_t number) {
  if (number != quantum_ || slots_.empty()) return;
  const std::size_t cur = position(running_);
  std::vector<std::uint64_t> order;
  for (const Slot& s : slots_) order.push_back(s.id);
  if (completions_) {  // step 5
    completions_ = false;
    if (!slots_[cur].jobs.empty()) {
      const int f = config().processors - allocated(slots_[cur]);
      for (std::size_t i = 0; i < slots_.size(); ++i) {
        if (i == cur || slots_[i].jobs.empty() || allocated(slots_[i]) > f) continue;
        for (int id : slots_[i].jobs) {
          slots_[cur].jobs.push_back(id);
          job(id).slot = static_cast<int>(slots_[cur].id);
        }
        slots_[i].jobs.clear();
        break;
      }
    }
    std::erase_if(slots_, [](const Slot& s) { return s.jobs.empty(); });
  }
  // The slot after the running one, among those left (the running one itself if alone).
  std::uint64_t next = 0;
  for (std::size_t k = 1; k <= order.size() && next == 0; ++k) {
    const std::uint64_t id = order[(cur + k) % order.size()];
    if (position(id) < slots_.size()) next = id;
  }
  begin(next);
}

void RoundRobin::begin(std::uint64_t slot_id) {
  const int P = config().processors;
  running_ = slot_id;
  const std::size_t at = position(slot_id);
  // Who should hold processors this quantum: the slot's jobs, then (step 6) its unallocated
  // processors lent to the next slot's jobs, the largest allocations first.
  std::vector<std::pair<int, int>> wanted;  // (job, processors)
  for (int id : slots_[at].jobs) wanted.emplace_back(id, job(id).allocation);
  int spare = P - allocated(slots_[at]);
  if (slots_.size() > 1 && spare > 0) {
    std::vector<int> lend = slots_[(at + 1) % slots_.size()].jobs;
    std::stable_sort(lend.begin(), lend.end(), [this](int a, int b) { return job(a).allocation > job(b).allocation; });
    for (int id : lend) {
      if (spare == 0) break;
      const int n = std::min(spare, job(id).allocation);
      wanted.emplace_back(id, n);
      spare -= n;
    }
  }
  // Processors already with a wanted job stay (no switch, no preemption); the others move.
  std::vector<int> movers;
  for (int x = 0; x < P; ++x) {
    const Proc& p = procs()[static_cast<std::size_t>(x)];
    auto w = std::find_if(wanted.begin(), wanted.end(), [&p](const auto& e) { return e.first == p.job && e.second > 0; });
    if (p.job >= 0 && p.state != State::preempting && w != wanted.end()) {
      --w->second;
    } else {
      movers.push_back(x);
    }
  }
  auto w = wanted.begin();
  for (int x : movers) {
    while (w != wanted.end() && w->second == 0) ++w;
    const int to = w == wanted.end() ? -1 : w->first;
    if (w != wanted.end()) --w->second;
    Proc& p = procs()[static_cast<std::size_t>(x)];
    if (p.state == State::busy) {
      preempt(x, to);
    } else if (p.state == State::preempting) {
      p.next = to;
    } else if (to >= 0) {
      give(x, to);
    } else {
      release(x);
    }
  }
  const double length = config().overhead + config().quantum;
  quantum_end_ = now() + length;
  schedule(presto::psim::Message{.kind = kQuantum, .value = ++quantum_}, length);
}

int RoundRobin::fork_size(int id) { return job(id).allocation; }

}  // namespace procsched
