// Guide, chapter 4: a Spinlock subclass. A ticket lock serves spinning threads in the order
// they arrived (the default test-and-test-and-set lock makes no such promise). It is a
// Spinlock, so it can stand wherever a Spinlock& is expected, and it is std Lockable.
#include <atomic>
#include <cstdio>
#include <mutex>
#include <vector>

#include <presto/presto.hpp>

namespace {

class TicketLock final : public presto::Spinlock {
 protected:
  void acquire() noexcept override {
    const unsigned mine = next_.fetch_add(1, std::memory_order_relaxed);
    while (serving_.load(std::memory_order_acquire) != mine) {
      // busy-wait: a Spinlock never gives up its processor
    }
  }
  bool try_acquire() noexcept override {
    unsigned s = serving_.load(std::memory_order_acquire);
    unsigned expected = s;
    return next_.compare_exchange_strong(expected, s + 1, std::memory_order_acquire, std::memory_order_relaxed);
  }
  void release() noexcept override { serving_.fetch_add(1, std::memory_order_release); }

 private:
  std::atomic<unsigned> next_{0};     // the next ticket to hand out
  std::atomic<unsigned> serving_{0};  // the ticket allowed in
};

// Written for any Spinlock.
void add_many(presto::Spinlock& lock, long& counter, int n) {
  for (int i = 0; i < n; ++i) {
    std::scoped_lock guard{lock};
    ++counter;
  }
}

}  // namespace

int main() {
  presto::Runtime rt{{.processors = 2}};
  long counter = 0;
  rt.run([&] {
    TicketLock lock;
    std::vector<presto::JoinHandle<void>> hs;
    for (int t = 0; t < 4; ++t) {
      hs.push_back(presto::fork(add_many, std::ref<presto::Spinlock>(lock), std::ref(counter), 10'000));
    }
    for (auto& h : hs) h.join();
  });
  std::printf("4 threads x 10000 increments under a ticket lock: %ld\n", counter);
  return counter == 40'000 ? 0 : 1;
}
