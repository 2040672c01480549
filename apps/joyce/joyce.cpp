// presto-joyce: Brinch Hansen and Rangachari's Joyce benchmarks (1988), on presto::channels.
//
// BM: 200 agents, 100 independent sender/receiver pairs, each pair on its own rendezvous
// channel. A sender runs m cycles of COMPUTE(n); c!data(n); a receiver m cycles of c?data(n);
// COMPUTE(n), where COMPUTE(n) is an empty counting loop of n iterations. BM1, BM2 and BM3
// differ in n. The scaled benchmark: 40 pairs, each moving a fixed number of words in blocks
// of n(p) = a/c + p words with a fixed computation per word. The polling benchmarks: BM1 whose
// receiver polls {data, eos}, by waiting on both or, as Joyce's kernel did, by retrying.
//
// For each benchmark it measures T(p) for p = 1..P processors, fits T(p) = a/p + b by least
// squares (over p no larger than the machine's cores), prints the serial fraction f = b/(a+b)
// and the speed-up beside Amdahl's p/(1+(p-1)f) and the paper's Table 1 (f = 0.029, 0.014,
// 0.001). Every message is checked: receivers verify what they got.
//
// Joyce was interpreted on a 1988 Encore Multimax: communication cost 98 us and the loop
// bookkeeping 80 us per cycle, so native code cannot use the paper's n literally. By default
// n is *calibrated*: COMPUTE takes the same share of a cycle, relative to this runtime's own
// measured communication time, as it did in Joyce (work/communication = (80 + 47n)/98.2, i.e.
// 0.82, 2.73 and 50.6 for BM1-3). --literal uses the paper's n = 0, 4, 104 instead.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <presto/channels/channels.hpp>
#include <presto/presto.hpp>

#include "command_line.hpp"

namespace {

using presto::channels::BufferedChannel;
using presto::channels::Channel;
using Seconds = std::chrono::duration<double>;

struct Options {
  std::size_t processors = 0;      // 0: the machine's hardware threads
  std::size_t oversubscribe = 0;   // also run p up to this (> cores), reported, not fitted
  double seconds = 0.4;            // target T(1) per benchmark run
  int repeat = 3;
  bool literal = false;
  std::vector<std::string> benchmarks{"bm1", "bm2", "bm3", "scaled", "poll", "requeue"};
};

constexpr const char* usage =
      "usage: %s [--processors P] [--oversubscribe Q] [--seconds S] [--repeat R] [--literal]\n"
      "          [--benchmarks bm1,bm2,bm3,scaled,poll,requeue] [--quick]\n"
      "Runs Joyce's benchmarks (Brinch Hansen & Rangachari 1988) on p = 1..P processors (default:\n"
      "the hardware threads), and also on P+1..Q if Q > P (more processors than cores: printed,\n"
      "not fitted). Each run is sized to take about S seconds on one processor (default 0.4) and\n"
      "is repeated R times (default 3; the best is kept). Fits T(p) = a/p + b, prints the serial\n"
      "fraction f = b/(a+b) and compares with the paper's Table 1. --literal uses the paper's loop\n"
      "counts n instead of counts calibrated to this machine's communication cost. --quick: tiny\n"
      "runs (a smoke test). Every message is checked.\n";

bool parse(int argc, char** argv, Options& o) {
  presto::apps::CommandLine cl{usage};
  cl.processors(o.processors).option("--oversubscribe", o.oversubscribe);
  cl.option("--seconds", o.seconds).option("--repeat", o.repeat).flag("--literal", o.literal);
  cl.option("--benchmarks", o.benchmarks);
  cl.flag("--quick", [&o] {
    o.seconds = 0.02;
    o.repeat = 1;
  });
  if (!cl.parse(argc, argv)) return false;
  if (o.seconds <= 0 || o.repeat <= 0) throw std::invalid_argument("--seconds and --repeat must be positive");
  return true;
}

// Joyce's COMPUTE: k := 1; while k <= n do k := k + 1. The empty asm keeps the loop a loop.
void compute(long n) {
  for (long k = 1; k <= n; ++k) asm volatile("" : "+r"(k));
}

// What a run of one benchmark needs to know, and what its receivers found.
struct Work {
  long pairs = 100;
  long messages = 0;  // per agent (m); for the scaled benchmark, blocks per agent
  long n = 0;         // COMPUTE iterations per message; scaled: per word
  long words = 0;     // scaled: words per block
  // How receivers wait: plain receive, poll {data, eos}, or Joyce 1988's requeue polling
  // (try_poll, yield, retry).
  enum class Receive { plain, poll, requeue } receive = Receive::plain;
};

struct Outcome {
  Seconds time{};
  bool correct = true;
};

// One run of BM (or one of its polling variants) on the calling runtime's processors.
Outcome run_bm(const Work& w) {
  std::vector<std::unique_ptr<Channel<long>>> data, eos;
  std::vector<long> received(static_cast<std::size_t>(w.pairs), 0);
  auto start = std::chrono::steady_clock::now();
  std::vector<presto::JoinHandle<void>> agents;
  for (long i = 0; i < w.pairs; ++i) {
    data.push_back(std::make_unique<Channel<long>>("data"));  // +c
    eos.push_back(std::make_unique<Channel<long>>("eos"));
    Channel<long>& c = *data.back();
    Channel<long>& end = *eos.back();
    long& sum = received[static_cast<std::size_t>(i)];
    agents.push_back(presto::fork([&c, &end, &w] {  // SENDER(c, m, n)
      for (long k = 0; k < w.messages; ++k) {
        compute(w.n);
        c.send(w.n);
      }
      if (w.receive != Work::Receive::plain) end.send(0);
    }));
    agents.push_back(presto::fork([&c, &end, &w, &sum] {  // RECEIVER(c, m)
      if (w.receive == Work::Receive::plain) {
        for (long k = 0; k < w.messages; ++k) {
          long n = *c.recv();
          sum += n + 1;
          compute(n);
        }
        return;
      }
      using presto::channels::on_recv;
      for (bool more = true; more;) {
        auto data = [&](std::optional<long> n) {
          sum += *n + 1;
          compute(*n);
        };
        auto eos = [&](std::optional<long>) { more = false; };
        if (w.receive == Work::Receive::poll) {
          presto::channels::poll(on_recv(c, data), on_recv(end, eos));
        } else {
          while (!presto::channels::try_poll(on_recv(c, data), on_recv(end, eos))) presto::this_thread::yield();
        }
      }
    }));
  }
  for (auto& a : agents) a.join();
  Outcome out;
  out.time = std::chrono::steady_clock::now() - start;
  for (long s : received) out.correct = out.correct && s == w.messages * (w.n + 1);
  return out;
}

// One run of the scaled benchmark: blocks of w.words words, w.n iterations of work per word.
Outcome run_scaled(const Work& w) {
  std::vector<std::unique_ptr<Channel<std::vector<int>>>> channels;
  std::vector<long> received(static_cast<std::size_t>(w.pairs), 0);
  auto start = std::chrono::steady_clock::now();
  std::vector<presto::JoinHandle<void>> agents;
  for (long i = 0; i < w.pairs; ++i) {
    channels.push_back(std::make_unique<Channel<std::vector<int>>>("blocks"));
    auto& c = *channels.back();
    long& sum = received[static_cast<std::size_t>(i)];
    agents.push_back(presto::fork([&c, &w] {
      for (long b = 0; b < w.messages; ++b) {
        std::vector<int> x(static_cast<std::size_t>(w.words));
        for (long k = 0; k < w.words; ++k) {  // x[k] := y
          x[static_cast<std::size_t>(k)] = static_cast<int>(k);
          compute(w.n);
        }
        c.send(std::move(x));
      }
    }));
    agents.push_back(presto::fork([&c, &w, &sum] {
      for (long b = 0; b < w.messages; ++b) {
        std::vector<int> x = *c.recv();
        for (int y : x) {  // y := x[k]
          sum += y;
          compute(w.n);
        }
      }
    }));
  }
  for (auto& a : agents) a.join();
  Outcome out;
  out.time = std::chrono::steady_clock::now() - start;
  for (long s : received) out.correct = out.correct && s == w.messages * (w.words * (w.words - 1) / 2);
  return out;
}

// The best of `repeat` runs on a runtime of p processors.
Outcome best_of(std::size_t p, int repeat, const std::function<Outcome()>& once) {
  presto::Runtime rt{{.processors = p}};
  Outcome best;
  best.time = Seconds{1e300};
  bool correct = true;
  for (int r = 0; r < repeat; ++r) {
    Outcome o = rt.run(once);
    correct = correct && o.correct;
    best.time = std::min(best.time, o.time);
  }
  best.correct = correct;
  return best;
}

// Least squares of T = a x + b with x = 1/p.
struct Fit {
  double a = 0, b = 0;
  double f() const { return b / (a + b); }
};
Fit fit(const std::vector<std::pair<std::size_t, double>>& points) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0, k = static_cast<double>(points.size());
  for (auto [p, t] : points) {
    double x = 1.0 / static_cast<double>(p);
    sx += x, sy += t, sxx += x * x, sxy += x * t;
  }
  double den = k * sxx - sx * sx;
  if (points.size() < 2 || den == 0) return {sy / k, 0};
  double a = (k * sxy - sx * sy) / den;
  return {a, (sy - a * sx) / k};
}

double amdahl(double p, double f) { return p / (1 + (p - 1) * f); }

struct Sweep {
  std::string name;
  Fit model;
  bool correct = true;
};

// Runs one benchmark over p = 1..max_p, prints its table, fits over p <= cores.
Sweep sweep(const std::string& name, const std::string& detail, std::size_t cores, std::size_t max_p, int repeat,
            double paper_f, const std::function<Outcome()>& once) {
  std::printf("\n== %s: %s\n", name.c_str(), detail.c_str());
  std::vector<std::pair<std::size_t, double>> fitted;
  std::vector<std::pair<std::size_t, double>> all;
  Sweep s;
  s.name = name;
  for (std::size_t p = 1; p <= max_p; ++p) {
    Outcome o = best_of(p, repeat, once);
    s.correct = s.correct && o.correct;
    all.emplace_back(p, o.time.count());
    if (p <= cores) fitted.emplace_back(p, o.time.count());
    std::printf("{\"benchmark\":\"%s\",\"processors\":%zu,\"seconds\":%.6f,\"checked\":%s,\"oversubscribed\":%s}\n",
                name.c_str(), p, o.time.count(), o.correct ? "true" : "false", p > cores ? "true" : "false");
  }
  s.model = fit(fitted);
  const double t1 = all.front().second;
  std::printf("  fit over p = 1..%zu: T(p) = %.4f/p + %.4f s   f = b/(a+b) = %.3f   (paper: f = %s)\n",
              std::min(cores, max_p), s.model.a, s.model.b, s.model.f(),
              paper_f < 0 ? "linear speed-up" : std::to_string(paper_f).substr(0, 5).c_str());
  std::printf("  %3s %10s %10s %10s %14s %14s\n", "p", "T(p) s", "fit s", "S(p)", "Amdahl(f)", "paper S(p)");
  for (auto [p, t] : all) {
    const double dp = static_cast<double>(p);
    const double paper_s = paper_f < 0 ? dp : amdahl(dp, paper_f);
    std::printf("  %3zu %10.4f %10.4f %10.2f %14.2f %14.2f%s\n", p, t, s.model.a / dp + s.model.b, t1 / t,
                amdahl(dp, s.model.f()), paper_s, p > cores ? "   (more processors than cores: not fitted)" : "");
  }
  std::printf("  check: every message received and verified: %s\n", s.correct ? "yes" : "NO");
  return s;
}

}  // namespace

int main(int argc, char** argv) try {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t max_fit = o.processors != 0 ? o.processors : cores;
  const std::size_t max_p = std::max(max_fit, o.oversubscribe);
  const std::size_t fit_limit = std::min(max_fit, cores);
  auto wants = [&](const char* b) { return std::find(o.benchmarks.begin(), o.benchmarks.end(), b) != o.benchmarks.end(); };

  // Calibration on one processor: this runtime's cycle time with no computation (one
  // rendezvous per agent per cycle), and the cost of one COMPUTE iteration.
  Work probe{.messages = 2000, .n = 0};
  const Outcome comm = best_of(1, 3, [&] { return run_bm(probe); });
  const double t_comm = comm.time.count() / (2.0 * static_cast<double>(probe.pairs * probe.messages));
  auto loop_start = std::chrono::steady_clock::now();
  const long probe_iterations = 50'000'000;
  compute(probe_iterations);
  const double t_iter = Seconds(std::chrono::steady_clock::now() - loop_start).count() / probe_iterations;
  std::printf("presto-joyce: %zu hardware thread(s); p = 1..%zu%s\n", cores, max_p,
              max_p > cores ? " (p beyond the cores is shown, not fitted)" : "");
  std::printf("calibration (1 processor): agent cycle with no work %.1f ns (one rendezvous per agent); "
              "COMPUTE %.3f ns/iteration\n",
              t_comm * 1e9, t_iter * 1e9);
  // The control: how much parallelism the machine gives right now to p OS threads that only
  // compute. No benchmark can beat it; on a shared machine it is well below p.
  std::printf("control (p OS threads, COMPUTE only, no communication): S(p) =");
  const long control_iterations = std::lround(o.seconds / 2 / t_iter);
  double control_t1 = 0;
  for (std::size_t p = 1; p <= max_p; ++p) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> spinners;
    for (std::size_t i = 0; i < p; ++i) spinners.emplace_back([&] { compute(control_iterations / static_cast<long>(p)); });
    for (auto& t : spinners) t.join();
    const double t = Seconds(std::chrono::steady_clock::now() - t0).count();
    if (p == 1) control_t1 = t;
    std::printf(" %.2f (p=%zu)", control_t1 / t, p);
  }
  std::printf("\n");

  // n for BM1..3: the paper's, or the same work/communication ratio as in Joyce.
  const long paper_n[3] = {0, 4, 104};
  const double paper_f[3] = {0.029, 0.014, 0.001};
  auto calibrated_n = [&](long joyce_n) {
    const double ratio = (80.0 + 47.0 * static_cast<double>(joyce_n)) / 98.2;
    return std::lround(ratio * t_comm / t_iter);
  };
  std::vector<Sweep> results;
  const long q = 200;
  for (int k = 0; k < 3; ++k) {
    std::string name = "bm" + std::to_string(k + 1);
    if (!wants(name.c_str())) continue;
    Work w{.n = o.literal ? paper_n[k] : calibrated_n(paper_n[k])};
    const double cycle = t_comm + static_cast<double>(w.n) * t_iter;
    w.messages = std::max(10L, std::lround(o.seconds / (static_cast<double>(q) * cycle)));
    char detail[200];
    std::snprintf(detail, sizeof detail, "q = 200 agents, m = %ld messages/agent, n = %ld iterations/message (%s; paper n = %ld)",
                  w.messages, w.n, o.literal ? "literal" : "calibrated", paper_n[k]);
    std::string upper = "BM" + std::to_string(k + 1);
    results.push_back(sweep(upper, detail, fit_limit, max_p, o.repeat, paper_f[k], [w] { return run_bm(w); }));
  }

  for (auto receive : {Work::Receive::poll, Work::Receive::requeue}) {
    const bool requeue = receive == Work::Receive::requeue;
    if (!wants(requeue ? "requeue" : "poll")) continue;
    Work w{.n = o.literal ? 0 : calibrated_n(0), .receive = receive};
    w.messages = std::max(10L, std::lround(o.seconds / (static_cast<double>(q) * (t_comm + static_cast<double>(w.n) * t_iter))));
    char detail[240];
    std::snprintf(detail, sizeof detail, "BM1 whose receivers poll {data, eos} (paper Fig. 6) %s, m = %ld, n = %ld",
                  requeue ? "by requeueing (Joyce 1988: try_poll, yield, retry)" : "by waiting on both (poll)",
                  w.messages, w.n);
    results.push_back(sweep(requeue ? "BM1-requeue" : "BM1-poll", detail, fit_limit, max_p, o.repeat, paper_f[0],
                            [w] { return run_bm(w); }));
  }

  if (wants("scaled")) {
    // Block length n(p) = a/c + p from this runtime's own BM1 constants, if it has a
    // p-dependent cost c; otherwise the paper's 34 + p.
    const Sweep* bm1 = nullptr;
    for (const Sweep& s : results) {
      if (s.name == "BM1") bm1 = &s;
    }
    long base = 34;
    std::string why = "paper's a/c = 34 (run bm1 too to use this machine's)";
    if (bm1 != nullptr) {
      const double ratio = bm1->model.b > 0 ? bm1->model.a / bm1->model.b : 0;
      if (ratio > 0 && ratio < 1000) {
        base = std::lround(ratio);
        why = "a/c from this machine's BM1 fit";
      } else {
        why = "this machine's BM1 has no positive p-dependent cost (c <= 0 or a/c > 1000): paper's a/c = 34";
      }
    }
    const long pairs = 40;
    const long per_word = o.literal ? 0 : std::lround((83.0 / 176.0) * t_comm / t_iter);
    // The paper's 42500 words per agent are scaled to the time target (--seconds).
    // One pair's cost per word on one processor: both agents' work, and two agents' cycles
    // per block of about base + 1 words.
    const double word_cost = 2.0 * static_cast<double>(per_word) * t_iter + 2.0 * t_comm / static_cast<double>(base + 1);
    const long words_total = std::max(2000L, std::lround(o.seconds / (static_cast<double>(pairs) * word_cost)));
    std::printf("\n(scaled benchmark: n(p) = %ld + p words/message: %s)\n", base, why.c_str());
    // Each p has its own block length, so the sweep runs a closure that reads p from the runtime.
    results.push_back(sweep("scaled", "40 pairs, " + std::to_string(words_total) + " words per agent in blocks of n(p) = " +
                                          std::to_string(base) + " + p words, " + std::to_string(per_word) +
                                          " iterations of work per word",
                            fit_limit, max_p, o.repeat, -1, [=] {
                              Work w{.pairs = pairs, .n = per_word};
                              const long p = static_cast<long>(presto::this_thread::runtime()->processors());
                              w.words = base + p;
                              w.messages = words_total / w.words;
                              return run_scaled(w);
                            }));
  }

  std::printf("\nsummary (f = serial fraction of T(p) = a/p + b, fitted over p = 1..%zu):\n", fit_limit);
  std::printf("  %-11s %9s %9s\n", "benchmark", "f", "paper f");
  bool all_correct = true;
  for (const Sweep& s : results) {
    const double paper = s.name.starts_with("BM1") ? 0.029 : s.name == "BM2" ? 0.014 : s.name == "BM3" ? 0.001 : 0.0;
    std::printf("  %-11s %9.3f %9.3f%s\n", s.name.c_str(), s.model.f(), paper,
                s.name == "scaled" ? "  (paper: linear speed-up)" : s.name.starts_with("BM1-") ? "  (paper: BM1's f; the polling points are lost)" : "");
    all_correct = all_correct && s.correct;
  }
  std::printf("check: %s\n", all_correct ? "every message of every run received and verified" : "FAILED: a receiver got a wrong value");
  return all_correct ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "presto-joyce: %s\n", e.what());
  return 1;
}
