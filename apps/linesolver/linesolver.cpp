// presto-linesolver: the pipelined line solver of Van der Wijngaart, Sarukkai and Mehra
// ("Analysis and optimization of software pipeline performance on MIMD parallel computers";
// "The effect of interrupts on software pipeline execution on message-passing
// architectures", NASA 1995), run on PRESTO threads over a message layer that charges the
// paper's costs: send overhead s, receive-interrupt overhead r_i (a message that arrives
// while its receiver is busy) and receive-handling overhead r_h (message_layer.hpp; the
// times are virtual, so the results are the same on any machine).
//
// Three experiments:
//   synthetic    the paper's benchmark: 16 nodes, 256 zero-length messages, work per subtask
//                in loop units, the first node padded by 0..32 units. Shows the flooding of
//                node 2, the optimal padding (r_i + r_h: 13 units for r_h = 39 us, r_i =
//                57 us) for every amount of work, node 2's completion time invariant to
//                padding below the optimum, and the scaled delays beside eqs. 11 and 35.
//   tridiagonal  256 independent tridiagonal systems of rank 128 on 8 nodes (16 rows of
//                each per node), forward elimination then back substitution, each a
//                pipeline passing the boundary values; with and without the optimal
//                padding; the solution checked against a sequential Thomas solve.
//   grain        the same forward elimination with n systems per message: the best n
//                measured beside n_opt (eq. 39).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include <presto/presto.hpp>

#include "command_line.hpp"
#include "json_line.hpp"
#include "message_layer.hpp"
#include "pipeline.hpp"

namespace ls = presto::apps::linesolver;

namespace {

struct Options {
  std::string experiment = "all";
  ls::CostModel costs{.s = 20, .r_i = 57, .r_h = 39};
  double unit = 7.4;         // us per loop unit (10 iterations of the paper's loop on the i860)
  std::size_t nodes = 0;     // 0: 16 for synthetic, 8 for the solver
  std::size_t tasks = 256;   // synthetic: messages per node
  std::vector<int> work{6, 8, 10, 12, 16};
  std::size_t systems = 256;
  std::size_t rank = 128;
  double row_us = 4.0;       // forward elimination, per row (6 multiply-adds and a division)
  double back_row_us = 1.5;  // back substitution, per row (2 multiply-adds)
  double per_byte = 0.01;    // grain: s_per_byte = r_per_byte
  std::size_t processors = 2;
  bool json = false;
};

// With --json: a virtual completion time (us) as a JSON line for benchmarks/run.py.
void emit(const Options& o, const char* name, const std::string& system, std::size_t nodes, std::size_t param, double us,
          std::vector<std::pair<std::string, double>> extra = {}) {
  if (o.json) {
    presto::apps::print_json_line({.name = name, .system = system, .processors = nodes, .param = param, .median_ns = us * 1e3,
                                   .min_ns = us * 1e3, .max_ns = us * 1e3, .repetitions = 1, .extra = std::move(extra)});
  }
}

constexpr const char* usage =
    "usage: %s [--experiment synthetic|tridiagonal|grain|all] [--s US] [--ri US] [--rh US] [--latency US]\n"
    "          [--unit US] [--nodes P] [--tasks N] [--work W[,W...]] [--systems N] [--rank R]\n"
    "          [--row-us US] [--back-row-us US] [--per-byte US] [--processors P] [--json]\n"
    "Runs a software pipeline over a message layer that charges send (s, default 20 us),\n"
    "receive-interrupt (r_i, 57 us) and receive-handling (r_h, 39 us) overheads in virtual time\n"
    "(Van der Wijngaart et al., 1995), on P presto processors (default 2; the results do not\n"
    "depend on P). synthetic: 16 nodes, 256 messages, work W loop units of --unit us (6,8,10,\n"
    "12,16), first node padded 0..32 units; tridiagonal: 256 systems of rank 128 on 8 nodes,\n"
    "forward elimination (--row-us 4 per row) and back substitution (--back-row-us 1.5),\n"
    "unpadded and padded by r_i + r_h, checked; grain: n systems per message (copy cost\n"
    "--per-byte 0.01 us at each end), best n beside the model's n_opt. --json: also JSON lines\n"
    "for benchmarks/run.py (processors = nodes, times virtual).\n";

bool parse(int argc, char** argv, Options& o) {
  presto::apps::CommandLine cl{usage};
  cl.option("--experiment", o.experiment).option("--s", o.costs.s).option("--ri", o.costs.r_i);
  cl.option("--rh", o.costs.r_h).option("--latency", o.costs.latency).option("--unit", o.unit);
  cl.option("--nodes", o.nodes).option("--tasks", o.tasks).option("--work", o.work).option("--systems", o.systems);
  cl.option("--rank", o.rank).option("--row-us", o.row_us).option("--back-row-us", o.back_row_us);
  cl.option("--per-byte", o.per_byte).option("--processors", o.processors).flag("--json", o.json);
  if (!cl.parse(argc, argv)) return false;
  const std::vector<std::string> known{"synthetic", "tridiagonal", "grain", "all"};
  if (std::find(known.begin(), known.end(), o.experiment) == known.end()) {
    return cl.error("--experiment must be synthetic, tridiagonal, grain or all");
  }
  const ls::CostModel& c = o.costs;
  if (c.s < 0 || c.r_i < 0 || c.r_h < 0 || c.latency < 0 || o.unit <= 0 || o.row_us <= 0 || o.back_row_us <= 0 ||
      o.per_byte < 0) {
    return cl.error("costs must be non-negative and --unit, --row-us, --back-row-us positive");
  }
  if (o.nodes == 1 || o.tasks == 0 || o.systems == 0 || o.processors == 0 || o.work.empty()) {
    return cl.error("--nodes must be at least 2; --tasks, --systems, --processors and --work must be given and positive");
  }
  if (std::any_of(o.work.begin(), o.work.end(), [](int w) { return w < 0; })) return cl.error("--work must be >= 0");
  const std::size_t solver_nodes = o.nodes != 0 ? o.nodes : 8;
  if (o.experiment != "synthetic" && (o.rank == 0 || o.rank % solver_nodes != 0)) {
    return cl.error("--rank must be a positive multiple of the number of nodes (" + std::to_string(solver_nodes) + ")");
  }
  return true;
}

// Scaled delay of node k (1-based, 2 <= k < p): eq. 11 with padding tau = 0, eq. 32 otherwise.
double model_delay(std::size_t k, std::size_t tasks, double c_plus_s, double r_i, double r_h, double padding) {
  const double alpha = r_h / c_plus_s, beta = r_i / c_plus_s, tau = padding / c_plus_s, n = static_cast<double>(tasks);
  const double fill = (1 + alpha + beta) * static_cast<double>(k - 1) / n;
  const double wave = (alpha + beta - tau) / (1 + alpha - beta) *
                      (1 + alpha - beta * std::pow(beta / (1 + alpha), static_cast<double>(k) - 2));
  return fill + tau + wave;
}

bool synthetic(const Options& o) {
  const std::size_t p = o.nodes != 0 ? o.nodes : 16;
  const ls::CostModel& c = o.costs;
  const int optimum_units = static_cast<int>(std::lround((c.r_i + c.r_h) / o.unit));
  std::printf("\nSynthetic pipeline: %zu nodes, %zu zero-length messages each; s = %g, r_i = %g, r_h = %g us;\n"
              "1 loop unit = %g us, so r_i + r_h = %.2f units. Completion times in ms (virtual).\n",
              p, o.tasks, c.s, c.r_i, c.r_h, o.unit, (c.r_i + c.r_h) / o.unit);
  std::printf("%5s %8s %6s %6s | %-26s | %9s %9s %6s %5s | %13s %13s\n", "work", "c+s(us)", "alpha", "beta",
              "node 2 at padding 0/6/12", "node p", "best", "gain", "pad", "dt_(p-1) run", "model 11/35");
  bool ok = true;
  for (int w : o.work) {
    const double compute = w * o.unit;
    std::vector<std::vector<ls::NodeStats>> by_padding;
    for (int pad = 0; pad <= 32; ++pad) {
      by_padding.push_back(ls::run_pipeline(c, p, o.tasks, pad * o.unit, [&](std::size_t, std::size_t, ls::Node& node,
                                                                              std::vector<double>) {
        node.compute(compute);
        return std::vector<double>{};
      }));
    }
    int best = 0;
    for (int pad = 0; pad <= 32; ++pad) {
      if (by_padding[pad].back().completion < by_padding[best].back().completion - 1e-9) best = pad;
    }
    const double cs = compute + c.s, unpadded = by_padding[0].back().completion, padded = by_padding[best].back().completion;
    const auto delay = [&](int pad) { return by_padding[pad][p - 2].completion / (static_cast<double>(o.tasks) * cs) - 1; };
    std::printf("%5d %8.1f %6.3f %6.3f | %8.3f %8.3f %8.3f | %9.3f %9.3f %5.1f%% %5d | %6.3f %6.3f %6.3f %6.3f\n", w, cs,
                c.r_h / cs, c.r_i / cs, by_padding[0][1].completion / 1e3, by_padding[6][1].completion / 1e3,
                by_padding[12][1].completion / 1e3, unpadded / 1e3, padded / 1e3, 100 * (1 - padded / unpadded), best,
                delay(0), delay(best), model_delay(p - 1, o.tasks, cs, c.r_i, c.r_h, 0),
                model_delay(p - 1, o.tasks, cs, c.r_i, c.r_h, c.r_i + c.r_h));
    emit(o, "linesolver_synthetic", "unpadded", p, static_cast<std::size_t>(w), unpadded);
    emit(o, "linesolver_synthetic", "best padding", p, static_cast<std::size_t>(w), padded,
         {{"padding_units", best}, {"gain_pct", 100 * (1 - padded / unpadded)}});
    // The paper's claims, where its model holds (r_i < c + s): the optimum is r_i + r_h
    // whatever the work, and node 2 does not see padding below it.
    if (c.r_i < cs) {
      double lo = by_padding[0][1].completion, hi = lo;
      for (int pad = 0; pad < optimum_units; ++pad) {
        lo = std::min(lo, by_padding[pad][1].completion);
        hi = std::max(hi, by_padding[pad][1].completion);
      }
      const double model = model_delay(p - 1, o.tasks, cs, c.r_i, c.r_h, 0);
      const double model_padded = model_delay(p - 1, o.tasks, cs, c.r_i, c.r_h, c.r_i + c.r_h);
      if (std::abs(best - optimum_units) > 1 || hi - lo > 0.02 * lo || std::abs(delay(0) - model) > 0.05 * model ||
          std::abs(delay(optimum_units) - model_padded) > 0.05 * model_padded) {
        std::printf("  work %d: the optimum (%d units), node 2's invariance (%.3f..%.3f ms) or the delays differ from "
                    "the model by more than 5%%\n",
                    w, best, lo / 1e3, hi / 1e3);
        ok = false;
      }
    }
  }
  // Flooding: node 2 at the first work value, unpadded and padded. Every message costs r_i;
  // the question is whether it lands on work (stretching it) or on a node waiting anyway.
  const double compute = o.work.front() * o.unit;
  for (int pad : {0, optimum_units}) {
    const auto stats = ls::run_pipeline(c, p, o.tasks, pad * o.unit, [&](std::size_t, std::size_t, ls::Node& node,
                                                                       std::vector<double>) {
      node.compute(compute);
      return std::vector<double>{};
    });
    std::printf("work %d, padding %2d: interrupts during work / most messages waiting at a receive: node 2 %zu / %zu, "
                "node 3 %zu / %zu, node %zu %zu / %zu\n",
                o.work.front(), pad, stats[1].interrupts_busy, stats[1].max_backlog, stats[2].interrupts_busy,
                stats[2].max_backlog, p, stats[p - 1].interrupts_busy, stats[p - 1].max_backlog);
  }
  return ok;
}

// Tridiagonal systems a_i x_{i-1} + b_i x_i + c_i x_{i+1} = d_i, diagonally dominant.
struct Systems {
  std::size_t count, rank;
  std::vector<double> a, b, c, d, b_, d_, x;  // [system * rank + row]; b_, d_: eliminated

  Systems(std::size_t n, std::size_t r) : count(n), rank(r), a(n * r), b(n * r), c(n * r), d(n * r), b_(n * r), d_(n * r), x(n * r) {
    std::mt19937_64 random(42);
    std::uniform_real_distribution<double> u(-1, 1);
    for (std::size_t i = 0; i < n * r; ++i) a[i] = u(random), c[i] = u(random), b[i] = 4 + u(random), d[i] = u(random);
  }
  std::size_t at(std::size_t system, std::size_t row) const { return system * rank + row; }
  // Thomas forward elimination of `system`'s rows [first, last), given the eliminated row before.
  void forward(std::size_t system, std::size_t first, std::size_t last, double b_prev, double d_prev) {
    for (std::size_t i = first; i < last; ++i) {
      const std::size_t k = at(system, i);
      if (i == 0) {
        b_[k] = b[k], d_[k] = d[k];
      } else {
        const double w = a[k] / b_prev;
        b_[k] = b[k] - w * c[k - 1];
        d_[k] = d[k] - w * d_prev;
      }
      b_prev = b_[k], d_prev = d_[k];
    }
  }
  // Back substitution of rows [first, last), last to first, given x of row `last`.
  void back(std::size_t system, std::size_t first, std::size_t last, double x_next) {
    for (std::size_t i = last; i-- > first;) {
      const std::size_t k = at(system, i);
      x[k] = i + 1 == rank ? d_[k] / b_[k] : (d_[k] - c[k] * x_next) / b_[k];
      x_next = x[k];
    }
  }
};

struct SolverRun {
  double forward_ms, back_ms;  // the last node's completion time of each phase
  double forward_node2_ms;
  bool correct;
};

// Solves every system on `p` nodes, `group` systems per message, the first node of each
// phase padded by `padding(us per message)`; checked against `reference`'s solution.
SolverRun solve(const Options& o, std::size_t p, std::size_t group, const Systems& reference, double forward_padding,
                double back_padding) {
  Systems s(o.systems, o.rank);
  const std::size_t rows = o.rank / p, messages = (o.systems + group - 1) / group;
  auto systems_of = [&](std::size_t step) { return std::pair{step * group, std::min(o.systems, (step + 1) * group)}; };
  const auto fwd = ls::run_pipeline(o.costs, p, messages, forward_padding, [&](std::size_t k, std::size_t step, ls::Node& node,
                                                                                 std::vector<double> in) {
    auto [first, last] = systems_of(step);
    std::vector<double> out;
    for (std::size_t sys = first; sys < last; ++sys) {
      const std::size_t i = 2 * (sys - first);
      s.forward(sys, k * rows, (k + 1) * rows, k > 0 ? in[i] : 0.0, k > 0 ? in[i + 1] : 0.0);
      out.push_back(s.b_[s.at(sys, (k + 1) * rows - 1)]);
      out.push_back(s.d_[s.at(sys, (k + 1) * rows - 1)]);
    }
    node.compute(static_cast<double>((last - first) * rows) * o.row_us);
    return out;
  });
  // Back substitution runs the other way: pipeline position q holds segment p - 1 - q.
  const auto bwd = ls::run_pipeline(o.costs, p, messages, back_padding, [&](std::size_t q, std::size_t step, ls::Node& node,
                                                                              std::vector<double> in) {
    auto [first, last] = systems_of(step);
    const std::size_t segment = p - 1 - q;
    std::vector<double> out;
    for (std::size_t sys = first; sys < last; ++sys) {
      s.back(sys, segment * rows, (segment + 1) * rows, q > 0 ? in[sys - first] : 0.0);
      out.push_back(s.x[s.at(sys, segment * rows)]);
    }
    node.compute(static_cast<double>((last - first) * rows) * o.back_row_us);
    return out;
  });
  return {fwd.back().completion / 1e3, bwd.back().completion / 1e3, fwd[1].completion / 1e3, s.x == reference.x};
}

// The sequential reference, and a residual check of it.
Systems reference_solution(const Options& o, bool& ok) {
  Systems r(o.systems, o.rank);
  double worst = 0;
  for (std::size_t sys = 0; sys < o.systems; ++sys) {
    r.forward(sys, 0, o.rank, 0, 0);
    r.back(sys, 0, o.rank, 0);
    for (std::size_t i = 0; i < o.rank; ++i) {
      const std::size_t k = r.at(sys, i);
      double lhs = r.b[k] * r.x[k];
      if (i > 0) lhs += r.a[k] * r.x[k - 1];
      if (i + 1 < o.rank) lhs += r.c[k] * r.x[k + 1];
      worst = std::max(worst, std::abs(lhs - r.d[k]));
    }
  }
  ok = worst < 1e-12;
  std::printf("sequential Thomas solve: largest residual |Ax - d| = %.2e%s\n", worst, ok ? "" : " (TOO LARGE)");
  return r;
}

bool tridiagonal(const Options& o, const Systems& reference) {
  const std::size_t p = o.nodes != 0 ? o.nodes : 8;
  const double pad = o.costs.r_i + o.costs.r_h;
  std::printf("\nPipelined tridiagonal solver: %zu systems of rank %zu on %zu nodes (%zu rows of each per node);\n"
              "forward c = %.1f us and back substitution c = %.1f us per system and node; completion in ms (virtual)\n",
              o.systems, o.rank, p, o.rank / p, o.row_us * static_cast<double>(o.rank / p),
              o.back_row_us * static_cast<double>(o.rank / p));
  const SolverRun plain = solve(o, p, 1, reference, 0, 0), padded = solve(o, p, 1, reference, pad, pad);
  std::printf("%-28s %12s %12s %12s %8s\n", "", "forward", "node 2 fwd", "back subst.", "solution");
  std::printf("%-28s %12.3f %12.3f %12.3f %8s\n", "unpadded", plain.forward_ms, plain.forward_node2_ms, plain.back_ms,
              plain.correct ? "ok" : "WRONG");
  std::printf("%-28s %12.3f %12.3f %12.3f %8s\n", ("first node padded " + std::to_string(static_cast<int>(pad)) + " us").c_str(),
              padded.forward_ms, padded.forward_node2_ms, padded.back_ms, padded.correct ? "ok" : "WRONG");
  emit(o, "linesolver_tridiagonal", "forward, unpadded", p, o.systems, plain.forward_ms * 1e3);
  emit(o, "linesolver_tridiagonal", "forward, padded", p, o.systems, padded.forward_ms * 1e3);
  emit(o, "linesolver_tridiagonal", "back substitution, unpadded", p, o.systems, plain.back_ms * 1e3);
  emit(o, "linesolver_tridiagonal", "back substitution, padded", p, o.systems, padded.back_ms * 1e3);
  std::printf("gain from padding: forward %.1f%%, back substitution %.1f%%\n", 100 * (1 - padded.forward_ms / plain.forward_ms),
              100 * (1 - padded.back_ms / plain.back_ms));
  return plain.correct && padded.correct;
}

bool grain(const Options& o, const Systems& reference) {
  const std::size_t p = o.nodes != 0 ? o.nodes : 8;
  ls::CostModel costs = o.costs;
  costs.s_per_byte = costs.r_per_byte = o.per_byte;
  Options with = o;
  with.costs = costs;
  const double c = o.row_us * static_cast<double>(o.rank / p), B = 2 * sizeof(double);
  const double n_opt = std::sqrt(static_cast<double>(o.systems) / static_cast<double>(p - 1) *
                                 (costs.s + costs.r_h + costs.r_i) / (c + (costs.s_per_byte + costs.r_per_byte) * B));
  std::printf("\nGrain: forward elimination with n systems per message, padded by r_i + r_h + r1 n B (eq. 40);\n"
              "copy cost %g us per byte at each end, B = %g bytes per system. Model: n_opt = %.2f (eq. 39)\n",
              o.per_byte, B, n_opt);
  std::printf("%6s %12s %8s\n", "n", "forward ms", "solution");
  std::size_t best = 0;
  double best_ms = 0;
  bool ok = true;
  for (std::size_t n = 1; n <= 64 && n <= o.systems; n *= 2) {
    const double pad = costs.r_i + costs.r_h + costs.r_per_byte * static_cast<double>(n) * B;
    const SolverRun r = solve(with, p, n, reference, pad, 0);
    std::printf("%6zu %12.3f %8s\n", n, r.forward_ms, r.correct ? "ok" : "WRONG");
    emit(o, "linesolver_grain", "forward, padded", p, n, r.forward_ms * 1e3, {{"n_opt_model", n_opt}});
    if (best == 0 || r.forward_ms < best_ms) best = n, best_ms = r.forward_ms;
    ok = ok && r.correct;
  }
  std::printf("best n measured: %zu (model: %.2f)\n", best, n_opt);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  try {
    presto::Runtime rt{{.processors = o.processors}};
    const bool ok = rt.run([&] {
      bool good = true;
      if (o.experiment == "synthetic" || o.experiment == "all") good = synthetic(o) && good;
      if (o.experiment == "tridiagonal" || o.experiment == "grain" || o.experiment == "all") {
        const Systems reference = reference_solution(o, good);
        if (o.experiment != "grain") good = tridiagonal(o, reference) && good;
        if (o.experiment != "tridiagonal") good = grain(o, reference) && good;
      }
      return good;
    });
    std::printf("\n%s\n", ok ? "every check passed" : "SOME CHECK FAILED");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "presto-linesolver: %s\n", e.what());
    return 1;
  }
}
