// Lcs: the length of the longest common subsequence of two strings, by the Wagner-Fischer
// table A[i][j] = A[i-1][j-1] + 1 if a_i = b_j, else max(A[i][j-1], A[i-1][j]) (the paper's
// "longest common substring"). As a LatticeProblem its tasks are the block x block squares
// of the table (the paper's supertasks; block 1: one task per cell). pipeline_locks is the
// paper's LCS pipeline, with column locks.

#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include <presto/presto.hpp>

#include "lattice.hpp"
#include "strategies.hpp"

namespace presto::apps::dynprog {

// `length` letters from {a, b, c}, the same for the same seed.
inline std::string random_string(std::size_t length, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::string s(length, 'a');
  for (char& c : s) c = static_cast<char>('a' + random() % 3);
  return s;
}

class Lcs {
 public:
  // a and b non-empty, block >= 1 (std::invalid_argument otherwise).
  Lcs(std::string a, std::string b, std::size_t block)
      : a_(std::move(a)), b_(std::move(b)), width_(b_.size() + 1), block_(block),
        table_((a_.size() + 1) * width_, 0),
        tasks_({blocks(b_.size(), block), blocks(a_.size(), block)}) {}

  const Lattice& tasks() const { return tasks_; }
  std::size_t rows() const { return a_.size(); }
  std::size_t columns() const { return b_.size(); }

  // Task t: the cells of its square, row by row.
  void solve(std::size_t t) {
    const std::size_t i0 = tasks_.coordinate(t, 1) * block_ + 1, j0 = tasks_.coordinate(t, 0) * block_ + 1;
    const std::size_t i1 = std::min(i0 + block_, a_.size() + 1), j1 = std::min(j0 + block_, b_.size() + 1);
    for (std::size_t i = i0; i < i1; ++i) fill(i, j0, j1);
  }

  // Cells (i, j) for j in [first, last): row i >= 1, 1 <= first <= last <= columns() + 1.
  void fill(std::size_t i, std::size_t first, std::size_t last) {
    std::int32_t* row = &table_[i * width_];
    const std::int32_t* above = row - width_;
    const char ai = a_[i - 1];
    for (std::size_t j = first; j < last; ++j) {
      row[j] = ai == b_[j - 1] ? above[j - 1] + 1 : std::max(row[j - 1], above[j]);
    }
  }

  // The good sequential program: the table row by row.
  void solve_sequentially() {
    for (std::size_t i = 1; i <= a_.size(); ++i) fill(i, 1, b_.size() + 1);
  }

  std::int32_t length() const { return table_.back(); }
  const std::vector<std::int32_t>& table() const { return table_; }

 private:
  static std::size_t blocks(std::size_t cells, std::size_t block) {
    if (cells == 0 || block == 0) throw std::invalid_argument("LCS needs non-empty strings and a positive block");
    return (cells + block - 1) / block;
  }

  std::string a_, b_;
  std::size_t width_, block_;
  std::vector<std::int32_t> table_;  // (rows + 1) x (columns + 1); row 0 and column 0 stay 0
  Lattice tasks_;                    // dimension 0: column blocks, 1: row blocks
};

// The paper's LCS Pipeline: each worker takes the next row and walks it in `workers` column
// groups (so the workers run n/p columns apart), holding the group's Lock while it fills it;
// it takes the next group's lock before giving up the current one, and the first group's
// while it still holds the row counter's, so the rows pass through every group in order:
// row i fills a group only after row i - 1 has left it.
inline Costs pipeline_locks(Lcs& lcs, std::size_t workers) {
  const std::size_t groups = std::min(workers, lcs.columns());
  std::deque<presto::Lock> column;
  for (std::size_t g = 0; g < groups; ++g) column.emplace_back("LCS column group");
  presto::Lock rows("LCS row counter");
  std::size_t next_row = 1;  // guarded by rows
  return run_workers(workers, [&](std::size_t, Costs& costs) {
    for (;;) {
      lock_counted(rows, costs);
      const std::size_t i = next_row++;
      if (i > lcs.rows()) {
        rows.unlock();
        return;
      }
      lock_counted(column[0], costs);
      rows.unlock();
      for (std::size_t g = 0; g < groups; ++g) {
        lcs.fill(i, 1 + lcs.columns() * g / groups, 1 + lcs.columns() * (g + 1) / groups);
        if (g + 1 < groups) lock_counted(column[g + 1], costs);
        column[g].unlock();
      }
      ++costs.evaluations;
    }
  });
}

}  // namespace presto::apps::dynprog
