// The guide's "Choosing how to wait" (docs/guide/waiting.md): a queue lock from presto::locks
// guarding a shared counter and the ready queue of a SingleLockPool, checked by the Spinlock
// conformance harness; then a Lock that waits competitively and a Barrier that spins briefly
// before sleeping.

#include <cstdio>
#include <memory>
#include <mutex>
#include <vector>

#include <presto/locks/locks.hpp>
#include <presto/presto.hpp>
#include <presto/testing/spinlock_conformance.hpp>

int main() {
  using namespace std::chrono_literals;
  // 1. Any lock of the family goes where a Spinlock goes, the dispatch path included.
  presto::testing::check_spinlock_conformance([] { return std::make_unique<presto::locks::McsLock>(); },
                                              {.iterations = 500, .fifo = true, .preemption = false});
  presto::Runtime rt{{.processors = 2,
                      .pool = std::make_unique<presto::SingleLockPool>(std::make_unique<presto::locks::ClhLock>()),
                      .wait_policy = {.mode = presto::WaitMode::competitive}}};  // every object's default
  presto::locks::McsLock spin;
  long spun = 0;

  // 2. Wait policies: per object, or the runtime's default above.
  presto::Lock table{"table"};  // inherits competitive: spins as long as a block + wake-up costs
  presto::Barrier phase{4, "phase"};
  phase.set_wait_policy({.mode = presto::WaitMode::spin_then_block, .budget = 20us});
  long counted = 0;

  rt.run([&] {
    std::vector<presto::JoinHandle<void>> hs;
    for (int t = 0; t < 4; ++t) {
      hs.push_back(presto::fork([&] {
        for (int i = 0; i < 1000; ++i) {
          { std::scoped_lock g{spin}; ++spun; }
          { std::scoped_lock g{table}; ++counted; }
          if (i % 100 == 0) phase.arrive_and_wait();
        }
      }));
    }
    for (auto& h : hs) h.join();
  });
  std::printf("%ld under an MCS lock, %ld under a competitive Lock (block + wake-up measured at %lld ns; 0: it never slept), "
              "%llu barrier phases\n", spun, counted, static_cast<long long>(table.block_cost().count()),
              static_cast<unsigned long long>(phase.phase()));
  return spun == 4000 && counted == 4000 && phase.phase() == 10 ? 0 : 1;
}
