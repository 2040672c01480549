#include "workload.hpp"

#include <algorithm>
#include <queue>
#include <stdexcept>
#include <utility>

namespace procsched {

const std::vector<std::string>& Workload::names() {
  static const std::vector<std::string> all{"MVA(2,2)", "FJ(3)", "VFJ(3)", "MVA(10,10)", "FJ(11)", "VFJ(11)"};
  return all;
}

Workload Workload::named(const std::string& name) {
  if (name == "MVA(2,2)") return {name, Shape::mva, 3, 0};
  if (name == "MVA(10,10)") return {name, Shape::mva, 11, 0};
  if (name == "FJ(3)") return {name, Shape::fork_join, 3, 2};
  if (name == "FJ(11)") return {name, Shape::fork_join, 11, 10};
  // The paper's text says VFJ(11) has "twelve fork-join cycles"; its Table 1 (work 121, minimum
  // elapsed time 11 + 110/P) needs ten, as FJ(11) has. Table 1 is followed.
  if (name == "VFJ(3)") return {name, Shape::variable_fork_join, 3, 2};
  if (name == "VFJ(11)") return {name, Shape::variable_fork_join, 11, 10};
  std::string known;
  for (const std::string& n : names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown workload '" + name + "' (known: " + known + ")");
}

double Workload::work() const noexcept {
  if (shape_ == Shape::mva) return static_cast<double>(width_) * width_;
  return (cycles_ + 1) + static_cast<double>(cycles_) * width_;
}

double Workload::smallest_task(int processors) const noexcept {
  if (shape_ != Shape::variable_fork_join) return 1.0;
  return std::min(1.0, static_cast<double>(width_) / std::max(processors, 1));
}

double Workload::Profile::average_parallelism() const noexcept { return elapsed > 0 ? work / elapsed : 0; }

Workload::Profile Workload::alone(int processors) const {
  // Deterministic list scheduling: free processors take ready tasks in FIFO order.
  Job job{*this, 0, 0};
  using Finish = std::pair<double, Task>;
  auto later = [](const Finish& a, const Finish& b) { return a.first > b.first; };
  std::priority_queue<Finish, std::vector<Finish>, decltype(later)> running{later};
  Profile p;
  p.min_parallelism = processors;
  double now = 0;
  while (true) {
    while (static_cast<int>(running.size()) < processors && !job.ready().empty()) {
      Task t = job.ready().front();
      job.ready().pop_front();
      running.push({now + t.size, t});
      p.work += t.size;
    }
    if (running.empty()) break;
    const int busy = static_cast<int>(running.size());
    p.min_parallelism = std::min(p.min_parallelism, busy);
    p.max_parallelism = std::max(p.max_parallelism, busy);
    // Everything finishing at this instant completes together.
    now = running.top().first;
    while (!running.empty() && running.top().first == now) {
      const Task t = running.top().second;
      running.pop();
      job.complete(t, processors);
    }
  }
  p.elapsed = now;
  return p;
}

Job::Job(const Workload& workload, int id, double arrival) : workload_(&workload), id_(id), arrival_(arrival) {
  if (workload.shape() == Workload::Shape::mva) {
    const int n = workload.width();
    waiting_.resize(static_cast<std::size_t>(n) * n);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) waiting_[static_cast<std::size_t>(i * n + j)] = static_cast<std::uint8_t>((i > 0) + (j > 0));
    }
  }
  ready_.push_back(Task{0, 1.0});
}

bool Job::forks_variably(const Task& task) const noexcept {
  return workload_->shape() == Workload::Shape::variable_fork_join && task.id == 0 && forks_done_ < workload_->cycles();
}

void Job::complete(const Task& task, int fork) {
  const Workload& w = *workload_;
  if (w.shape() == Workload::Shape::mva) {
    const int n = w.width();
    const int i = task.id / n, j = task.id % n;
    auto release = [&](int ii, int jj) {
      if (ii < n && jj < n && --waiting_[static_cast<std::size_t>(ii * n + jj)] == 0) ready_.push_back(Task{ii * n + jj, 1.0});
    };
    release(i + 1, j);
    release(i, j + 1);
    finished_ = task.id == n * n - 1;
    return;
  }
  if (task.id != 0) {  // a parallel task: the join
    if (--outstanding_ == 0) ready_.push_back(Task{0, 1.0});
    return;
  }
  if (forks_done_ == w.cycles()) {
    finished_ = true;
    return;
  }
  ++forks_done_;
  const int tasks = w.shape() == Workload::Shape::fork_join ? w.width() : std::max(fork, 1);
  const double size = w.shape() == Workload::Shape::fork_join ? 1.0 : static_cast<double>(w.width()) / tasks;
  outstanding_ = tasks;
  for (int k = 1; k <= tasks; ++k) ready_.push_back(Task{k, size});
}

}  // namespace procsched
