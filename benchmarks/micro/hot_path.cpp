// hot_path: the core's hot operations on one processor, N times, for instruction counts.
// tools/count-instructions runs it under callgrind with N and 2N and prints the difference
// divided by N: the instructions of one operation, free of start-up and of the machine's load
// (docs/design/runtime.md, "What it costs", keeps the counts before and after each change).
//
// Usage: hot_path OPERATION N [P [R]]
//   P: processors (default 1, as the counts are taken); with P > 1 it is a plain timed run
//   (`time hot_path skynet 1000000 16`: skynet's scaling on a many-core machine).
//   R: run the N operations R times in one runtime and print the least and the median time
//   per operation. Timing A/B builds this way (alternated, `hot_path yield 1000000 1 11`) is
//   steadier on a shared machine than timing whole processes: one slow run is left out, and
//   start-up is not in it. Without R it prints nothing.
//   yield     two threads yield to each other, each from its own loop: N switches
//   yield-one-body  the same, both threads running one function (as threads forked with one
//             body do): each switch returns to the call site the other left from, which the
//             processor's return-address predictor gets right (jump_context.cpp)
//   pinned-yield  on each of the P processors, two threads pinned to it yield to each other:
//             N switches each, in parallel (time per switch per processor: the same on P
//             processors as on 1 when pinned threads share nothing across processors)
//   handoff   two threads hand a monitor's condition back and forth: N hand-offs
//   turns     the same, but each thread enters the monitor for each turn and leaves it after
//             its signal (a producer's and a consumer's pattern, the README's): N hand-offs
//   fork-join fork an empty thread and join it at once: N threads
//   batch     fork 10,000 threads, then join them in order (Figure 3's pattern): N threads
//   batch-dispatched  the same, but the forker yields once before its joins, so that every
//             thread runs on a stack of its own, as almost all do in Figure 3 on 2 processors
//   skynet    trees of 111,111 threads, ten children a node: N threads (rounded down)
//   lock      an uncontended Lock: N lock + unlock pairs
//   semaphore an uncontended Semaphore: N release + acquire pairs
//   wake      two threads wake each other through two Semaphores: N wake-ups (each a block,
//             a wake-up and a switch)
//   barrier   a Barrier of one party: N phases
//   future-get  a Future computing a constant, then get(): N futures
//   promise-reply  a request and its reply through one-shot Promises, to a server thread and
//             back: N round trips (the 2N promises are made beforehand, in a std::deque)
//   run       an empty Runtime::run, its start and its end on P processors: N runs
//   OP/subclass  OP under a Scheduler subclass that overrides ready() (as PSIM's and a user's
//             do): the dispatch path then makes every virtual call, and the pool's put and get
//             are all it has of the built-in scheduler's shortcuts

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <presto/futures/future.hpp>
#include <presto/presto.hpp>

#include "skynet.hpp"

namespace {

// A Scheduler subclass: not the plain Scheduler, so dispatch calls its virtual functions.
class Overriding final : public presto::Scheduler {
 public:
  using presto::Scheduler::Scheduler;
  void ready(presto::Thread& t) override { presto::Scheduler::ready(t); }
};

void yield_pair(std::uint64_t n, std::optional<std::size_t> affinity) {
  auto other = presto::fork(presto::ThreadAttributes{.affinity = affinity}, [n] {
    for (std::uint64_t i = 0; i < n / 2; ++i) presto::this_thread::yield();
  });
  for (std::uint64_t i = 0; i < n / 2; ++i) presto::this_thread::yield();
  other.join();
}

[[gnu::noinline]] void yield_times(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) presto::this_thread::yield();
}

bool run(const std::string& op, std::uint64_t n, std::size_t processors) {
  if (op == "yield") {
    yield_pair(n, std::nullopt);
  } else if (op == "yield-one-body") {
    auto other = presto::fork([n] { yield_times(n / 2); });
    yield_times(n / 2);
    other.join();
  } else if (op == "pinned-yield") {
    std::vector<presto::JoinHandle<void>> pairs;
    for (std::size_t k = 0; k < processors; ++k) {
      pairs.push_back(presto::fork(presto::ThreadAttributes{.affinity = k}, [n, k] { yield_pair(n, k); }));
    }
    for (auto& p : pairs) p.join();
  } else if (op == "handoff") {
    presto::Monitor m{"m"};
    presto::Condition turn_changed{m, "turn"};
    std::uint64_t turn = 0;
    auto other = presto::fork([&] {
      presto::Monitor::Entry e{m};
      for (std::uint64_t i = 0; i < n / 2; ++i) {
        turn_changed.wait(e, [&] { return turn % 2 == 1; });
        ++turn;
        turn_changed.signal();
      }
    });
    {
      presto::Monitor::Entry e{m};
      for (std::uint64_t i = 0; i < n / 2; ++i) {
        ++turn;
        turn_changed.signal();
        turn_changed.wait(e, [&] { return turn % 2 == 0; });
      }
    }
    other.join();
  } else if (op == "turns") {
    presto::Monitor m{"m"};
    presto::Condition turn_changed{m, "turn"};
    std::uint64_t turn = 0;
    auto take_turns = [&](std::uint64_t me) {
      for (std::uint64_t i = 0; i < n / 2; ++i) {
        presto::Monitor::Entry e{m};
        turn_changed.wait(e, [&] { return turn % 2 == me; });
        ++turn;
        turn_changed.signal();
      }
    };
    auto other = presto::fork(take_turns, 1);
    take_turns(0);
    other.join();
  } else if (op == "fork-join") {
    for (std::uint64_t i = 0; i < n; ++i) presto::fork([] {}).join();
  } else if (op == "batch" || op == "batch-dispatched") {
    std::vector<double> out(10'000);
    for (std::uint64_t b = 0; b < n / out.size(); ++b) {
      std::vector<presto::JoinHandle<void>> threads;
      threads.reserve(out.size());
      for (std::size_t i = 0; i < out.size(); ++i) threads.push_back(presto::fork([&out, i] { out[i] = static_cast<double>(i); }));
      if (op == "batch-dispatched") presto::this_thread::yield();
      for (auto& t : threads) t.join();
    }
  } else if (op == "skynet") {
    for (std::uint64_t r = 0; r < n / 111'111; ++r) {
      if (presto::bench::skynet(0, 100'000) != 100'000ull * 99'999 / 2) std::abort();
    }
  } else if (op == "lock") {
    presto::Lock lock{"lock"};
    for (std::uint64_t i = 0; i < n; ++i) {
      lock.lock();
      lock.unlock();
    }
  } else if (op == "semaphore") {
    presto::Semaphore sem{0, "semaphore"};
    for (std::uint64_t i = 0; i < n; ++i) {
      sem.release();
      sem.acquire();
    }
  } else if (op == "wake") {
    presto::Semaphore ping{0, "ping"}, pong{0, "pong"};
    auto other = presto::fork([&] {
      for (std::uint64_t i = 0; i < n / 2; ++i) {
        ping.acquire();
        pong.release();
      }
    });
    for (std::uint64_t i = 0; i < n / 2; ++i) {
      ping.release();
      pong.acquire();
    }
    other.join();
  } else if (op == "future-get") {
    for (std::uint64_t i = 0; i < n; ++i) {
      presto::futures::Future f{[] { return 1; }};
      if (f.get() != 1) std::abort();
    }
  } else if (op == "promise-reply") {
    std::deque<presto::futures::Promise<std::uint64_t>> requests(n), replies(n);
    auto server = presto::fork([&] {
      for (std::uint64_t i = 0; i < n; ++i) replies[i].set_value(requests[i].get() + 1);
    });
    for (std::uint64_t i = 0; i < n; ++i) {
      requests[i].set_value(i);
      if (replies[i].get() != i + 1) std::abort();
    }
    server.join();
  } else if (op == "barrier") {
    presto::Barrier barrier{1, "barrier"};
    for (std::uint64_t i = 0; i < n; ++i) barrier.arrive_and_wait();
  } else {
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  char* end = nullptr;
  const std::uint64_t n = argc >= 3 ? std::strtoull(argv[2], &end, 10) : 0;
  bool valid = argc >= 3 && argc <= 5 && *end == '\0' && n > 0;
  const std::uint64_t processors = argc >= 4 ? std::strtoull(argv[3], &end, 10) : 1;
  valid = valid && *end == '\0' && processors > 0;
  const std::uint64_t repeats = argc == 5 ? std::strtoull(argv[4], &end, 10) : 0;
  valid = valid && *end == '\0' && (argc < 5 || repeats > 0);
  if (!valid) {
    std::fputs("usage: hot_path yield|yield-one-body|pinned-yield|handoff|fork-join|batch|skynet|lock|semaphore|wake|barrier|future-get|promise-reply|run[/subclass] N [P [R]]   "
               "(N, P, R > 0)\n",
               stderr);
    return 2;
  }
  std::string op = argv[1];
  constexpr std::string_view kSubclass = "/subclass";
  const bool subclass = op.ends_with(kSubclass);
  if (subclass) op.resize(op.size() - kSubclass.size());
  presto::Runtime rt{{.processors = processors, .scheduler = subclass ? std::make_unique<Overriding>() : nullptr}};
  std::vector<double> ns;  // per operation, one entry a run
  for (std::uint64_t r = 0; r < std::max<std::uint64_t>(repeats, 1); ++r) {
    const auto start = std::chrono::steady_clock::now();
    bool known = true;
    if (op == "run") {
      for (std::uint64_t i = 0; i < n; ++i) rt.run([] {});
    } else {
      known = rt.run([&] { return run(op, n, processors); });
    }
    if (!known) {
      std::fprintf(stderr, "hot_path: unknown operation '%s'\n", op.c_str());
      return 2;
    }
    ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
                 static_cast<double>(n));
  }
  if (repeats > 0) {
    std::sort(ns.begin(), ns.end());
    std::printf("%s: least %.2f ns, median %.2f ns per operation (%llu runs of %llu on %llu processor%s)\n",
                argv[1], ns.front(), ns[ns.size() / 2], static_cast<unsigned long long>(repeats),
                static_cast<unsigned long long>(n), static_cast<unsigned long long>(processors),
                processors == 1 ? "" : "s");
  }
  return 0;
}
