#pragma once
// Arrivals: the Poisson stream of jobs, as a PSIM logical process with no inputs. At time 0 it
// draws the whole stream (exponential gaps of mean 1 / rate until the end time, or `limit`
// jobs; each job's class uniformly among `classes`) and sends it to the allocator, in time
// order; then it ends, which closes its link (the allocator never waits for it). Event style.

#include <cstdint>
#include <string>

#include <presto/psim/logical_process.hpp>
#include <presto/psim/random.hpp>

#include "messages.hpp"

namespace procsched {

class Arrivals final : public presto::psim::LogicalProcess {
 public:
  Arrivals(std::string name, double rate, int classes, double end, std::uint64_t limit, std::uint64_t seed)
      : LogicalProcess(std::move(name)), rate_(rate), classes_(classes), end_(end), limit_(limit), random_(seed, 0) {}

 protected:
  void initialize() override {
    double t = 0;
    for (std::uint64_t n = 0; limit_ == 0 || n < limit_; ++n) {
      if (n > 0 || limit_ == 0) t += random_.exponential(1 / rate_);
      if (t >= end_) break;
      const auto cls = static_cast<std::int64_t>(random_.below(static_cast<std::uint64_t>(classes_)));
      send(*outputs().front(), {.kind = kArrival, .value = cls}, t);
    }
  }

 private:
  double rate_;
  int classes_;
  double end_;
  std::uint64_t limit_;  // 0: no limit; otherwise the first job arrives at time 0
  presto::psim::Random random_;
};

}  // namespace procsched
