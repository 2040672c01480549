// The guide's "Understanding performance" chapter: a program profiled in code. A serial
// set-up phase, then a parallel phase of workers that share a counter under a monitor; the
// report shows the set-up's Quartz weight (its share of elapsed time) far above its share of
// processor time, and the monitor's acquisitions and contention.

#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

#include <presto/instrument/instrument.hpp>
#include <presto/presto.hpp>

namespace instrument = presto::instrument;

namespace {
volatile double sink;
void compute(int units) {  // about units x 10 us of arithmetic
  double x = 0;
  for (int i = 0; i < units * 10000; ++i) x += i * 0.5;
  sink = x;
}
}  // namespace

int main() {
  auto recorder = std::make_shared<instrument::Recorder>();
  presto::Runtime rt{{.processors = 2, .thread_prototype = std::make_unique<instrument::InstrumentedThread>(recorder)}};
  long total = 0;
  rt.run([&] {
    {
      instrument::Scope setup{"set-up"};
      compute(200);  // serial: nothing else can run meanwhile
    }
    instrument::Scope parallel{"parallel phase"};
    instrument::InstrumentedMonitor counter{"counter"};
    std::vector<presto::JoinHandle<void>> workers;
    for (int w = 0; w < 8; ++w) {
      workers.push_back(presto::fork(presto::ThreadAttributes{.name = "worker"}, [&] {
        for (int i = 0; i < 100; ++i) {
          compute(2);
          instrument::InstrumentedMonitor::Entry e{counter};
          ++total;
        }
      }));
    }
    for (auto& w : workers) w.join();
  });
  const instrument::Profile p = recorder->profile();
  std::cout << instrument::format_report(p);

  bool ok = total == 800 && p.threads == 9;
  for (const instrument::ObjectRecord& o : p.objects) {
    if (o.object == "monitor 'counter'") ok = ok && o.acquisitions == 800;
  }
  std::printf("%s\n", ok ? "checked: 9 threads, 800 monitor entries" : "WRONG");
  return ok ? 0 : 1;
}
