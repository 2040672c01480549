// Guide, chapter 1: how a run ends.
// run() returns when the system halts: no thread ready or running, no timer pending and no
// KeepAlive held. Four runs show the four ways that can happen.
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include <presto/presto.hpp>

using namespace std::chrono_literals;

int main() {
  int failures = 0;

  // 1. The first thread returning does not end the run: a detached thread still works.
  {
    presto::Runtime rt{{.processors = 2, .name = "detached"}};
    bool finished = false;
    int status = rt.run([&] {
      presto::fork([&] {
        presto::sleep_for(2ms);  // a pending sleep keeps the system from halting
        finished = true;
      }).detach();
      return 7;  // the first thread ends here...
    });
    // ...but run() returned only once the detached thread was done too.
    std::printf("1. run() returned %d; the detached thread finished: %s\n", status, finished ? "yes" : "no");
    failures += !(status == 7 && finished);
  }

  // 2. Threads still blocked when nothing else can run: Deadlock.
  {
    presto::Runtime rt{{.processors = 2, .name = "stuck"}};
    try {
      rt.run([] {
        presto::Semaphore never{0, "never"};
        never.acquire();  // nobody will ever release it
      });
      std::printf("2. no deadlock?\n");
      ++failures;
    } catch (const presto::Deadlock& e) {
      std::printf("2. Deadlock with %zu blocked thread(s): %s waits on %s\n", e.blocked().size(),
                  e.blocked().at(0).thread.c_str(), e.blocked().at(0).waiting_on.c_str());
    }
  }

  // 3. A detached thread's exception ends the run; the threads still alive are abandoned.
  {
    presto::Runtime rt{{.processors = 2, .name = "orphan"}};
    try {
      rt.run([] {
        presto::fork(presto::ThreadAttributes{.name = "careless"},
                     [] { throw std::runtime_error("nobody will join me"); })
            .detach();
        presto::Semaphore forever{0, "forever"};
        forever.acquire();  // the first thread is abandoned here when the run ends
      });
      ++failures;
    } catch (const std::runtime_error& e) {
      std::printf("3. run() rethrew the detached thread's exception: %s\n", e.what());
    }
  }

  // 4. The first thread's own exception ends the run too.
  {
    presto::Runtime rt{{.processors = 2, .name = "failing"}};
    try {
      rt.run([]() -> int { throw std::logic_error("the first thread gave up"); });
      ++failures;
    } catch (const std::logic_error& e) {
      std::printf("4. run() rethrew the first thread's exception: %s\n", e.what());
    }
  }
  return failures;
}
