// docs/guide/sharing.md: a processor-allocation policy of one's own, installed in a running
// runtime. "Leave some for the others": keep `reserve` hardware threads free of this job
// beyond what other programs are running now, looked at no more than twice a second.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include <presto/presto.hpp>

class LeaveSomeFree final : public presto::AllocationPolicy {
 public:
  explicit LeaveSomeFree(std::size_t reserve) : reserve_(reserve) {}

  std::size_t decide(std::size_t current, std::size_t limit, presto::AllocationEnvironment& env) override {
    const auto now = env.now();  // before every region: keep the common case to this read
    if (looked_ && now - last_ < std::chrono::milliseconds(500)) return current;
    looked_ = true;
    last_ = now;
    const std::size_t busy = env.others_running() + reserve_;
    const std::size_t hardware = env.hardware_processors();
    return std::clamp<std::size_t>(hardware > busy ? hardware - busy : 1, 1, limit);  // never 0
  }
  std::string describe() const override { return "leave-some-free(" + std::to_string(reserve_) + ")"; }

 private:
  std::size_t reserve_;
  bool looked_ = false;
  std::chrono::nanoseconds last_{};
};

int main() {
  presto::Runtime rt{{.processors = 4}};
  return rt.run([&] {
    std::vector<double> v(100'000, 1.0);
    presto::parallel_for(std::size_t{0}, v.size(), [&](std::size_t i) { v[i] *= 2; });  // 4 processors
    // While it runs, the program hands the decision to its own policy; it gets the old one back.
    std::unique_ptr<presto::AllocationPolicy> old = rt.set_allocation_policy(std::make_unique<LeaveSomeFree>(1));
    presto::parallel_for(std::size_t{0}, v.size(), [&](std::size_t i) { v[i] += 1; });  // the policy's count
    std::printf("%s replaced %s; the last region ran on %zu of at most 4 processors\n",
                rt.allocation_policy().describe().c_str(), old->describe().c_str(), rt.processors());
    const bool ok = std::all_of(v.begin(), v.end(), [](double x) { return x == 3.0; });
    return ok && rt.processors() >= 1 && rt.processors() <= 4 ? 0 : 1;
  });
}
