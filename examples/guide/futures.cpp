// docs/guide/futures.md: futures, promises and when_all.
#include <cstdio>
#include <deque>
#include <stdexcept>
#include <string>

#include <presto/futures/future.hpp>
#include <presto/futures/promise.hpp>
#include <presto/futures/when_all.hpp>
#include <presto/runtime.hpp>

using presto::futures::Future;
using presto::futures::Promise;
using presto::futures::when_all;

long fib(int n) {
  if (n < 15) return n < 2 ? n : fib(n - 1) + fib(n - 2);
  Future left{fib, n - 1};  // a new thread computes fib(n - 1) ...
  long right = fib(n - 2);  // ... while this one computes fib(n - 2)
  return left.get() + right;
}

int main() {
  presto::Runtime rt{{.processors = 2}};
  int status = rt.run([] {
    // A future per value; get() waits for it and may be called again, from any thread.
    Future<long> f{fib, 25};
    const long value = f.get();
    std::printf("fib(25) = %ld (ready: %s, again: %ld)\n", value, f.ready() ? "yes" : "no", f.get());

    // Exceptions travel too: every get() rethrows.
    Future<int> bad{[]() -> int { throw std::domain_error("no such value"); }};
    try {
      (void)bad.get();
    } catch (const std::domain_error& e) {
      std::printf("bad.get() threw: %s\n", e.what());
    }

    // A promise is a value produced elsewhere; when_all waits for several in order.
    Promise<std::string> name{"name"};
    Future<int> answer{[] { return 42; }};
    auto both = when_all(answer, name);
    name.set_value("presto");
    auto [n, s] = both.get();
    std::printf("when_all: %d and %s\n", n, s.c_str());

    // A future per row: futures do not move, so keep them in a deque.
    std::deque<Future<int>> rows;
    for (int i = 0; i < 4; ++i) rows.emplace_back([i] { return i * i; });
    int sum = 0;
    for (int v : when_all(rows).get()) sum += v;
    std::printf("sum of squares 0..3 = %d\n", sum);
    return fib(25) == 75025 && sum == 14 ? 0 : 1;
  });

  // From a plain OS thread: name the runtime; get() parks the OS thread.
  Future<int> outside{rt, [] { return 7; }};
  rt.run([] {});
  std::printf("from main(): %d\n", outside.get());
  return status;
}
