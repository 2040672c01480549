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
//
// Two transports: "shared" (the message layer on presto threads) and "psim", where the
// pipeline's nodes are PSIM logical processes (psim_pipeline.hpp), in this process or, under
// mpirun (or with --ranks R, which launches it), with the nodes in blocks over the MPI ranks
// (presto::psim_mpi). A psim run is checked against the shared-memory run of the same
// pipeline: every node's completion time, blocked, interrupt and handling times, interrupts
// and backlog must agree, and the distributed solver's solution must be right on every rank.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include <functional>
#include <optional>

#include <presto/presto.hpp>

#ifdef PRESTO_LINESOLVER_MPI
#include <presto/psim_mpi/distributed_simulation.hpp>
#include <presto/psim_mpi/environment.hpp>
#endif

#include "command_line.hpp"
#include "json_line.hpp"
#include "message_layer.hpp"
#include "mpi_launch.hpp"
#include "pipeline.hpp"
#include "psim_pipeline.hpp"

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
  std::string transport = "shared";
  int ranks = 0;  // psim: launch under mpirun on this many ranks
};

// How the pipelines run: on the shared-memory message layer, or with their nodes as PSIM LPs
// (run_psim: in this process, or on MPI ranks, node k of a pipeline placed like node k, or
// node nodes - 1 - k when `reversed`, of the block partition).
struct Runner {
  bool psim = false;
  std::function<std::vector<ls::NodeStats>(presto::psim::Simulation&, std::vector<ls::PsimNode*>&, bool reversed)> run_psim;
  std::function<void(std::vector<double>&)> sum = [](std::vector<double>&) {};  // elementwise, over the ranks
  std::size_t compared = 0;  // pipelines checked against the shared-memory layer
  double worst = 0;          // the largest relative difference of a node's statistic found

  template <class Stage>
  std::vector<ls::NodeStats> operator()(const ls::CostModel& c, std::size_t nodes, std::size_t messages, double padding,
                                        bool reversed, Stage stage) {
    if (!psim) return ls::run_pipeline(c, nodes, messages, padding, stage);
    return ls::run_psim_pipeline(c, nodes, messages, padding, stage,
                                 [&](presto::psim::Simulation& sim, std::vector<ls::PsimNode*>& lps) {
                                   return run_psim(sim, lps, reversed);
                                 });
  }

  // Records how far `got` (psim) is from `want` (shared memory).
  void compare(const std::vector<ls::NodeStats>& got, const std::vector<ls::NodeStats>& want) {
    ++compared;
    auto diff = [](double a, double b) { return a == b ? 0.0 : std::abs(a - b) / std::max(std::abs(a), std::abs(b)); };
    for (std::size_t k = 0; k < want.size(); ++k) {
      const ls::NodeStats &g = got.at(k), &w = want[k];
      for (double d : {diff(g.completion, w.completion), diff(g.blocked, w.blocked), diff(g.interrupted, w.interrupted),
                       diff(g.handling, w.handling)}) {
        worst = std::max(worst, d);
      }
      if (g.interrupts != w.interrupts || g.interrupts_busy != w.interrupts_busy || g.max_backlog != w.max_backlog) worst = 1;
    }
  }
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
    "          [--transport shared|psim] [--ranks R]\n"
    "Runs a software pipeline over a message layer that charges send (s, default 20 us),\n"
    "receive-interrupt (r_i, 57 us) and receive-handling (r_h, 39 us) overheads in virtual time\n"
    "(Van der Wijngaart et al., 1995), on P presto processors (default 2; the results do not\n"
    "depend on P). synthetic: 16 nodes, 256 messages, work W loop units of --unit us (6,8,10,\n"
    "12,16), first node padded 0..32 units; tridiagonal: 256 systems of rank 128 on 8 nodes,\n"
    "forward elimination (--row-us 4 per row) and back substitution (--back-row-us 1.5),\n"
    "unpadded and padded by r_i + r_h, checked; grain: n systems per message (copy cost\n"
    "--per-byte 0.01 us at each end), best n beside the model's n_opt. --json: also JSON lines\n"
    "for benchmarks/run.py (processors = nodes, times virtual).\n"
    "--transport psim: the nodes are PSIM logical processes (needs --latency > 0, the links'\n"
    "lookahead), each run checked against the shared-memory one; under mpirun, or with --ranks R\n"
    "(which launches it so), they are placed in blocks over the MPI ranks.\n";

bool parse(int argc, char** argv, Options& o) {
  presto::apps::CommandLine cl{usage};
  cl.option("--experiment", o.experiment).option("--s", o.costs.s).option("--ri", o.costs.r_i);
  cl.option("--rh", o.costs.r_h).option("--latency", o.costs.latency).option("--unit", o.unit);
  cl.option("--nodes", o.nodes).option("--tasks", o.tasks).option("--work", o.work).option("--systems", o.systems);
  cl.option("--rank", o.rank).option("--row-us", o.row_us).option("--back-row-us", o.back_row_us);
  cl.option("--per-byte", o.per_byte).option("--processors", o.processors).flag("--json", o.json);
  cl.option("--transport", o.transport).option("--ranks", o.ranks);
  if (!cl.parse(argc, argv)) return false;
  if (o.transport != "shared" && o.transport != "psim") return cl.error("--transport must be shared or psim");
  if (o.transport == "psim" && !(o.costs.latency > 0)) {
    return cl.error("--transport psim needs --latency > 0 (the PSIM links' lookahead)");
  }
  if (o.ranks != 0 && (o.transport != "psim" || o.ranks < 1)) return cl.error("--ranks R (>= 1) needs --transport psim");
#ifndef PRESTO_LINESOLVER_MPI
  if (o.ranks != 0) return cl.error("--ranks: this presto-linesolver was built without MPI");
#endif
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

bool synthetic(const Options& o, Runner& run) {
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
    const auto stage = [&](std::size_t, std::size_t, auto& node, std::vector<double>) {
      node.compute(compute);
      return std::vector<double>{};
    };
    for (int pad = 0; pad <= 32; ++pad) {
      by_padding.push_back(run(c, p, o.tasks, pad * o.unit, false, stage));
      if (run.psim) run.compare(by_padding.back(), ls::run_pipeline(c, p, o.tasks, pad * o.unit, stage));
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
    const auto stats = run(c, p, o.tasks, pad * o.unit, false, [&](std::size_t, std::size_t, auto& node, std::vector<double>) {
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
  std::vector<ls::NodeStats> forward, back;  // every node's statistics
};

// Solves every system on `p` nodes, `group` systems per message, the first node of each
// phase padded by `padding(us per message)`; checked against `reference`'s solution.
SolverRun solve(const Options& o, Runner& run, std::size_t p, std::size_t group, const Systems& reference,
                double forward_padding, double back_padding) {
  Systems s(o.systems, o.rank);
  const std::size_t rows = o.rank / p, messages = (o.systems + group - 1) / group;
  auto systems_of = [&](std::size_t step) { return std::pair{step * group, std::min(o.systems, (step + 1) * group)}; };
  const auto fwd = run(o.costs, p, messages, forward_padding, false, [&](std::size_t k, std::size_t step, auto& node,
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
  // Back substitution runs the other way: pipeline position q holds segment p - 1 - q (on
  // the rank that eliminated it, when distributed). Each node checks the rows it solved
  // against the reference: [0, p) rows wrong, [p, 2p) rows solved, summed over the ranks.
  std::vector<double> counts(2 * p, 0.0);
  const auto bwd = run(o.costs, p, messages, back_padding, true, [&](std::size_t q, std::size_t step, auto& node,
                                                                     std::vector<double> in) {
    auto [first, last] = systems_of(step);
    const std::size_t segment = p - 1 - q;
    std::vector<double> out;
    for (std::size_t sys = first; sys < last; ++sys) {
      s.back(sys, segment * rows, (segment + 1) * rows, q > 0 ? in[sys - first] : 0.0);
      out.push_back(s.x[s.at(sys, segment * rows)]);
      for (std::size_t i = segment * rows; i < (segment + 1) * rows; ++i) {
        counts[q] += s.x[s.at(sys, i)] != reference.x[s.at(sys, i)] ? 1 : 0;
        counts[p + q] += 1;
      }
    }
    node.compute(static_cast<double>((last - first) * rows) * o.back_row_us);
    return out;
  });
  run.sum(counts);
  double wrong = 0, solved = 0;
  for (std::size_t q = 0; q < p; ++q) wrong += counts[q], solved += counts[p + q];
  const bool correct = wrong == 0 && solved == static_cast<double>(o.systems * rows * p);
  return {fwd.back().completion / 1e3, bwd.back().completion / 1e3, fwd[1].completion / 1e3, correct, fwd, bwd};
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

// With a psim runner, the same solve on the shared-memory layer, compared node by node.
SolverRun checked_solve(const Options& o, Runner& run, std::size_t p, std::size_t group, const Systems& reference,
                        double forward_padding, double back_padding) {
  SolverRun r = solve(o, run, p, group, reference, forward_padding, back_padding);
  if (run.psim) {
    Runner shared;
    const SolverRun want = solve(o, shared, p, group, reference, forward_padding, back_padding);
    run.compare(r.forward, want.forward);
    run.compare(r.back, want.back);
  }
  return r;
}

bool tridiagonal(const Options& o, Runner& run, const Systems& reference) {
  const std::size_t p = o.nodes != 0 ? o.nodes : 8;
  const double pad = o.costs.r_i + o.costs.r_h;
  std::printf("\nPipelined tridiagonal solver: %zu systems of rank %zu on %zu nodes (%zu rows of each per node);\n"
              "forward c = %.1f us and back substitution c = %.1f us per system and node; completion in ms (virtual)\n",
              o.systems, o.rank, p, o.rank / p, o.row_us * static_cast<double>(o.rank / p),
              o.back_row_us * static_cast<double>(o.rank / p));
  const SolverRun plain = checked_solve(o, run, p, 1, reference, 0, 0), padded = checked_solve(o, run, p, 1, reference, pad, pad);
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

bool grain(const Options& o, Runner& run, const Systems& reference) {
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
    const SolverRun r = checked_solve(with, run, p, n, reference, pad, 0);
    std::printf("%6zu %12.3f %8s\n", n, r.forward_ms, r.correct ? "ok" : "WRONG");
    emit(o, "linesolver_grain", "forward, padded", p, n, r.forward_ms * 1e3, {{"n_opt_model", n_opt}});
    if (best == 0 || r.forward_ms < best_ms) best = n, best_ms = r.forward_ms;
    ok = ok && r.correct;
  }
  std::printf("best n measured: %zu (model: %.2f)\n", best, n_opt);
  return ok;
}

}  // namespace

#ifdef PRESTO_LINESOLVER_MPI
// Runs a PSIM pipeline over the MPI ranks and combines every node's statistics on every rank.
std::vector<ls::NodeStats> run_distributed(presto::psim::Simulation& sim, std::vector<ls::PsimNode*>& lps, bool reversed,
                                           int ranks) {
  const std::size_t p = lps.size();
  presto::psim_mpi::DistributedConfig config;
  for (std::size_t k = 0; k < p; ++k) {
    config.partition.push_back(static_cast<int>((reversed ? p - 1 - k : k) * static_cast<std::size_t>(ranks) / p));
  }
  presto::psim_mpi::DistributedSimulation dist{sim, config};
  dist.run();
  constexpr std::size_t fields = 7;
  std::vector<double> flat(p * fields, 0.0);
  for (std::size_t k = 0; k < p; ++k) {
    if (!dist.owned(*lps[k])) continue;
    const ls::NodeStats& s = lps[k]->stats();
    const double values[fields] = {s.completion, s.blocked, s.interrupted, s.handling, static_cast<double>(s.interrupts),
                                   static_cast<double>(s.interrupts_busy), static_cast<double>(s.max_backlog)};
    std::copy(values, values + fields, flat.begin() + static_cast<std::ptrdiff_t>(k * fields));
  }
  presto::psim_mpi::check_mpi(MPI_Allreduce(MPI_IN_PLACE, flat.data(), static_cast<int>(flat.size()), MPI_DOUBLE, MPI_SUM,
                                            MPI_COMM_WORLD),
                              "MPI_Allreduce");
  std::vector<ls::NodeStats> stats(p);
  for (std::size_t k = 0; k < p; ++k) {
    const double* v = &flat[k * fields];
    stats[k] = {v[0], v[1], v[2], v[3], static_cast<std::size_t>(v[4]), static_cast<std::size_t>(v[5]),
                static_cast<std::size_t>(v[6])};
  }
  return stats;
}
#endif

// From outside mpirun: runs this program under mpirun on --ranks ranks, with the same arguments.
int launch(int argc, char** argv, int ranks) {
  std::string passed;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--ranks") {
      ++i;
    } else {
      passed += " '" + std::string(argv[i]) + "'";
    }
  }
  const std::string cmd = presto::apps::mpirun_command(ranks, presto::apps::self_path(argv[0]), passed);
  std::fflush(stdout);
  const int status = std::system(cmd.c_str());
  if (status != 0) std::fprintf(stderr, "presto-linesolver: '%s' failed (status %d)\n", cmd.c_str(), status);
  return status == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  try {
    Runner run;
    int ranks = 0;  // psim: 0 in one process
#ifdef PRESTO_LINESOLVER_MPI
    if (o.ranks != 0 && !presto::apps::under_mpirun()) return launch(argc, argv, o.ranks);
    std::optional<presto::psim_mpi::Environment> mpi;
    if (o.transport == "psim" && presto::apps::under_mpirun()) {
      mpi.emplace(argc, argv);
      if (o.ranks != 0 && o.ranks != mpi->ranks()) {
        std::fprintf(stderr, "presto-linesolver: --ranks %d under mpirun, which gave %d ranks\n", o.ranks, mpi->ranks());
        return 2;
      }
      ranks = mpi->ranks();
      if (mpi->rank() != 0 && std::freopen("/dev/null", "w", stdout) == nullptr) return 1;  // rank 0 reports
      run.run_psim = [ranks](presto::psim::Simulation& sim, std::vector<ls::PsimNode*>& lps, bool reversed) {
        return run_distributed(sim, lps, reversed, ranks);
      };
      run.sum = [](std::vector<double>& v) {
        presto::psim_mpi::check_mpi(
            MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
            "MPI_Allreduce");
      };
    }
#else
    (void)launch;
#endif
    run.psim = o.transport == "psim";
    if (run.psim && !run.run_psim) {
      run.run_psim = [](presto::psim::Simulation& sim, std::vector<ls::PsimNode*>& lps, bool) {
        sim.run();
        std::vector<ls::NodeStats> stats;
        for (const ls::PsimNode* lp : lps) stats.push_back(lp->stats());
        return stats;
      };
    }
    if (run.psim) {
      std::printf("Transport: PSIM, the nodes as logical processes %s; every run checked against the shared-memory "
                  "layer\n",
                  ranks > 0 ? ("in blocks over " + std::to_string(ranks) + " MPI rank(s)").c_str() : "in this process");
    }
    presto::Runtime rt{{.processors = o.processors}};
    const bool ok = rt.run([&] {
      bool good = true;
      if (o.experiment == "synthetic" || o.experiment == "all") good = synthetic(o, run) && good;
      if (o.experiment == "tridiagonal" || o.experiment == "grain" || o.experiment == "all") {
        const Systems reference = reference_solution(o, good);
        if (o.experiment != "grain") good = tridiagonal(o, run, reference) && good;
        if (o.experiment != "tridiagonal") good = grain(o, run, reference) && good;
      }
      if (run.psim) {
        const bool same = run.worst < 1e-9;
        std::printf("\nPSIM transport: %zu pipelines, every node's statistics %s the shared-memory layer's (largest "
                    "relative difference %.1e)\n",
                    run.compared, same ? "equal" : "DIFFER FROM", run.worst);
        good = good && same;
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
