#pragma once
// The matrix product of Figures 2 and 3 (matmul.cpp): C = A x B for n x n doubles, computed a
// contiguous run of elements of C at a time by one of two kernels:
//   dot - B kept transposed, each element one contiguous dot product (the paper's program)
//   tight - what a user tuning each case writes: a run of a row by the i-k-j loop
//         (C[i][j] += A[i][k] * B[k][j] over k, then j: vectorized along the row), a lone
//         element by a dot product with B transposed and four independent sums
// The kernels are compiled on their own at -O3, as a user tuning them would build them
// (meson.build): at the suite's -O2, GCC 12 leaves the i-k-j loop scalar (its cheap cost
// model does not version a loop for aliasing), and that loop then took three times as long as
// the same loop vectorized, 5.9 against 1.95 ms for a whole 200 x 200 product on one core of
// the 2-core AMD EPYC VM (2026-12-02): a slow baseline that flattered Figure 3's ratio.
// The matrices hold small integers, so every order of summation gives the same C to the bit
// and one check serves both kernels.

#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace presto::bench {

class Matmul {
 public:
  enum class Kernel { dot, tight };

  explicit Matmul(std::size_t n, Kernel kernel = Kernel::dot);
  std::size_t elements() const noexcept { return n_ * n_; }
  // Computes elements [first, last) of C.
  void compute(std::size_t first, std::size_t last) noexcept;
  // Part t of T.
  void part(std::size_t t, std::size_t parts) noexcept { compute(elements() * t / parts, elements() * (t + 1) / parts); }
  // Clears C, runs `multiply`, and checks C against a sequential computation; the nanoseconds
  // `multiply` took, the clearing and the check left out (they would add the same 28-30 us to
  // every 200 x 200 product, a constant that flattered the tight kernel's Figure 3 ratio by
  // about 2.5%).
  template <class F>
  double checked(F&& multiply) {
    clear();
    const auto t0 = std::chrono::steady_clock::now();
    multiply();
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    if (!correct()) throw std::runtime_error("matmul: wrong product");
    return ns;
  }

 private:
  void compute_dot(std::size_t first, std::size_t last) noexcept;
  void compute_tight(std::size_t first, std::size_t last) noexcept;
  void clear();
  bool correct();

  std::size_t n_;
  Kernel kernel_;
  std::vector<double> a_, b_, bt_, c_, expected_;
};

}  // namespace presto::bench
