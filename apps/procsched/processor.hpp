#pragma once
// Processor: one of the machine's P processors, as a PSIM logical process. It runs what the
// allocator sends it: a task's time is its mean times Uniform(1 - spread, 1 + spread), drawn
// from the processor's own random stream (seeded by the model's seed and the processor's
// number), so every run of a model draws the same times. It reports `done` when the task ends
// (sent when the task starts, so the allocator's input from it has a lookahead of the least task
// time), or, asked to preempt the run, `stopped` with the work left, at once.
// Event style: runs in PSIM and in the SequentialSimulator alike.

#include <algorithm>
#include <string>

#include <presto/psim/logical_process.hpp>
#include <presto/psim/random.hpp>

#include "messages.hpp"

namespace procsched {

class Processor final : public presto::psim::LogicalProcess {
 public:
  Processor(std::string name, double spread, std::uint64_t seed, std::uint64_t number)
      : LogicalProcess(std::move(name)), spread_(spread), random_(seed, number) {}

 protected:
  void handle(const presto::psim::Message& m) override {
    presto::psim::Link& allocator = *outputs().front();
    if (m.kind == kPreempt) {
      const double left = m.value == run_ ? std::max(0.0, end_ - now()) : 0.0;
      send(allocator, {.kind = kStopped, .value = m.value, .real = left}, 0);
      run_ = -1;
      return;
    }
    const double work = m.kind == kRunFresh ? m.real * (1 - spread_ + 2 * spread_ * random_.uniform()) : m.real;
    run_ = m.value;
    end_ = now() + work;
    send(allocator, {.kind = kDone, .value = run_}, work);
  }

 private:
  double spread_;
  presto::psim::Random random_;
  std::int64_t run_ = -1;  // the run in progress (-1: none)
  double end_ = 0;
};

}  // namespace procsched
