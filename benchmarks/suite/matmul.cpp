// Matrix multiplication, the paper's Figures 2 and 3, with the kernels of matmul_kernel.hpp
// (the paper's dot product, and the tight kernel a user tuning each case writes). A
// computation split over T threads gives each thread a contiguous run of about n*n/T elements
// of C. The tight kernel makes both a 2-thread and a 40,000-thread product several times faster
// than the dot kernel, so the cost of the threads themselves shows more: Figure 3's ratio is
// measured with both.
//   Figure 2: one thread per processor, 1..P processors (speed-up); the "Dynix" line of the
//             paper is std::thread doing the same split.
//   Figure 3: 200 x 200 on P processors as T grows from 1 to 40,000 (one thread per
//             element): the tail-effect hump at small T, and what many threads cost.
// One operation = one whole multiplication.

#include <algorithm>
#include <atomic>
#include <boost/fiber/all.hpp>
#if PRESTO_BENCH_ONETBB
#include <oneapi/tbb/task_group.h>
#endif
#include <stdexcept>
#include <thread>
#include <vector>

#include <presto/presto.hpp>

#include "matmul_kernel.hpp"
#include "suite.hpp"

namespace presto::bench {
namespace {

void presto_split(presto::Runtime& rt, Matmul& m, std::size_t parts) {
  rt.run([&] {
    std::vector<presto::JoinHandle<void>> threads;
    threads.reserve(parts);
    for (std::size_t t = 0; t < parts; ++t) threads.push_back(presto::fork([&m, t, parts] { m.part(t, parts); }));
    for (auto& t : threads) t.join();
  });
}

// PRESTO's product in `parts` threads on rt, checked: a body that returns its time.
Timed presto_product(presto::Runtime& rt, Matmul& m, std::size_t parts) {
  return [&rt, &m, parts] { return m.checked([&] { presto_split(rt, m, parts); }); };
}

void std_split(Matmul& m, std::size_t parts) {
  std::vector<std::thread> threads;
  threads.reserve(parts);
  for (std::size_t t = 0; t < parts; ++t) threads.emplace_back([&m, t, parts] { m.part(t, parts); });
  for (auto& t : threads) t.join();
}

void fiber_split(std::size_t p, Matmul& m, std::size_t parts) {
  with_fibers(p, [&] {
    std::vector<boost::fibers::fiber> fibers;
    fibers.reserve(parts);
    for (std::size_t t = 0; t < parts; ++t) fibers.emplace_back([&m, t, parts] { m.part(t, parts); });
    for (auto& f : fibers) f.join();
  });
}

#if PRESTO_BENCH_ONETBB
// oneTBB's way to the same split: a task per part in one task_group, spawned by one thread.
void tbb_split(OneTbb& tbb, Matmul& m, std::size_t parts) {
  tbb.run([&m, parts] {
    tbb::task_group g;
    for (std::size_t t = 0; t < parts; ++t) g.run([&m, t, parts] { m.part(t, parts); });
    g.wait();
  });
}
#endif

void figure2(Suite& s, std::size_t n) {
  Matmul m{n};
  for (std::size_t p : s.options().curve()) {
    presto::Runtime rt{{.processors = p}};
    s.measure_timed("matmul_speedup", "presto", p, 1, presto_product(rt, m, p), n);
    s.measure_timed("matmul_speedup", "std", p, 1, [&] {
      Pinned pin{p};
      return m.checked([&] { std_split(m, p); });
    }, n);
  }
}

void figure3(Suite& s, std::size_t p, const std::vector<std::size_t>& counts) {
  Matmul m{200};
  presto::Runtime rt{{.processors = p}};
  // The end points, whose ratio is the target, in turns (harness.hpp, measure_alternating);
  // then the rest of the curve.
  s.measure_alternating({{"matmul200", "presto", p, 1, presto_product(rt, m, p), p},
                         {"matmul200", "presto", p, 1, presto_product(rt, m, 40'000), 40'000}});
  for (std::size_t t : counts) {
    if (t != p && t != 40'000) s.measure_timed("matmul200", "presto", p, 1, presto_product(rt, m, t), t);
  }
  for (std::size_t t : counts) {
    s.measure_timed("matmul200", "boost.fiber", p, 1, [&] { return m.checked([&] { fiber_split(p, m, t); }); }, t);
  }
#if PRESTO_BENCH_ONETBB
  {
    OneTbb tbb{p};
    for (std::size_t t : counts) {
      s.measure_timed("matmul200", "onetbb", p, 1, [&] { return m.checked([&] { tbb_split(tbb, m, t); }); }, t);
    }
  }
#endif
  for (std::size_t t : counts) {
    if (t > 4'000) break;  // beyond, an OS thread per element is only a measure of the kernel
    s.measure_timed("matmul200", "std", p, 1, [&] {
      Pinned pin{p};
      return m.checked([&] { std_split(m, t); });
    }, t);
  }
}

// The tight kernel alone, element by element, on P OS threads pinned one to a CPU: what 40,000
// free threads would cost. The threads are started once and kept, parked between products, so
// that a product's time is the kernel's and one wake-up, as a PRESTO product's is (its run wakes
// its parked processors). Threads started afresh for each product put their creation and first
// placement in the time. Three runs of 31 products each, fresh threads against kept ones
// (2026-12-05, the 2-core AMD EPYC VM): the least 889-891 against 856-859 us, the median
// 922-1,218 against 864-1,166 us, the most 1.4-4.0 against 1.0-1.3 ms.
class KernelAlone {
 public:
  KernelAlone(Matmul& m, std::size_t p) : m_(m) {
    Pinned pin{p};  // the workers pin themselves among these CPUs
    for (std::size_t q = 0; q < p; ++q) {
      workers_.emplace_back([this, q, p] {
        Pinned::only(q);
        for (unsigned seen = 0;;) {
          go_.wait(seen, std::memory_order_acquire);
          seen = go_.load(std::memory_order_acquire);
          if (stop_.load(std::memory_order_relaxed)) return;
          for (std::size_t e = m_.elements() * q / p, last = m_.elements() * (q + 1) / p; e < last; ++e) m_.compute(e, e + 1);
          if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) left_.notify_one();
        }
      });
    }
  }
  ~KernelAlone() {
    stop_.store(true, std::memory_order_relaxed);
    go_.fetch_add(1, std::memory_order_release);
    go_.notify_all();
    for (auto& w : workers_) w.join();
  }
  KernelAlone(const KernelAlone&) = delete;
  KernelAlone& operator=(const KernelAlone&) = delete;

  // One checked product; its nanoseconds.
  double operator()() {
    return m_.checked([this] {
      left_.store(static_cast<unsigned>(workers_.size()), std::memory_order_relaxed);
      go_.fetch_add(1, std::memory_order_release);
      go_.notify_all();
      for (unsigned left; (left = left_.load(std::memory_order_acquire)) != 0;) left_.wait(left, std::memory_order_acquire);
    });
  }

 private:
  Matmul& m_;
  std::atomic<unsigned> go_{0};  // a product's generation: the workers start when it moves
  std::atomic<unsigned> left_{0};  // workers still computing the current product
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;  // last: they start once the rest is there
};

// Figure 3's end points with the tight kernel: P threads and 40,000 (one per element), beside
// the kernel alone (KernelAlone). The three are measured in turns: their ratios are targets.
void figure3_tight(Suite& s, std::size_t p) {
  Matmul m{200, Matmul::Kernel::tight};
  presto::Runtime rt{{.processors = p}};
  KernelAlone alone{m, p};
  auto kernel_alone = [&alone] { return alone(); };
  s.measure_alternating({{"matmul200_tight", "presto", p, 1, presto_product(rt, m, p), p},
                         {"matmul200_tight", "presto", p, 1, presto_product(rt, m, 40'000), 40'000},
                         {"matmul200_tight", "kernel-per-element", p, 1, kernel_alone, 40'000}});
#if PRESTO_BENCH_ONETBB
  {
    OneTbb tbb{p};
    for (std::size_t t : {p, std::size_t{40'000}}) {
      s.measure_timed("matmul200_tight", "onetbb", p, 1, [&] { return m.checked([&] { tbb_split(tbb, m, t); }); }, t);
    }
  }
#endif
}

}  // namespace

// The thread counts of Figure 3 (shared with the Go peer, which takes the same list).
std::vector<std::size_t> figure3_counts(const Options& o) {
  std::vector<std::size_t> counts;
  if (o.quick) {
    counts = {1, 25, 1'000, 40'000};
  } else {
    counts = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 20, 25, 30, 40, 50, 100, 200,
              400, 1'000, 2'000, 4'000, 10'000, 20'000, 40'000};
  }
  for (std::size_t p : o.curve()) {
    if (std::find(counts.begin(), counts.end(), p) == counts.end()) counts.push_back(p);
  }
  std::sort(counts.begin(), counts.end());
  return counts;
}

void run_matmul(Suite& s) {
  const Options& o = s.options();
  figure2(s, o.quick ? 200 : 600);
  auto counts = figure3_counts(o);
  for (std::size_t p : o.curve()) figure3(s, p, counts);
  figure3_tight(s, o.max_processors);
}

}  // namespace presto::bench
