// instrument_overhead: what presto::instrument costs. Matrix multiplication (one thread per
// element) and skynet (a tree of threads, ten children per node), each run plain, with an
// InstrumentedThread prototype, and instrumented with tracing on, in the same process; prints
// the medians and the ratios instrumented / plain (Quartz, the paper, reported about 1.7x, the
// same as gprof). Writing the trace file is timed separately.
//
//   instrument_overhead [--quick] [--processors P] [--size N] [--leaves L] [--repeat R] [--mode M]
//
// --mode plain|instrumented|traced runs one mode only (no ratios): for instruction counts under
// valgrind --tool=callgrind on a loaded machine, where wall-clock ratios are noise.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <presto/instrument/instrument.hpp>
#include <presto/presto.hpp>

#include "harness.hpp"
#include "skynet.hpp"

namespace {

struct Options {
  std::size_t processors = 2;
  std::size_t size = 100;       // matmul: size x size threads
  std::uint64_t leaves = 100000;  // skynet
  int repeat = 5;
  std::string mode;  // empty: all three
};

struct Matrices {
  std::size_t n;
  std::vector<double> a, b, c;
  explicit Matrices(std::size_t size) : n(size), a(size * size), b(size * size), c(size * size) {
    for (std::size_t i = 0; i < n * n; ++i) {
      a[i] = static_cast<double>(i % 7) - 3;
      b[i] = static_cast<double>(i % 5) - 2;
    }
  }
  void multiply() {  // one thread per element, as presto-matmul's finest decomposition
    std::vector<presto::JoinHandle<void>> hs;
    hs.reserve(n * n);
    for (std::size_t e = 0; e < n * n; ++e) {
      hs.push_back(presto::fork([this, e] {
        const std::size_t i = e / n, j = e % n;
        double s = 0;
        for (std::size_t k = 0; k < n; ++k) s += a[i * n + k] * b[k * n + j];
        c[e] = s;
      }));
    }
    for (auto& h : hs) h.join();
  }
};

enum class Mode { plain, instrumented, traced };
const char* name(Mode m) { return m == Mode::plain ? "plain" : m == Mode::instrumented ? "instrumented" : "instrumented+trace"; }

struct Setup {
  std::shared_ptr<presto::instrument::Recorder> recorder;
  std::unique_ptr<presto::Runtime> runtime;
};

Setup make(Mode m, std::size_t processors) {
  Setup s;
  presto::RuntimeConfig rc{.processors = processors};
  if (m != Mode::plain) {
    s.recorder = std::make_shared<presto::instrument::Recorder>(presto::instrument::RecorderOptions{.trace = m == Mode::traced});
    rc.thread_prototype = std::make_unique<presto::instrument::InstrumentedThread>(s.recorder);
  }
  s.runtime = std::make_unique<presto::Runtime>(std::move(rc));
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    auto next = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", flag);
        std::exit(2);
      }
      return argv[++i];
    };
    if (std::strcmp(argv[i], "--quick") == 0) {
      o.size = 40;
      o.leaves = 10000;
      o.repeat = 3;
    } else if (std::strcmp(argv[i], "--processors") == 0) {
      o.processors = std::strtoul(next("--processors"), nullptr, 10);
    } else if (std::strcmp(argv[i], "--size") == 0) {
      o.size = std::strtoul(next("--size"), nullptr, 10);
    } else if (std::strcmp(argv[i], "--leaves") == 0) {
      o.leaves = std::strtoull(next("--leaves"), nullptr, 10);
    } else if (std::strcmp(argv[i], "--repeat") == 0) {
      o.repeat = std::atoi(next("--repeat"));
    } else if (std::strcmp(argv[i], "--mode") == 0) {
      o.mode = next("--mode");
    } else {
      std::printf("usage: %s [--quick] [--processors P] [--size N] [--leaves L] [--repeat R] [--mode plain|instrumented|traced]\n", argv[0]);
      return std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  std::printf("presto::instrument overhead: matmul %zux%zu (one thread per element), skynet %llu leaves, "
              "%zu processor(s), median of %d\n",
              o.size, o.size, static_cast<unsigned long long>(o.leaves), o.processors, o.repeat);

  std::vector<presto::bench::Result> mm, sky;
  std::vector<double> trace_write_ms;
  bool ok = true;
  for (Mode m : {Mode::plain, Mode::instrumented, Mode::traced}) {
    if (!o.mode.empty() && o.mode != (m == Mode::traced ? "traced" : name(m))) continue;
    Setup s = make(m, o.processors);
    Matrices mats(o.size);
    mm.push_back(presto::bench::measure("matmul", name(m), o.processors, o.size * o.size, o.repeat,
                                        [&] { s.runtime->run([&] { mats.multiply(); }); }));
    std::uint64_t sum = 0;
    sky.push_back(presto::bench::measure("skynet", name(m), o.processors, o.leaves, o.repeat,
                                         [&] { sum = s.runtime->run([&] { return presto::bench::skynet(0, o.leaves); }); }));
    ok = ok && sum == o.leaves * (o.leaves - 1) / 2;
    if (m == Mode::traced) {
      auto t0 = std::chrono::steady_clock::now();
      std::ofstream out("/dev/null");
      s.recorder->write_trace(out);
      trace_write_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  std::printf("skynet sums %s; writing the trace of all traced runs to /dev/null took %.1f ms\n",
              ok ? "correct" : "WRONG", trace_write_ms.empty() ? 0.0 : trace_write_ms.front());
  if (mm.size() < 3) return ok ? 0 : 1;  // --mode: one mode, no ratios
  presto::bench::print_ratios({
      {"matmul: instrumented / plain", mm[1], mm[0], 1.7, true},
      {"matmul: instrumented+trace / plain", mm[2], mm[0], 1.7, true},
      {"skynet: instrumented / plain", sky[1], sky[0], 1.7, true},
      {"skynet: instrumented+trace / plain", sky[2], sky[0], 1.7, true},
  });
  return ok ? 0 : 1;
}
