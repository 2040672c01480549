#pragma once
// Speed-up and efficiency bounds implied by a program's average parallelism A (Eager, Zahorjan
// and Lazowska, "Speedup Versus Efficiency in Parallel Systems", 1989). A is the program's
// total work divided by the length of its longest path (its speed-up on unboundedly many
// processors); on n processors, under any work-conserving scheduler,
//
//   nA/(n+A-1) <= S(n) <= min(n, A)        A/(n+A-1) <= E(n) = S(n)/n <= min(1, A/n)
//
// The lower bounds assume the overheads are fixed (independent of n and of the schedule) and n
// dedicated processors; on a machine with fewer cores than n, or shared with other work, a
// measured speed-up may fall below them. All functions raise UsageError unless n >= 1, A >= 1.

namespace presto::instrument {

struct Bounds {
  double speedup_lower = 0;     // nA/(n+A-1)
  double speedup_upper = 0;     // min(n, A)
  double efficiency_lower = 0;  // A/(n+A-1)
  double efficiency_upper = 0;  // min(1, A/n)
};

// The bounds for n processors and average parallelism A.
Bounds bounds(double n, double average_parallelism);

}  // namespace presto::instrument
