#include "model.hpp"

#include <stdexcept>

#include <presto/presto.hpp>
#include <presto/shuffle_pool.hpp>
#include <presto/psim/sequential_simulator.hpp>

#include "arrivals.hpp"
#include "policies.hpp"
#include "processor.hpp"

namespace procsched {

using namespace presto::psim;

void ModelConfig::check() const {
  auto need = [](bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(what);
  };
  need(!workloads.empty(), "at least one workload is needed");
  for (const std::string& w : workloads) (void)Workload::named(w);
  need(processors >= 1 && processors <= 1024, "the simulated processors must be 1 to 1024");
  need(overhead >= 0, "the overhead O must be >= 0");
  need(load > 0, "the load U must be > 0");
  need(end > warmup && warmup >= 0, "need 0 <= warm-up < end");
  need(spread >= 0 && spread < 1, "the task-time spread must be in [0, 1)");
  need(min_quantum > 0, "the least quantum must be > 0");
}

namespace {

Allocator& add_allocator(Simulation& sim, Policy policy, const std::vector<Workload>& workloads, AllocatorConfig config) {
  switch (policy) {
    case Policy::run_to_completion: return sim.add<RunToCompletion>("allocator", workloads, config);
    case Policy::round_robin: return sim.add<RoundRobin>("allocator", workloads, config);
    case Policy::dynamic: break;
  }
  return sim.add<Dynamic>("allocator", workloads, config);
}

}  // namespace

ModelResult run_model(const ModelConfig& c, std::size_t psim_processors, Protocol protocol, std::uint64_t shuffle) {
  c.check();
  std::vector<Workload> workloads;
  double work = 0;
  double smallest = 1;
  for (const std::string& name : c.workloads) {
    workloads.push_back(Workload::named(name));
    work += workloads.back().work() / static_cast<double>(c.workloads.size());
    smallest = std::min(smallest, workloads.back().smallest_task(c.processors));
  }
  const double rate = c.load * c.processors / work;
  const AllocatorConfig ac{.processors = c.processors,
                           .overhead = c.overhead,
                           .warmup = c.warmup,
                           .quantum = std::max(39 * c.overhead, c.min_quantum)};
  // A processor reports a task's end when it starts it, at least the least task time later;
  // under Round-Robin it also answers a preemption at once.
  const Time lookahead = c.policy == Policy::round_robin ? 0 : smallest * (1 - c.spread) * 0.999;

  auto build_and_run = [&](Protocol proto, auto&& go) {
    Simulation sim{{.protocol = proto, .end_time = c.end}};
    auto& arrivals = sim.add<Arrivals>("arrivals", rate, static_cast<int>(workloads.size()), c.end, c.limit, c.seed);
    Allocator& allocator = add_allocator(sim, c.policy, workloads, ac);
    sim.connect(arrivals, allocator, 0);
    for (int x = 0; x < c.processors; ++x) {
      auto& p = sim.add<Processor>("processor " + std::to_string(x), c.spread, c.seed, static_cast<std::uint64_t>(x) + 1);
      sim.connect(allocator, p, 0);
      sim.connect(p, allocator, lookahead);
    }
    ModelResult r;
    r.stats = go(sim);
    r.events = r.stats.events;
    r.measures = allocator.measures();
    return r;
  };
  if (psim_processors == 0) {
    return build_and_run(Protocol::deadlock_recovery, [](Simulation& sim) { return SequentialSimulator{sim}.run(); });
  }
  presto::Runtime rt{{.processors = psim_processors}};
  return rt.run([&] {
    return build_and_run(protocol, [shuffle](Simulation& sim) {
      return sim.run(shuffle != 0 ? std::make_unique<presto::ShufflePool>(shuffle) : nullptr);
    });
  });
}

}  // namespace procsched
