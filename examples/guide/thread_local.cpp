// Guide, chapter 2: presto::ThreadLocal versus C++ thread_local.
// A C++ thread_local belongs to the processor (an OS thread); a presto thread may resume on
// another processor after any yield or blocking call. ThreadLocal<T> gives every presto
// thread its own value, wherever it runs.
#include <cstdio>
#include <memory>
#include <vector>

#include <presto/presto.hpp>

namespace {
presto::ThreadLocal<int> steps_taken{0};  // one value per presto thread

void busy_work() {
  volatile unsigned x = 0;
  for (unsigned k = 0; k < 2000; ++k) x = x + k;
}

std::size_t processor_index() { return presto::Thread::current().processor()->index(); }
}  // namespace

int main() {
  const int threads = 16, steps = 50;
  // One global FIFO queue: a thread that yields is picked up by whichever processor asks first.
  presto::Runtime rt{{.processors = 2, .pool = std::make_unique<presto::FifoPool>()}};
  long migrations = 0, exact = 0;
  rt.run([&] {
    presto::AtomicInt moves{0}, correct{0};
    std::vector<presto::JoinHandle<void>> hs;
    for (int t = 0; t < threads; ++t) {
      hs.push_back(presto::fork([&] {
        for (int i = 0; i < steps; ++i) {
          ++*steps_taken;
          busy_work();
          const std::size_t before = processor_index();
          presto::this_thread::yield();              // may resume on the other processor
          if (processor_index() != before) ++moves;  // a thread_local would now be another one
        }
        if (*steps_taken == steps) ++correct;  // the value followed the thread
      }));
    }
    for (auto& h : hs) h.join();
    migrations = moves;
    exact = correct;
  });
  std::printf("ThreadLocal: %ld of %d threads counted exactly %d steps\n", exact, threads, steps);
  std::printf("threads changed processors %ld times in %d yields (depends on scheduling)\n", migrations,
              threads * steps);
  return exact == threads ? 0 : 1;
}
