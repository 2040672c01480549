// Locks: the paper's Table III. Non-competitive (one thread, one processor): lock_test
// (presto::Lock), monitor_test (Monitor entry + exit), spin_test (Spinlock), atom_test
// (AtomicInt increment). Competitive (two threads on two processors, the same counts split
// between them): lock_test, monitor_test, atom_test. One operation = one acquire + release.
// Baselines: std::mutex, std::atomic, boost::fibers::mutex.

#include <atomic>
#include <boost/fiber/all.hpp>
#include <mutex>
#include <thread>

#include <presto/presto.hpp>

#include "suite.hpp"

namespace presto::bench {
namespace {

template <class Lockable>
void lock_loop(Lockable& l, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    std::lock_guard guard{l};
    asm volatile("" ::: "memory");
  }
}

void monitor_loop(presto::Monitor& m, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    presto::Monitor::Entry entry{m};
    asm volatile("" ::: "memory");
  }
}

template <class Atomic>
void atom_loop(Atomic& a, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) ++a;
}

// Runs `loop(n / p)` on p presto threads of a p-processor runtime.
template <class Loop>
void presto_threads(presto::Runtime& rt, std::size_t p, std::uint64_t n, Loop loop) {
  rt.run([&] {
    std::vector<presto::JoinHandle<void>> others;
    for (std::size_t i = 1; i < p; ++i) others.push_back(presto::fork([&] { loop(n / p); }));
    loop(n / p);
    for (auto& o : others) o.join();
  });
}

template <class Loop>
void os_threads(std::size_t p, std::uint64_t n, Loop loop) {
  Pinned pin{p};
  std::vector<std::thread> others;
  for (std::size_t i = 1; i < p; ++i) others.emplace_back([&] { loop(n / p); });
  loop(n / p);
  for (auto& o : others) o.join();
}

void table_iii(Suite& s, std::size_t p, std::uint64_t n) {
  presto::Runtime rt{{.processors = p}};
  s.measure("lock_test", "presto", p, n, [&] {
    presto::Lock l{"lock_test"};
    presto_threads(rt, p, n, [&](std::uint64_t k) { lock_loop(l, k); });
  });
  s.measure("monitor_test", "presto", p, n, [&] {
    presto::Monitor m{"monitor_test"};
    presto_threads(rt, p, n, [&](std::uint64_t k) { monitor_loop(m, k); });
  });
  if (p == 1) {
    s.measure("spin_test", "presto", p, n, [&] {
      presto::Spinlock l;
      presto_threads(rt, p, n, [&](std::uint64_t k) { lock_loop(l, k); });
    });
  }
  s.measure("atom_test", "presto", p, n, [&] {
    presto::AtomicInt a{0, "atom_test"};
    presto_threads(rt, p, n, [&](std::uint64_t k) { atom_loop(a, k); });
  });
  s.measure("lock_test", "std", p, n, [&] {
    std::mutex m;
    os_threads(p, n, [&](std::uint64_t k) { lock_loop(m, k); });
  });
  s.measure("atom_test", "std", p, n, [&] {
    std::atomic<std::int64_t> a{0};
    os_threads(p, n, [&](std::uint64_t k) { atom_loop(a, k); });
  });
  s.measure("lock_test", "boost.fiber", p, n, [&] {
    with_fibers(p, [&] {
      boost::fibers::mutex m;
      std::vector<boost::fibers::fiber> others;
      for (std::size_t i = 1; i < p; ++i) others.emplace_back([&] { lock_loop(m, n / p); });
      lock_loop(m, n / p);
      for (auto& o : others) o.join();
    });
  });
}

}  // namespace

void run_locks(Suite& s) {
  const Options& o = s.options();
  table_iii(s, 1, o.scaled(50'000'000, 2'000'000));
  if (o.max_processors >= 2) table_iii(s, 2, o.scaled(5'000'000, 500'000));
}

}  // namespace presto::bench
