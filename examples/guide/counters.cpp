// Guide, chapter 3: three ways to protect a counter.
// Spinlock: non-relinquishing (a waiter busy-waits, keeping its processor).
// Lock: relinquishing (a waiter sleeps and its processor runs other threads).
// AtomicInt: PRESTO's atomic integer, one hardware atomic instruction per update.
#include <cstdio>
#include <mutex>
#include <vector>

#include <presto/presto.hpp>

int main() {
  const int threads = 8, rounds = 10'000;
  presto::Runtime rt{{.processors = 2}};
  return rt.run([] {
    presto::Spinlock spin;
    presto::Lock lock{"counter lock"};
    long spun = 0, locked = 0;
    presto::AtomicInt atomic{0, "atomic counter"};

    std::vector<presto::JoinHandle<void>> workers;
    for (int t = 0; t < threads; ++t) {
      workers.push_back(presto::fork([&] {
        for (int i = 0; i < rounds; ++i) {
          {
            std::scoped_lock guard{spin};  // every PRESTO lock is std Lockable
            ++spun;
          }
          if (spin.try_lock()) {  // PRESTO's checklock(): take it only if it is free
            spin.unlock();
          }
          {
            std::scoped_lock guard{lock};
            ++locked;
          }
          atomic++;  // usable like an int; each update is atomic
        }
      }));
    }
    for (auto& w : workers) w.join();
    long a = atomic;  // reads atomically
    std::printf("spinlock: %ld, lock: %ld, atomic: %ld (expected %d each)\n", spun, locked, a, threads * rounds);
    return spun == threads * rounds && locked == spun && a == spun ? 0 : 1;
  });
}
