// Guide, "Deadlines, cancellation and more primitives": RwLock, Latch, WaitGroup, call_once
// and when_any.
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>

#include <presto/futures/future.hpp>
#include <presto/futures/when_any.hpp>
#include <presto/presto.hpp>

using namespace std::chrono_literals;

int main() {
  presto::Runtime rt{{.processors = 2}};
  return rt.run([] {
    int failures = 0;

    // A table read by many, written by few: RwLock with std::shared_lock / std::unique_lock.
    presto::RwLock table_lock{"prices"};
    std::map<std::string, int> prices{{"apple", 3}};
    presto::WaitGroup group{"clients"};
    int total = 0;
    presto::Lock total_lock{"total"};
    for (int i = 0; i < 8; ++i) {
      group.add(1);
      presto::fork([&, i] {
        if (i == 0) {
          std::unique_lock writer(table_lock);
          prices["pear"] = 4;
        } else {
          int seen;
          {
            std::shared_lock reader(table_lock);
            seen = prices.at("apple");
          }
          std::scoped_lock guard(total_lock);
          total += seen;
        }
        group.done();
      }).detach();
    }
    group.wait();  // every client has called done()
    std::printf("readers saw apple at 3, 7 times: %d; pear: %d\n", total, prices.at("pear"));
    failures += total != 21 || prices.at("pear") != 4;

    // A Latch: workers set up, then all start together.
    presto::Latch ready{3, "ready"};
    presto::OnceFlag banner{"banner"};
    int banners = 0;
    for (int i = 0; i < 3; ++i) {
      group.add(1);
      presto::fork([&] {
        presto::call_once(banner, [&] { ++banners; });  // exactly one thread prints it
        ready.arrive_and_wait();
        group.done();
      }).detach();
    }
    group.wait();
    std::printf("latch at %td after all arrived; banner initialised %d time(s)\n", ready.count(), banners);
    failures += ready.count() != 0 || banners != 1;

    // when_any: the first of several futures to be ready, without consuming it.
    presto::Semaphore slow_go{0, "slow"};
    presto::futures::Future slow{[&] {
      slow_go.acquire();
      return std::string("slow mirror");
    }};
    presto::futures::Future fast{[] { return std::string("fast mirror"); }};
    auto first = presto::futures::when_any(slow, fast);
    const std::size_t winner = first.get();
    std::printf("first ready: %zu (%s)\n", winner, winner == 1 ? fast.get().c_str() : "?");
    failures += winner != 1;
    slow_go.release();
    std::printf("the other one, later: %s\n", slow.get().c_str());
    return failures;
  });
}
