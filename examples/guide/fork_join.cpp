// Guide, chapter 2: fork and JoinHandle.
// presto::fork creates and starts a runtime-owned thread in one step and returns a move-only
// JoinHandle<R>: join() returns the thread's value or rethrows its exception; dropping or
// detaching the handle lets the thread run on unjoined.
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#include <presto/presto.hpp>

using namespace std::chrono_literals;

namespace {
long fib(int n) {
  if (n < 2) return n;
  // A thread per call near the top of the tree, plain recursion below.
  if (n < 15) return fib(n - 1) + fib(n - 2);
  presto::JoinHandle<long> left = presto::fork(fib, n - 1);
  long right = fib(n - 2);
  return left.join() + right;
}
}  // namespace

int main() {
  presto::Runtime rt{{.processors = 2}};
  return rt.run([] {
    int failures = 0;

    // A value.
    long f = presto::fork(fib, 22).join();
    std::printf("fib(22) = %ld\n", f);
    failures += f != 17711;

    // An exception, rethrown by join() in the joining thread.
    auto risky = presto::fork(presto::ThreadAttributes{.name = "risky"}, []() -> int {
      throw std::out_of_range("index 7 out of range");
    });
    std::printf("handle of %s, joinable: %s\n", risky.thread().describe().c_str(), risky.joinable() ? "yes" : "no");
    try {
      risky.join();
      ++failures;
    } catch (const std::out_of_range& e) {
      std::printf("join() rethrew: %s; joinable now: %s\n", e.what(), risky.joinable() ? "yes" : "no");
    }

    // Detached: runs on without a joiner. Here a semaphore tells us it finished.
    presto::Semaphore done{0, "done"};
    presto::fork([&done] {
      presto::sleep_for(1ms);
      done.release();
    }).detach();
    done.acquire();
    std::printf("the detached thread released 'done'\n");

    // Joining twice is a usage error, raised in the caller.
    auto twice = presto::fork([] { return 1; });
    twice.join();
    try {
      twice.join();
      ++failures;
    } catch (const presto::UsageError& e) {
      std::printf("second join: UsageError: %s\n", e.what());
    }
    return failures;
  });
}
