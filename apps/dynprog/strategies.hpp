// The four parallelizations of Almquist, Anderson and Lazowska ("The measured performance of
// parallel dynamic programming implementations", 1989), written once for any problem whose
// task graph is a Lattice, plus one the paper did not have: the lattice as a graph of futures.
//
// A problem P offers
//   const Lattice& tasks() const;   the task graph
//   void solve(std::size_t t);      computes task t; every predecessor of t must be solved and
//                                   that must happen-before the call (the strategy's job)
// and, for pipeline_spin and synchronization_free (the FlaggedProblem concept),
//   bool solved(std::size_t t) const;   true once solve(t) has finished (an acquire read)
//   and solve(t) safe to run twice at once (both writes store the same values).
//
// Each strategy must be called from a presto thread; it forks `workers` threads (the
// futures strategy: one thread per task), returns when every task is solved and reports in
// Costs where the workers waited. The LCS pipeline, whose column locks are not generic, is in
// lcs.hpp.

#pragma once

#include <algorithm>
#include <atomic>
#include <concepts>
#include <cstddef>
#include <limits>
#include <memory>
#include <vector>

#include <presto/presto.hpp>
#include <presto/futures/future.hpp>

#include "lattice.hpp"

namespace presto::apps::dynprog {

template <class P>
concept LatticeProblem = requires(P& p, const P& cp, std::size_t t) {
  { cp.tasks() } -> std::same_as<const Lattice&>;
  p.solve(t);
};

template <class P>
concept FlaggedProblem = LatticeProblem<P> && requires(const P& p, std::size_t t) {
  { p.solved(t) } -> std::same_as<bool>;
};

// Forks `workers` threads running body(w, costs) (w = 0..workers-1, costs the worker's own,
// kept in a local so that counting does not share cache lines), joins them and returns the
// sum of their costs.
template <class Body>
Costs run_workers(std::size_t workers, Body body, std::size_t stack_size = 0) {
  std::vector<Costs> costs(workers);
  std::vector<presto::JoinHandle<void>> threads;
  threads.reserve(workers);
  for (std::size_t w = 0; w < workers; ++w) {
    threads.push_back(presto::fork(presto::ThreadAttributes{.name = "worker", .stack_size = stack_size}, [&, w] {
      Costs local;
      body(w, local);
      costs[w] = local;
    }));
  }
  Costs total;
  for (std::size_t w = 0; w < workers; ++w) {
    threads[w].join();
    total += costs[w];
  }
  return total;
}

// Locks `lock` (sleeping while it is held), charging the time to costs.wait_ns if it was held.
template <class L>
void lock_counted(L& lock, Costs& costs) {
  if (!lock.try_lock()) charge(costs, &Costs::wait_ns, [&] { lock.lock(); });
}

// Diagonal: phase l solves level l's tasks, split evenly among the workers, then a barrier.
template <LatticeProblem P>
Costs diagonal(P& problem, std::size_t workers) {
  const Lattice& lattice = problem.tasks();
  presto::Barrier barrier(workers, "diagonal");
  return run_workers(workers, [&](std::size_t w, Costs& costs) {
    for (std::size_t l = 0; l < lattice.levels(); ++l) {
      const std::size_t* first = lattice.level_begin(l);
      const std::size_t n = static_cast<std::size_t>(lattice.level_end(l) - first);
      for (std::size_t i = n * w / workers; i < n * (w + 1) / workers; ++i) problem.solve(first[i]);
      costs.evaluations += n * (w + 1) / workers - n * w / workers;
      charge(costs, &Costs::wait_ns, [&] { barrier.arrive_and_wait(); });
    }
  });
}

// Pipeline without locks: the rows (lines along dimension 0) are taken in order, each by the
// next free worker; before solving a task the worker spins (yielding) until its predecessors
// in earlier rows are solved. The paper's QNM pipeline: "spin until non-negative".
template <FlaggedProblem P>
Costs pipeline_spin(P& problem, std::size_t workers) {
  const Lattice& lattice = problem.tasks();
  const std::size_t row_length = lattice.extent(0), rows = lattice.size() / row_length;
  std::atomic<std::size_t> next_row{0};
  return run_workers(workers, [&](std::size_t, Costs& costs) {
    for (std::size_t r; (r = next_row.fetch_add(1, std::memory_order_relaxed)) < rows;) {
      for (std::size_t t = r * row_length; t < (r + 1) * row_length; ++t) {
        for (std::size_t d = 1; d < lattice.dimensions(); ++d) {
          if (lattice.coordinate(t, d) == 0) continue;
          const std::size_t before = t - lattice.stride(d);
          wait_until(costs, &Costs::wait_ns, [&] { return problem.solved(before); }, [] { presto::this_thread::yield(); });
        }
        problem.solve(t);
      }
      costs.evaluations += row_length;
    }
  });
}

enum class Order { fifo, lifo };

// Task Graph: a central controller, one Spinlock over a list of ready tasks and the count of
// unsolved predecessors of every task. A worker reports the task it finished and takes the
// next in one critical section; with nothing ready it waits (idle) until something is. The
// critical section is a few dozen instructions, shorter than a context switch: a sleeping
// presto::Lock there made MVA's 12^4 lattice about 4x slower on 2 processors (40% of the
// workers' time asleep in it; 2-core machine, loaded).
template <LatticeProblem P>
Costs task_graph(P& problem, std::size_t workers, Order order) {
  const Lattice& lattice = problem.tasks();
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  presto::Spinlock lock;
  std::vector<unsigned char> missing(lattice.size());  // guarded by lock
  std::vector<std::size_t> ready{0};                   // guarded by lock; fifo takes from head
  ready.reserve(lattice.size());
  std::size_t head = 0, unsolved = lattice.size();     // guarded by lock
  std::atomic<std::size_t> available{1};               // ready.size() - head, for idle workers
  std::atomic<bool> finished{false};
  for (std::size_t t = 0; t < lattice.size(); ++t) missing[t] = static_cast<unsigned char>(lattice.predecessors(t));
  return run_workers(workers, [&](std::size_t, Costs& costs) {
    for (std::size_t mine = none;;) {
      lock_counted(lock, costs);
      if (mine != none) {
        for (std::size_t d = 0; d < lattice.dimensions(); ++d) {
          if (lattice.coordinate(mine, d) + 1 < lattice.extent(d) && --missing[mine + lattice.stride(d)] == 0) {
            ready.push_back(mine + lattice.stride(d));
          }
        }
        if (--unsolved == 0) finished.store(true, std::memory_order_release);
      }
      mine = none;
      if (head < ready.size()) {
        if (order == Order::fifo) {
          mine = ready[head++];
        } else {
          mine = ready.back();
          ready.pop_back();
        }
      }
      available.store(ready.size() - head, std::memory_order_release);
      lock.unlock();
      if (mine != none) {
        problem.solve(mine);
        ++costs.evaluations;
      } else if (finished.load(std::memory_order_acquire)) {
        return;
      } else {
        wait_until(costs, &Costs::idle_ns,
                   [&] { return available.load(std::memory_order_acquire) > 0 || finished.load(std::memory_order_acquire); },
                   [] { presto::this_thread::yield(); });
      }
    }
  });
}

// The table of the Synchronization-Free method's variant (iii): for worker w at level l, the
// dimension of the predecessor to descend into first. Built greedily from the top down: at
// each level each worker in turn takes the step that keeps it farthest (L1 distance) from
// the workers already placed there, so that the workers part ways as early as they can.
class FirstPredecessorTable {
 public:
  FirstPredecessorTable(const Lattice& lattice, std::size_t workers)
      : dimensions_(lattice.dimensions()), levels_(lattice.levels()), first_(workers * levels_) {
    std::vector<std::vector<std::size_t>> at(workers);
    for (auto& x : at) {
      for (std::size_t d = 0; d < dimensions_; ++d) x.push_back(lattice.extent(d) - 1);
    }
    for (std::size_t l = levels_ - 1; l > 0; --l) {
      for (std::size_t w = 0; w < workers; ++w) {
        std::size_t best = dimensions_, best_distance = 0;
        for (std::size_t i = 0; i < dimensions_; ++i) {
          const std::size_t d = (w + i) % dimensions_;  // ties: workers start on different sides
          if (at[w][d] == 0) continue;
          --at[w][d];
          std::size_t nearest = std::numeric_limits<std::size_t>::max();
          for (std::size_t v = 0; v < w; ++v) nearest = std::min(nearest, distance(at[w], at[v]));
          ++at[w][d];
          if (best == dimensions_ || nearest > best_distance) best = d, best_distance = nearest;
        }
        first_[w * levels_ + l] = best;
        --at[w][best];
      }
    }
  }
  std::size_t first(std::size_t worker, std::size_t level) const noexcept { return first_[worker * levels_ + level]; }

 private:
  static std::size_t distance(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) {
    std::size_t sum = 0;
    for (std::size_t d = 0; d < a.size(); ++d) sum += a[d] > b[d] ? a[d] - b[d] : b[d] - a[d];
    return sum;
  }
  std::size_t dimensions_, levels_;
  std::vector<std::size_t> first_;
};

// Synchronization-Free: every worker solves the top task recursively: an unsolved task's
// unsolved predecessors first (the table's choice first, then the others in turn), then the
// task itself. Nothing is locked; two workers may solve the same task at once (counted in
// Costs::evaluations), which is harmless.
template <FlaggedProblem P>
Costs synchronization_free(P& problem, std::size_t workers) {
  const Lattice& lattice = problem.tasks();
  const FirstPredecessorTable table(lattice, workers);
  auto descend = [&](auto& self, std::size_t w, std::size_t t, Costs& costs) -> void {
    if (problem.solved(t)) return;
    const std::size_t first = table.first(w, lattice.level(t));
    for (std::size_t i = 0; i < lattice.dimensions(); ++i) {
      const std::size_t d = (first + i) % lattice.dimensions();
      if (lattice.coordinate(t, d) > 0) self(self, w, t - lattice.stride(d), costs);
    }
    problem.solve(t);
    ++costs.evaluations;
  };
  // The recursion is as deep as the lattice has levels (401 for 200 x 200): a bigger stack.
  const std::size_t stack = 4096 + 512 * lattice.levels();
  return run_workers(workers, [&](std::size_t w, Costs& costs) { descend(descend, w, lattice.size() - 1, costs); },
                     std::max<std::size_t>(stack, 64 * 1024));
}

// Beyond the paper: one future per task, which first waits for its predecessors' futures.
// The ordering is the futures' own: no barrier, list or flag.
template <LatticeProblem P>
Costs futures(P& problem) {
  const Lattice& lattice = problem.tasks();
  std::vector<std::unique_ptr<presto::futures::Future<Costs>>> task(lattice.size());
  for (std::size_t t = 0; t < lattice.size(); ++t) {
    task[t] = std::make_unique<presto::futures::Future<Costs>>([&, t] {
      Costs costs;
      for (std::size_t d = 0; d < lattice.dimensions(); ++d) {
        if (lattice.coordinate(t, d) == 0) continue;
        auto& before = *task[t - lattice.stride(d)];
        wait_until(costs, &Costs::wait_ns, [&] { return before.ready(); }, [&] { before.get(); });
      }
      problem.solve(t);
      costs.evaluations = 1;
      return costs;
    });
  }
  Costs total;
  for (auto& f : task) total += f->get();
  return total;
}

}  // namespace presto::apps::dynprog
