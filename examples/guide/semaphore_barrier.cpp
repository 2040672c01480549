// Guide, chapter 3: Semaphore, Barrier and AtomicInt::wait.
#include <cstdio>
#include <vector>

#include <presto/presto.hpp>

int main() {
  presto::Runtime rt{{.processors = 2}};
  return rt.run([] {
    int failures = 0;

    // A semaphore with 3 units admits at most 3 threads at a time into a section.
    {
      presto::Semaphore slots{3, "slots"};
      presto::AtomicInt inside{0}, most{0};
      std::vector<presto::JoinHandle<void>> hs;
      for (int t = 0; t < 12; ++t) {
        hs.push_back(presto::fork([&] {
          slots.acquire();  // P
          auto now = ++inside;
          auto seen = most.load();
          while (now > seen && !most.compare_exchange(seen, now)) {
          }
          presto::this_thread::yield();
          --inside;
          slots.release();  // V: hands the unit straight to the longest waiter
        }));
      }
      for (auto& h : hs) h.join();
      std::printf("semaphore: at most %ld of 12 threads were inside at once (limit 3)\n", static_cast<long>(most));
      failures += most > 3;
    }

    // A barrier: 4 threads, 3 phases; exactly one thread per phase is told it was last.
    {
      presto::Barrier barrier{4, "phase"};
      presto::AtomicInt last_arrivals{0};
      std::vector<long> cells(4, 0);
      std::vector<presto::JoinHandle<void>> hs;
      for (int t = 0; t < 4; ++t) {
        hs.push_back(presto::fork([&, t] {
          for (int phase = 0; phase < 3; ++phase) {
            cells[static_cast<std::size_t>(t)] += phase;  // each thread writes its own cell
            if (barrier.arrive_and_wait()) ++last_arrivals;
          }
        }));
      }
      for (auto& h : hs) h.join();
      std::printf("barrier: %llu phases completed, %ld 'last' arrivals, cell 0 = %ld\n",
                  static_cast<unsigned long long>(barrier.phase()), static_cast<long>(last_arrivals), cells[0]);
      failures += barrier.phase() != 3 || last_arrivals != 3 || cells[0] != 3;
    }

    // AtomicInt::wait(old) sleeps until the value differs from old.
    {
      presto::AtomicInt stage{0, "stage"};
      auto watcher = presto::fork([&] {
        long seen = 0;
        while (seen < 3) seen = stage.wait(seen);  // returns the value it saw differ
        return seen;
      });
      for (int s = 1; s <= 3; ++s) {
        presto::this_thread::yield();
        stage = s;  // every update wakes the waiters
      }
      long seen = watcher.join();
      std::printf("atomic: the watcher saw stage %ld\n", seen);
      failures += seen != 3;
    }
    return failures;
  });
}
