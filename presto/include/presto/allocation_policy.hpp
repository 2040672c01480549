#pragma once
// Processor allocation between jobs: how many processors a runtime uses when the machine is
// shared with other programs. The runtime asks its AllocationPolicy at every safe point (the
// entry of a parallel region: parallel_for, or a construct calling
// Runtime::begin_parallel_region) and sets that many processors before the region sizes its
// team. Severance's ASAT thesis (../shared/research/seed-001-asat.md; docs/guide/sharing.md).
//
//   presto::Runtime rt{{.processors = 4, .allocation = std::make_unique<presto::AsatAllocation>()}};
//   rt.set_allocation_policy(std::make_unique<presto::LoadAllocation>());   // while running
//
// Built in: FixedAllocation (the default: the count never changes by itself), AsatAllocation
// (a timed barrier over the processors), LoadAllocation (the OS run queue), HybridAllocation
// (the barrier to shrink, the OS load to allow growth). PRESTO_ALLOCATION=fixed|asat|load|
// hybrid selects one with its defaults for any program (it overrides RuntimeConfig); it acts
// where the program enters regions through parallel_for or begin_parallel_region.
//
// Write your own by subclassing AllocationPolicy: it observes the machine only through the
// AllocationEnvironment it is given, so a test can drive it with a fake clock, barrier and
// load (tests/allocation/).

#include <chrono>
#include <cstddef>
#include <string>

namespace presto {

// What an allocation policy may observe. The runtime passes its own (real clock, a real
// timed barrier over its processors, /proc); a test passes a fake. Called only from inside
// AllocationPolicy::decide, on the presto thread entering the region.
class AllocationEnvironment {
 public:
  virtual ~AllocationEnvironment() = default;
  // Monotonic time. The runtime's: std::chrono::steady_clock (a vDSO read, ~20 ns).
  virtual std::chrono::nanoseconds now() = 0;
  // The thesis's timed barrier: an empty region over `processors` processors (one thread
  // pinned to each, the caller's own among them), returning the passage time: from the first
  // arrival to the last departure. A processor whose OS thread the OS has descheduled arrives
  // a time slice late. `processors` above the current count starts processors for the probe
  // (the runtime sets the count the policy returns afterwards): std::runtime_error naming
  // the policy if one cannot start. Takes microseconds on an idle machine; may take a time slice or more under load.
  virtual std::chrono::nanoseconds timed_barrier(std::size_t processors) = 0;
  // OS threads of other programs that are running or ready to run now: the system's run
  // queue (/proc/loadavg's running count) less this process's own running threads. Costs a
  // few /proc reads (tens of microseconds): rate-limit it.
  virtual std::size_t others_running() = 0;
  // The hardware threads this process may run on (its CPU affinity mask: taskset is obeyed).
  virtual std::size_t hardware_processors() = 0;
};

// A processor-allocation policy: a component the runtime consults, replaceable while it runs
// (Runtime::set_allocation_policy). Contracts:
// - decide() is called at each region entry, on the entering presto thread, with no PRESTO
//   lock held and never twice at once in one runtime (a region entered while another thread
//   is inside decide() goes on with the current count). It may take time (a barrier) but
//   should be a clock read when no evaluation is due: it runs before every region.
// - It returns the count for the region: 1 <= result <= max(limit, current). A result out of
//   that range is a UsageError naming the policy, raised from the region entry, and the count
//   is left as it was: a policy never leaves the runtime without a processor.
// - The object is the runtime's until replaced; its state needs no lock (one caller at once).
class AllocationPolicy {
 public:
  virtual ~AllocationPolicy() = default;
  // current: the runtime's processors now; limit: the most the policy may ask for (the count
  // when it was installed, or the limit given then).
  virtual std::size_t decide(std::size_t current, std::size_t limit, AllocationEnvironment& env) = 0;
  // For logs and errors: "asat(eval 0.5 s, bad 1 ms, bad_trig 2, good_trig 15)".
  virtual std::string describe() const = 0;
};

// Today's behaviour: the count changes only when the program calls set_processors. decide()
// returns `current` without reading anything.
class FixedAllocation final : public AllocationPolicy {
 public:
  std::size_t decide(std::size_t current, std::size_t limit, AllocationEnvironment& env) override;
  std::string describe() const override { return "fixed"; }
};

}  // namespace presto
