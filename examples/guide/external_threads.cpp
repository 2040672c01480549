// Guide, chapter 3: PRESTO objects used from plain OS threads.
// On an OS thread that is not a processor, Thread::current() is an *external* thread whose
// sleep parks the OS thread, so monitors, conditions, semaphores and joins work there too.
// A KeepAlive keeps the runtime from halting while such a thread may still wake presto
// threads.
#include <cstdio>
#include <deque>
#include <thread>

#include <presto/presto.hpp>

int main() {
  presto::Runtime rt{{.processors = 2}};
  presto::Monitor m{"queue"};
  presto::Condition nonempty{m, "nonempty"};
  std::deque<int> queue;
  bool closed = false;
  presto::Semaphore started{0, "started"};

  // A thread forked before run() waits in the ready pool until the run starts.
  auto consumer = rt.fork(presto::ThreadAttributes{.name = "consumer"}, [&] {
    long sum = 0;
    for (;;) {
      presto::Monitor::Entry entry{m};
      nonempty.wait(entry, [&] { return !queue.empty() || closed; });
      if (queue.empty()) return sum;  // closed and drained
      sum += queue.front();
      queue.pop_front();
    }
  });

  // Without this, the run could halt (and report the consumer deadlocked) whenever the
  // consumer waits and the producer has not yet produced.
  presto::KeepAlive alive = rt.keep_alive();
  long doubled = 0;
  std::thread producer([&, alive = std::move(alive)]() mutable {
    std::printf("the producer is an external thread: %s\n", presto::Thread::current().is_external() ? "yes" : "no");
    for (int i = 1; i <= 1000; ++i) {
      presto::Monitor::Entry entry{m};  // an OS thread owns the monitor like any thread
      queue.push_back(i);
      nonempty.signal();
    }
    {
      presto::Monitor::Entry entry{m};
      closed = true;
      nonempty.broadcast();
    }
    // An OS thread can fork into a running runtime and join the result (it parks meanwhile).
    // Joining needs the run to have begun: a thread of a runtime that is not running never
    // finishes, and join says so (UsageError) instead of waiting forever.
    started.acquire();
    doubled = rt.fork([] { return 2L * 21; }).join();
    alive.reset();  // from here on the runtime may halt
  });

  long sum = rt.run([&] {
    started.release();
    return consumer.join();
  });
  producer.join();
  std::printf("consumer summed %ld (expected 500500); the OS thread's fork returned %ld\n", sum, doubled);
  return sum == 500500 && doubled == 42 ? 0 : 1;
}
