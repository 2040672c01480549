// figure3_split: where Figure 3's time goes, measured rather than read from a profile.
// Runs Figure 3's product (200 x 200, the paper's kernel: each element a dot product with B
// transposed, as figure3_floor computes it) with PRESTO threads on P processors, split into P
// threads and into 40,000 (one per element), and times every element's kernel on the
// processor that runs it. For each processor it prints the elements it ran, the time they
// took in the kernel, and the time between them: the runtime's (forks, joins, steals,
// dispatches) and any wait for work. So Figure 3's ratio falls into its two halves: does the
// kernel itself run slower element by element, or is it what lies between the elements?
// (A sampling profile gives shares of samples, not times: a share becomes a time only
// against a time from the same run, and a cold line's cost lands on whichever instruction
// waits for it.)
//
// The timing adds two reads of the clock an element (the time-stamp counter on x86-64,
// steady_clock elsewhere), so every row also gives the same product's time with no timing
// ("untimed"): the difference is what the probe itself costs.
//
// The two splits' products are taken in turns. Prints, per thread count, medians over the
// products of each figure, then the kernel and the time outside it summed over the
// processors, 40,000 threads against P; each thread count's rows are also a JSON line that
// benchmarks/run.py reads.
//
// Usage: figure3_split [--quick] [--processors P]   (--quick: 5 products a point; default 31, P = 2)

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <presto/presto.hpp>

#include "../support/harness.hpp"
#include "figure3_product.hpp"

namespace {

using Product = presto::bench::Figure3Product;

constexpr std::size_t kElements = Product::kElements;

// The clock the elements are timed with, in ticks; ticks_per_ns converts them.
class Clock {
 public:
  static std::uint64_t now() noexcept {
#if defined(__x86_64__)
    return __rdtsc();
#else
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
  }
  // Calibrates the ticks against steady_clock over `seconds`.
  static double ticks_per_ns(double seconds) {
#if defined(__x86_64__)
    const auto t0 = std::chrono::steady_clock::now();
    const std::uint64_t c0 = now();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
    }
    const auto t1 = std::chrono::steady_clock::now();
    const std::uint64_t c1 = now();
    return static_cast<double>(c1 - c0) / static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
#else
    (void)seconds;
    return static_cast<double>(std::chrono::steady_clock::period::den) / std::chrono::steady_clock::period::num / 1e9;
#endif
  }
};

// Each element's processor and the clock before and after its kernel, for one product.
struct Timeline {
  std::vector<std::uint16_t> processor = std::vector<std::uint16_t>(kElements);
  std::vector<std::uint64_t> start = std::vector<std::uint64_t>(kElements);
  std::vector<std::uint64_t> end = std::vector<std::uint64_t>(kElements);
};

// One processor's share of one product, in ticks.
struct Share {
  std::size_t elements = 0;
  std::uint64_t kernel = 0;   // inside the elements' kernels
  std::uint64_t between = 0;  // from its first element's start to its last's end, less the kernel
  std::uint64_t before = 0;   // from the product's start to its first element
  std::uint64_t after = 0;    // from its last element's end to the product's end
};

std::vector<Share> shares(const Timeline& t, std::size_t processors, std::uint64_t from, std::uint64_t to) {
  std::vector<Share> s(processors);
  std::vector<std::uint64_t> first(processors, UINT64_MAX), last(processors, 0);
  for (std::size_t e = 0; e < kElements; ++e) {
    const std::size_t q = t.processor[e];
    s[q].elements += 1;
    s[q].kernel += t.end[e] - t.start[e];
    first[q] = std::min(first[q], t.start[e]);
    last[q] = std::max(last[q], t.end[e]);
  }
  for (std::size_t q = 0; q < processors; ++q) {
    if (s[q].elements == 0) {
      s[q].before = to - from;
      continue;
    }
    s[q].between = last[q] - first[q] - s[q].kernel;
    s[q].before = first[q] - from;
    s[q].after = to - last[q];
  }
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The product in `threads` PRESTO threads, each computing a contiguous run of elements, as
// presto-matmul and presto_bench's matmul200 split it; `timeline` null: untimed.
void multiply(presto::Runtime& rt, Product& product, std::size_t threads, Timeline* timeline) {
  rt.run([&] {
    std::vector<presto::JoinHandle<void>> workers;
    workers.reserve(threads);
    for (std::size_t t = 0; t < threads; ++t) {
      const std::size_t first = kElements * t / threads, last = kElements * (t + 1) / threads;
      workers.push_back(presto::fork([&product, timeline, first, last] {
        if (timeline == nullptr) {
          for (std::size_t e = first; e < last; ++e) product.element(e);
          return;
        }
        for (std::size_t e = first; e < last; ++e) {
          const std::uint64_t start = Clock::now();
          product.element(e);
          const std::uint64_t end = Clock::now();
          timeline->processor[e] = static_cast<std::uint16_t>(presto::Processor::current()->index());
          timeline->start[e] = start;
          timeline->end[e] = end;
        }
      }));
    }
    for (auto& w : workers) w.join();
  });
}

// Medians over the products of one thread count: wall times and each processor's share, in ms.
struct Point {
  std::size_t threads = 0;
  double wall = 0, untimed = 0;
  std::vector<double> elements, kernel, between, before, after;
  double total_kernel() const {
    double s = 0;
    for (double k : kernel) s += k;
    return s;
  }
  // Processor time outside the kernels: between the elements, and before and after them.
  double total_outside() const {
    double s = 0;
    for (std::size_t q = 0; q < kernel.size(); ++q) s += before[q] + between[q] + after[q];
    return s;
  }
};

// One split's products so far: their wall times (timed and untimed) and each processor's share.
struct Samples {
  std::size_t threads = 0;
  std::vector<double> wall, untimed;
  std::vector<std::vector<Share>> shares;
};

// Two more products of `s`'s split, one untimed and one timed, each checked, after one not
// kept: the products of the other split, taken in turns with these, leave the caches as they
// need them (a 40,000-thread product streams 5 MB of records through them).
void sample(presto::Runtime& rt, Product& product, const std::vector<double>& expected, Timeline& timeline,
            Samples& s) {
  auto check = [&] {
    if (product.c() != expected) throw std::runtime_error("figure3_split: wrong product");
  };
  multiply(rt, product, s.threads, nullptr);
  product.clear();
  auto t0 = std::chrono::steady_clock::now();
  multiply(rt, product, s.threads, nullptr);
  s.untimed.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  check();

  product.clear();
  t0 = std::chrono::steady_clock::now();
  const std::uint64_t from = Clock::now();
  multiply(rt, product, s.threads, &timeline);
  const std::uint64_t to = Clock::now();
  s.wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  check();
  s.shares.push_back(shares(timeline, rt.processors(), from, to));
}

Point summarize(const Samples& s, std::size_t p, double ticks_per_ms) {
  Point point;
  point.threads = s.threads;
  point.wall = median(s.wall);
  point.untimed = median(s.untimed);
  for (std::size_t q = 0; q < p; ++q) {
    std::vector<double> n, k, b, bf, af;
    for (const auto& sh : s.shares) {
      n.push_back(static_cast<double>(sh[q].elements));
      k.push_back(static_cast<double>(sh[q].kernel) / ticks_per_ms);
      b.push_back(static_cast<double>(sh[q].between) / ticks_per_ms);
      bf.push_back(static_cast<double>(sh[q].before) / ticks_per_ms);
      af.push_back(static_cast<double>(sh[q].after) / ticks_per_ms);
    }
    point.elements.push_back(median(n));
    point.kernel.push_back(median(k));
    point.between.push_back(median(b));
    point.before.push_back(median(bf));
    point.after.push_back(median(af));
  }
  return point;
}

void print(const Point& pt) {
  for (std::size_t q = 0; q < pt.kernel.size(); ++q) {
    const double per_element = pt.elements[q] > 1 ? pt.between[q] * 1e6 / (pt.elements[q] - 1) : 0;
    std::printf("%8zu %9.2f %9.2f %5zu %9.0f %9.3f %9.3f %10.1f %9.3f %9.3f\n", pt.threads, pt.wall, pt.untimed, q,
                pt.elements[q], pt.kernel[q], pt.between[q], per_element, pt.before[q], pt.after[q]);
  }
  auto list = [](const std::vector<double>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
    return s + "]";
  };
  std::printf("{\"split\":%zu,\"processors\":%zu,\"wall_ms\":%.4f,\"untimed_ms\":%.4f,\"elements\":%s,\"kernel_ms\":%s,"
              "\"between_ms\":%s,\"before_ms\":%s,\"after_ms\":%s}\n",
              pt.threads, pt.kernel.size(), pt.wall, pt.untimed, list(pt.elements).c_str(), list(pt.kernel).c_str(),
              list(pt.between).c_str(), list(pt.before).c_str(), list(pt.after).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  int products = 31;
  std::size_t processors = 2;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      products = 5;
    } else if (std::strcmp(argv[i], "--processors") == 0 && i + 1 < argc) {
      processors = std::strtoul(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--processors P]\n", argv[0]);
      return 2;
    }
  }
  if (processors == 0 || processors > 64) {
    std::fprintf(stderr, "figure3_split: --processors must be 1 to 64\n");
    return 2;
  }
  const double ticks_per_ms = Clock::ticks_per_ns(0.05) * 1e6;
  Product product;
  for (std::size_t e = 0; e < kElements; ++e) product.element(e);
  const std::vector<double> expected = product.c();

  presto::Runtime rt{{.processors = processors}};
  std::printf("Figure 3's product, 200 x 200, paper's kernel, on %zu processors: medians of %d products\n",
              processors, products);
  std::printf("(ms; between: from a processor's first element to its last, less their kernels)\n");
  std::printf("%8s %9s %9s %5s %9s %9s %9s %10s %9s %9s\n", "threads", "wall", "untimed", "proc", "elements",
              "kernel", "between", "ns/elem", "before", "after");
  // The two splits in turns, product by product: measured one after the other, each would
  // see its own stretch of the host's time (benchmarks/support/harness.hpp, measure_alternating).
  presto::bench::core_round_trip("core_round_trip_before", 3);  // the host's: the ratio moves with it
  Samples few_samples, many_samples;
  few_samples.threads = processors;
  many_samples.threads = kElements;
  Timeline timeline;
  for (int i = 0; i < products; ++i) {
    sample(rt, product, expected, timeline, few_samples);
    sample(rt, product, expected, timeline, many_samples);
  }
  presto::bench::core_round_trip("core_round_trip_after", 3);
  const Point few = summarize(few_samples, processors, ticks_per_ms);
  print(few);
  const Point many = summarize(many_samples, processors, ticks_per_ms);
  print(many);
  std::printf("40,000 threads against %zu: untimed %.2fx; kernel, all processors, %.2f against %.2f ms (%.2fx); "
              "outside the kernel (before, between and after) %.2f against %.2f ms: %.0f ns of processor time an "
              "element more\n",
              processors, many.untimed / few.untimed, many.total_kernel(), few.total_kernel(),
              many.total_kernel() / few.total_kernel(), many.total_outside(), few.total_outside(),
              (many.total_outside() - few.total_outside()) * 1e6 / kElements);
  return 0;
}
