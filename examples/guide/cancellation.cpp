// Guide, "Deadlines, cancellation and more primitives": timed waits and a StopToken that
// wakes threads wherever they wait, with presto::Cancelled naming the object and the thread.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <presto/presto.hpp>

using namespace std::chrono_literals;

int main() {
  presto::Runtime rt{{.processors = 2}};
  return rt.run([] {
    int failures = 0;

    // Deadlines: give up, and leave the object as it was.
    presto::Lock lock{"account"};
    lock.lock();
    auto impatient = presto::fork([&] { return lock.try_lock_for(2ms); });
    const bool got = impatient.join();
    lock.unlock();
    std::printf("try_lock_for on a held lock: %s\n", got ? "acquired" : "timed out");
    failures += got;

    // A timed-out arrival is withdrawn: the phase still needs both parties.
    presto::Barrier pair{2, "pair"};
    const auto alone = pair.arrive_and_wait_for(2ms);
    std::printf("a lone arrival: %s, phases completed: %llu\n",
                alone == presto::Barrier::Arrival::timed_out ? "timed out" : "passed",
                static_cast<unsigned long long>(pair.phase()));
    failures += alone != presto::Barrier::Arrival::timed_out || pair.phase() != 0;

    // Cancellation: one StopSource stops workers blocked on different objects.
    presto::StopSource stop;
    presto::Semaphore jobs{0, "jobs"};
    presto::Monitor m{"mailbox"};
    presto::Condition letter{m, "letter"};
    std::vector<presto::JoinHandle<std::string>> workers;
    auto worker = [&](auto wait) {
      return presto::fork([wait, token = stop.get_token()]() -> std::string {
        try {
          wait(token);
          return "finished";
        } catch (const presto::Cancelled& e) {
          return e.what();
        }
      });
    };
    workers.push_back(worker([&](const presto::StopToken& t) { jobs.acquire(t); }));
    workers.push_back(worker([&](const presto::StopToken& t) {
      presto::Monitor::Entry entry{m};
      letter.wait(entry, t, [] { return false; });  // returns (or throws) with the monitor held
    }));
    workers.push_back(worker([](const presto::StopToken& t) { presto::this_thread::sleep_for(1h, t); }));
    for (auto& w : workers) {
      while (w.thread().state() != presto::ThreadState::blocked) presto::this_thread::yield();
    }
    stop.request_stop();
    for (auto& w : workers) {
      const std::string outcome = w.join();
      std::printf("%s\n", outcome.c_str());
      failures += outcome.find("was cancelled") == std::string::npos;
    }
    return failures;
  });
}
