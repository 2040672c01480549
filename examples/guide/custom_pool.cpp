// Guide, chapter 4: installing a pool of our own in a running system (lateral extension).
// The first thread readies six threads on one processor, then replaces the FIFO pool with an
// UrgentFirstPool: replace_pool() moves every ready thread into the new pool, and the urgent
// ones run first.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <presto/presto.hpp>

#include "urgent_first_pool.hpp"

int main() {
  presto::Runtime rt{{.processors = 1, .pool = std::make_unique<presto::FifoPool>()}};
  std::string order;
  rt.run([&] {
    presto::Spinlock order_lock;
    std::vector<presto::JoinHandle<void>> hs;
    const char* names[] = {"n1", "u1", "n2", "u2", "n3", "u3"};
    for (const char* name : names) {
      const int priority = name[0] == 'u' ? 1 : 0;
      hs.push_back(presto::fork(presto::ThreadAttributes{.name = name, .priority = priority}, [&] {
        std::scoped_lock guard{order_lock};
        order += presto::Thread::current().name() + " ";
      }));
    }
    // None of them has run yet (one processor, and this thread has not blocked).
    std::unique_ptr<presto::ThreadPool> old = rt.scheduler().replace_pool(std::make_unique<UrgentFirstPool>());
    std::printf("replaced pool '%s' by '%s' with %zu threads ready\n", std::string(old->name()).c_str(),
                std::string(rt.scheduler().pool().name()).c_str(), rt.scheduler().pool().size());
    for (auto& h : hs) h.join();
  });
  std::printf("order: %s\n", order.c_str());
  if (rt.processors() != 1) return 0;  // PRESTO_PROCESSORS overrode the config: order may vary
  return order == "u1 u2 u3 n1 n2 n3 " ? 0 : 1;
}
