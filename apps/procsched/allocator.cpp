#include "allocator.hpp"

#include <algorithm>
#include <cmath>

#include "messages.hpp"

namespace procsched {

using presto::psim::Message;

const char* to_string(Policy policy) noexcept {
  switch (policy) {
    case Policy::run_to_completion: return "RTC";
    case Policy::round_robin: return "Round-Robin";
    case Policy::dynamic: return "Dynamic";
  }
  return "?";
}

Allocator::Allocator(std::string name, const std::vector<Workload>& workloads, AllocatorConfig config)
    : LogicalProcess(std::move(name)), workloads_(workloads), config_(config) {
  for (const Workload& w : workloads_) {
    Curve c;
    c.elapsed.push_back(1e9);
    for (int p = 1; p <= config_.processors; ++p) {
      c.elapsed.push_back(w.alone(p).elapsed);
      if (c.elapsed.back() < c.elapsed[static_cast<std::size_t>(c.max)]) c.max = p;
    }
    c.average = std::max(1, static_cast<int>(std::lround(c.elapsed[1] / c.elapsed.back())));
    curves_.push_back(std::move(c));
  }
  measures_.class_jobs.assign(workloads_.size(), 0);
  measures_.class_response.assign(workloads_.size(), 0);
}

Measures Allocator::measures() const {
  Measures m = measures_;
  m.left = active_.size();
  return m;
}

void Allocator::initialize() {
  procs_.assign(static_cast<std::size_t>(config_.processors), Proc{});
  first_processor_ = outputs().front()->to().index();
}

void Allocator::handle(const Message& m) {
  switch (m.kind) {
    case kArrival: {
      const int id = static_cast<int>(jobs_.size());
      jobs_.push_back(JobState{Job{workloads_[static_cast<std::size_t>(m.value)], id, now()}});
      jobs_.back().since = now();
      active_.push_back(id);
      ++measures_.arrived;
      arrived(id);
      return;
    }
    case kSwitched: {
      const int x = static_cast<int>(m.value);
      Proc& p = procs_[static_cast<std::size_t>(x)];
      if (p.state != State::switching || static_cast<double>(p.grant) != m.real) return;  // taken back meanwhile
      p.state = State::spinning;
      --job(p.job).switching;
      available(x);
      return;
    }
    case kDone: {
      const int x = static_cast<int>(m.source - first_processor_);
      Proc& p = procs_[static_cast<std::size_t>(x)];
      // A run being preempted reports through `stopped` instead.
      if (p.state == State::busy && p.run == m.value) completed(x);
      return;
    }
    case kStopped: {
      const int x = static_cast<int>(m.source - first_processor_);
      Proc& p = procs_[static_cast<std::size_t>(x)];
      if (p.state != State::preempting || p.run != m.value) return;
      Task t = p.task;
      t.remaining = std::max(m.real, 0.0);  // 0: it ended as it was stopped; it resumes and ends at once
      job(p.job).job.ready().push_front(t);
      p.state = State::spinning;
      stopped(x);
      return;
    }
    case kQuantum:
      quantum_end(m.value);
      return;
    default:
      return;
  }
}

void Allocator::touch(JobState& j) {
  j.held_time += j.held * (now() - j.since);
  j.since = now();
}

void Allocator::completed(int x) {
  Proc& p = procs_[static_cast<std::size_t>(x)];
  const int id = p.job;
  JobState& js = job(id);
  p.state = State::spinning;
  const int fork = js.job.forks_variably(p.task) ? fork_size(id) : 0;
  js.job.complete(p.task, fork);
  if (!js.job.finished()) {
    task_done(x);
    return;
  }
  touch(js);
  if (js.job.arrival() >= config_.warmup) {
    const double response = now() - js.job.arrival();
    ++measures_.jobs;
    measures_.response += response;
    measures_.processors += js.held_time / response;
    const std::size_t w = workload_of(id);
    ++measures_.class_jobs[w];
    measures_.class_response[w] += response;
  }
  std::vector<int> freed;
  for (int y = 0; y < config_.processors; ++y) {
    if (procs_[static_cast<std::size_t>(y)].job == id) {
      release(y);
      freed.push_back(y);
    }
  }
  active_.erase(std::find(active_.begin(), active_.end(), id));
  job_done(id, freed);
}

void Allocator::give(int x, int to) {
  Proc& p = procs_[static_cast<std::size_t>(x)];
  if (p.job == to) return;
  release(x);
  JobState& js = job(to);
  touch(js);
  ++js.held;
  ++js.switching;
  p.job = to;
  p.state = State::switching;
  p.grant = ++grants_;
  ++measures_.grants;
  schedule(Message{.kind = kSwitched, .value = x, .real = static_cast<double>(p.grant)}, config_.overhead);
}

void Allocator::release(int x) {
  Proc& p = procs_[static_cast<std::size_t>(x)];
  if (p.job < 0) return;
  JobState& js = job(p.job);
  touch(js);
  --js.held;
  if (p.state == State::switching) --js.switching;
  p.job = -1;
  p.state = State::idle;
}

bool Allocator::start(int x) {
  Proc& p = procs_[static_cast<std::size_t>(x)];
  std::deque<Task>& ready = job(p.job).job.ready();
  if (p.state != State::spinning || ready.empty()) return false;
  p.task = ready.front();
  ready.pop_front();
  p.run = ++runs_;
  p.state = State::busy;
  const bool fresh = p.task.remaining < 0;
  send(*outputs()[static_cast<std::size_t>(x)],
       Message{.kind = fresh ? kRunFresh : kRunResumed, .value = p.run, .real = fresh ? p.task.size : p.task.remaining}, 0);
  return true;
}

void Allocator::preempt(int x, int next_job) {
  Proc& p = procs_[static_cast<std::size_t>(x)];
  p.state = State::preempting;
  p.next = next_job;
  send(*outputs()[static_cast<std::size_t>(x)], Message{.kind = kPreempt, .value = p.run}, 0);
}

void Allocator::start_spinning(int id) {
  for (int y = 0; y < config_.processors && !job(id).job.ready().empty(); ++y) {
    if (procs_[static_cast<std::size_t>(y)].job == id) start(y);
  }
}

int Allocator::idle_count() const {
  return static_cast<int>(std::count_if(procs_.begin(), procs_.end(), [](const Proc& p) { return p.state == State::idle; }));
}

int Allocator::first_idle() const {
  for (int y = 0; y < config_.processors; ++y) {
    if (procs_[static_cast<std::size_t>(y)].state == State::idle) return y;
  }
  return -1;
}

}  // namespace procsched

