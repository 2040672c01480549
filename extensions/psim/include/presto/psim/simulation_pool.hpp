#pragma once
// SimulationPool: PSIM's ready pool. It keeps ready threads in an inner pool of any kind
// (FIFO, LIFO, priority, per-processor, shuffle...) and behaves exactly like it, except that a
// get() that would return nothing first tries to break a partial deadlock: it restarts the
// blocked LPs whose earliest pending messages are provably safe (Simulation::break_deadlock),
// which puts them in the inner pool, and returns what the inner pool then gives. The processors and the scheduler are thus "duped into breaking partial deadlock
// without their knowledge" (Bershad, Lazowska and Levy, 1988, on PSIM).
//
// When the deadlock breaker finds a lock it needs held (get runs in the dispatch path and must
// not wait), size() counts one phantom thread until the next get() retries, so an idle
// processor comes back instead of parking. Installed with its SimulationScheduler by
// Simulation::run; not meant to outlive the simulation.

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include <presto/thread_pool.hpp>

namespace presto::psim {

class Simulation;

class SimulationPool final : public ThreadPool {
 public:
  SimulationPool(Simulation& simulation, std::unique_ptr<ThreadPool> inner);

  void put(Thread& t) override { inner_->put(t); }
  Thread* get(Processor& p) override;
  std::size_t size() const noexcept override {
    return inner_->size() + (retry_.load(std::memory_order_relaxed) ? 1 : 0);
  }
  std::string_view name() const noexcept override { return name_; }
  void attach(const Runtime& rt) override { inner_->attach(rt); }

  ThreadPool& inner() const noexcept { return *inner_; }

 private:
  Simulation& simulation_;
  std::unique_ptr<ThreadPool> inner_;
  std::string name_;
  std::atomic<bool> retry_{false};
};

}  // namespace presto::psim
