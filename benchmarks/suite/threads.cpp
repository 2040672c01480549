// Threads: fork + join of an empty thread, the paper's Table II (create and destroy 100,000
// threads on 1..P processors) and skynet (a tree of threads, ten children per node, that
// sums the leaves' numbers: 1,111,111 threads for 1,000,000 leaves; PRESTO with its default
// pool in fifo order, "presto", and in lifo order, "presto-lifo"), on 1..P processors and,
// on P, with 1,000x, 100x and 10x fewer leaves, at least 100 (the cost per thread as the count
// grows; the smallest trees show the cost of starting and halting a run).

#include <algorithm>
#include <boost/fiber/all.hpp>
#if PRESTO_BENCH_ONETBB
#include <oneapi/tbb/task_group.h>
#endif
#include <stdexcept>
#include <thread>
#include <vector>

#include <presto/presto.hpp>

#include "../support/skynet.hpp"
#include "suite.hpp"

namespace presto::bench {
namespace {

namespace fibers = boost::fibers;

void fork_join(Suite& s, std::uint64_t n) {
  presto::Runtime rt{{.processors = 1}};
  s.measure("fork_join", "presto", 1, n, [&] {
    rt.run([n] {
      for (std::uint64_t i = 0; i < n; ++i) presto::fork([] {}).join();
    });
  });
  s.measure("fork_join", "boost.fiber", 1, n, [n] {
    with_fibers(1, [n] {
      for (std::uint64_t i = 0; i < n; ++i) fibers::fiber([] {}).join();
    });
  });
#if PRESTO_BENCH_ONETBB
  {
    OneTbb tbb{1};
    s.measure("fork_join", "onetbb", 1, n, [&] {
      tbb.run([n] {
        for (std::uint64_t i = 0; i < n; ++i) {
          tbb::task_group g;
          g.run([] {});
          g.wait();
        }
      });
    });
  }
#endif
  const std::uint64_t os = n / 100;  // an OS thread costs tens of microseconds
  s.measure("fork_join", "std", 1, os, [os] {
    Pinned pin{1};
    for (std::uint64_t i = 0; i < os; ++i) std::thread([] {}).join();
  });
}

// Table II: `p` creator threads each create and destroy n/p empty threads.
void create_destroy(Suite& s, std::size_t p, std::uint64_t n) {
  presto::Runtime rt{{.processors = p}};
  s.measure("create_destroy", "presto", p, n, [&] {
    rt.run([n, p] {
      std::vector<presto::JoinHandle<void>> creators;
      for (std::size_t c = 0; c < p; ++c) {
        creators.push_back(presto::fork([n, p] {
          for (std::uint64_t i = 0; i < n / p; ++i) presto::fork([] {}).join();
        }));
      }
      for (auto& c : creators) c.join();
    });
  });
  const std::uint64_t os = n / 50;
  s.measure("create_destroy", "std", p, os, [os, p] {
    Pinned pin{p};
    std::vector<std::thread> creators;
    for (std::size_t c = 0; c < p; ++c) {
      creators.emplace_back([os, p] {
        for (std::uint64_t i = 0; i < os / p; ++i) std::thread([] {}).join();
      });
    }
    for (auto& c : creators) c.join();
  });
}

// Boost.Fiber gets the same 64 KiB stacks as PRESTO's default: its own default (128 KiB,
// one mmap each) runs out of mappings long before a million fibers.
void skynet_fiber(std::uint64_t& out, std::uint64_t num, std::uint64_t size) {
  if (size == 1) {
    out = num;
    return;
  }
  std::uint64_t results[10];
  fibers::fiber children[10];
  for (std::uint64_t i = 0; i < 10; ++i) {
    children[i] = fibers::fiber(std::allocator_arg, fibers::fixedsize_stack(64 * 1024), skynet_fiber,
                                std::ref(results[i]), num + i * (size / 10), size / 10);
  }
  out = 0;
  for (std::uint64_t i = 0; i < 10; ++i) {
    children[i].join();
    out += results[i];
  }
}

#if PRESTO_BENCH_ONETBB
// The same tree as tasks: a task_group per node, ten children, joined by its wait.
std::uint64_t skynet_tbb(std::uint64_t num, std::uint64_t size) {
  if (size == 1) return num;
  std::uint64_t results[10];
  tbb::task_group g;
  for (std::uint64_t i = 0; i < 10; ++i) {
    g.run([&results, i, num, size] { results[i] = skynet_tbb(num + i * (size / 10), size / 10); });
  }
  g.wait();
  std::uint64_t sum = 0;
  for (std::uint64_t r : results) sum += r;
  return sum;
}
#endif

void check_skynet(std::uint64_t sum, std::uint64_t leaves) {
  if (sum != leaves * (leaves - 1) / 2) throw std::runtime_error("skynet: wrong sum");
}

void skynet(Suite& s, std::size_t p, std::uint64_t leaves) {
  std::uint64_t threads = 0;
  for (std::uint64_t level = leaves; level >= 1; level /= 10) threads += leaves / level;
  presto::Runtime rt{{.processors = p}};
  s.measure("skynet", "presto", p, threads, [&] {
    check_skynet(rt.run([leaves] { return presto::bench::skynet(0, leaves); }), leaves);
  }, leaves);
  // The same program with the default pool in its lifo order (a one-line configuration): the
  // tree runs depth first, so only one path of it is alive at a time instead of whole levels.
  presto::Runtime lifo{{.processors = p,
                        .pool = std::make_unique<presto::LocalQueuePool>(presto::LocalQueuePool::Placement::waker,
                                                                          presto::LocalQueuePool::Order::lifo)}};
  s.measure("skynet", "presto-lifo", p, threads, [&] {
    check_skynet(lifo.run([leaves] { return presto::bench::skynet(0, leaves); }), leaves);
  }, leaves);
  // Boost.Fiber takes seconds here (a million stacks touched): three repetitions.
  s.measure("skynet", "boost.fiber", p, threads, [&] {
    std::uint64_t sum = 0;
    with_fibers(p, [&] {
      fibers::fiber root{skynet_fiber, std::ref(sum), 0, leaves};
      root.join();
    });
    check_skynet(sum, leaves);
  }, leaves, 3);
#if PRESTO_BENCH_ONETBB
  OneTbb tbb{p};
  s.measure("skynet", "onetbb", p, threads, [&] {
    std::uint64_t sum = 0;
    tbb.run([&] { sum = skynet_tbb(0, leaves); });
    check_skynet(sum, leaves);
  }, leaves);
#endif
}

}  // namespace

void run_threads(Suite& s) {
  const Options& o = s.options();
  fork_join(s, o.scaled(2'000'000, 100'000));
  for (std::size_t p : o.curve()) create_destroy(s, p, o.scaled(100'000, 20'000));
  const std::uint64_t leaves = o.scaled(1'000'000, 10'000);
  for (std::size_t p : o.curve()) skynet(s, p, leaves);
  // Thread-count scaling: the cost per thread as the tree grows, on all processors.
  for (std::uint64_t smaller = std::max<std::uint64_t>(leaves / 1000, 100); smaller < leaves; smaller *= 10) {
    skynet(s, o.max_processors, smaller);
  }
}

}  // namespace presto::bench
