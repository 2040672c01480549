#include <presto/psim/phold.hpp>

#include <string>

#include <time.h>

namespace presto::psim {

PholdProcess::PholdProcess(std::string name, const PholdConfig& config, std::uint32_t index)
    : LogicalProcess(std::move(name)), config_(config), random_(config.seed, index) {}

void PholdProcess::initialize() {
  for (std::uint32_t i = 0; i < config_.population; ++i) {
    schedule(Message{.value = static_cast<std::int64_t>(index()) * 1000003 + i}, delay());
  }
}

void PholdProcess::handle(const Message& m) {
  if (config_.record) history_.push_back({m.time, m.source, m.value});
  checksum_ = checksum_ * 31 + static_cast<std::uint64_t>(m.value) + spin(config_.work);
  Message next{.value = m.value};
  if (!outputs().empty() && random_.uniform() < config_.remote) {
    send(*outputs()[random_.below(outputs().size())], next, delay());
  } else {
    schedule(next, delay());
  }
}

void build_phold(Simulation& sim, const PholdConfig& config) {
  std::vector<PholdProcess*> lps;
  for (std::uint32_t i = 0; i < config.processes; ++i) {
    lps.push_back(&sim.add<PholdProcess>("phold-" + std::to_string(i), config, i));
  }
  for (auto* from : lps) {
    for (auto* to : lps) {
      if (from != to) sim.connect(*from, *to, config.lookahead);
    }
  }
}

std::uint64_t spin(std::uint64_t iterations) noexcept {
  std::uint64_t x = 0x2545f4914f6cdd1dULL;
  for (std::uint64_t i = 0; i < iterations; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    asm volatile("" : "+r"(x));
  }
  return iterations == 0 ? 0 : x & 1;
}

std::uint64_t work_iterations(std::chrono::nanoseconds duration) {
  // Thread CPU time, not wall time, and the fastest of several trials: on a loaded machine the
  // calibrating thread may be descheduled, which would make the work too short.
  static const double per_ns = [] {
    auto cpu_ns = [] {
      timespec ts{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
      return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
    };
    const std::uint64_t n = 500'000;
    double best = 0;
    for (int trial = 0; trial < 7; ++trial) {
      const double t0 = cpu_ns();
      volatile std::uint64_t sink = spin(n);
      (void)sink;
      const double rate = static_cast<double>(n) / (cpu_ns() - t0);
      if (rate > best) best = rate;
    }
    return best;
  }();
  return static_cast<std::uint64_t>(per_ns * static_cast<double>(duration.count()));
}

}  // namespace presto::psim
