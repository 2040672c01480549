// Guide, chapter 4: lateral extension. The running system is given a different object: an
// earliest-deadline-first pool inside a scheduler that logs its decisions
// (apps/live_scheduler/edf_pool.hpp), installed while six threads are ready. They were made
// in one order and run in the order of their deadlines.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <presto/presto.hpp>

#include "edf_pool.hpp"

int main() {
  presto::Runtime rt{{.processors = 1}};  // one processor: the order of dispatch is the pool's
  std::string order;
  rt.run([&] {
    const auto base = presto::Clock::now() + std::chrono::seconds(1);
    const int deadline_ms[] = {50, 20, 60, 10, 40, 30};
    std::vector<presto::JoinHandle<void>> hs;
    for (int i = 0; i < 6; ++i) {
      presto::ThreadAttributes a{.name = std::string(1, char('a' + i)),
                                 .deadline = base + std::chrono::milliseconds(deadline_ms[i])};
      hs.push_back(presto::fork(std::move(a), [&order, i] { order += char('a' + i); }));
    }
    // None has run: this thread has not given up the processor. Install EDF now.
    presto::Runtime& self = *presto::this_thread::runtime();
    auto old = self.replace_scheduler(std::make_unique<LoggingScheduler>(std::make_unique<EdfPool>()));
    std::printf("replaced '%s' (pool '%s') by '%s' (pool '%s')\n", std::string(old->name()).c_str(),
                std::string(old->pool().name()).c_str(), std::string(self.scheduler().name()).c_str(),
                std::string(self.scheduler().pool().name()).c_str());
    for (auto& h : hs) h.join();
  });
  std::printf("made in the order abcdef, ran in the order %s\n", order.c_str());
  return order == "dbfeac" ? 0 : 1;
}
