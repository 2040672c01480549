// Guide, chapter 5: reading a Deadlock.
// Two threads take two locks in opposite orders; each then waits for the lock the other
// holds. Once nothing can run, the scheduler's halt() finds them blocked and run() throws
// presto::Deadlock, which names every blocked thread and what it waits on.
#include <cstdio>

#include <presto/presto.hpp>

int main() {
  presto::Runtime rt{{.processors = 2, .name = "transfer"}};
  try {
    rt.run([] {
      presto::Lock checking{"checking"}, savings{"savings"};
      presto::Semaphore a_holds{0, "a holds checking"}, b_holds{0, "b holds savings"};
      auto a = presto::fork(presto::ThreadAttributes{.name = "teller-a"}, [&] {
        checking.lock();
        a_holds.release();
        b_holds.acquire();  // make sure both hold their first lock
        savings.lock();     // held by teller-b, forever
      });
      auto b = presto::fork(presto::ThreadAttributes{.name = "teller-b"}, [&] {
        savings.lock();
        b_holds.release();
        a_holds.acquire();
        checking.lock();  // held by teller-a, forever
      });
      a.join();
      b.join();
    });
  } catch (const presto::Deadlock& e) {
    std::printf("%s\n", e.what());
    std::printf("blocked() has %zu entries; the first: {thread: \"%s\", id: %llu, waiting_on: \"%s\"}\n",
                e.blocked().size(), e.blocked().front().thread.c_str(),
                static_cast<unsigned long long>(e.blocked().front().id), e.blocked().front().waiting_on.c_str());
    return e.blocked().size() == 3 ? 0 : 1;
  }
  return 1;
}
