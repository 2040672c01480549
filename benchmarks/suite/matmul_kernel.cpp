// The kernels of matmul_kernel.hpp, in a file of their own so that meson.build can compile
// them as a user tuning them would (-O3).

#include "matmul_kernel.hpp"

#include <algorithm>

namespace presto::bench {

Matmul::Matmul(std::size_t n, Kernel kernel) : n_(n), kernel_(kernel), a_(n * n), b_(n * n), bt_(n * n), c_(n * n) {
  for (std::size_t i = 0; i < n * n; ++i) {
    a_[i] = static_cast<double>(i % 7);
    bt_[i] = static_cast<double>(i % 5);
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) b_[j * n + i] = bt_[i * n + j];
  }
}

void Matmul::compute(std::size_t first, std::size_t last) noexcept {
  if (kernel_ == Kernel::tight) {
    compute_tight(first, last);
  } else {
    compute_dot(first, last);
  }
}

void Matmul::compute_dot(std::size_t first, std::size_t last) noexcept {
  for (std::size_t e = first; e < last; ++e) {
    const double* row = &a_[(e / n_) * n_];
    const double* col = &bt_[(e % n_) * n_];
    double sum = 0;
    for (std::size_t k = 0; k < n_; ++k) sum += row[k] * col[k];
    c_[e] = sum;
  }
}

void Matmul::compute_tight(std::size_t first, std::size_t last) noexcept {
  for (std::size_t e = first; e < last;) {
    const std::size_t i = e / n_;
    const std::size_t j0 = e % n_;
    const std::size_t j1 = std::min(n_, j0 + (last - e));
    double* c = &c_[i * n_];
    if (j1 - j0 == 1) {  // a lone element: a dot product, four sums in flight
      const double* row = &a_[i * n_];
      const double* col = &bt_[j0 * n_];
      double s[4] = {0, 0, 0, 0};
      std::size_t k = 0;
      for (; k + 4 <= n_; k += 4) {
        for (std::size_t q = 0; q < 4; ++q) s[q] += row[k + q] * col[k + q];
      }
      for (; k < n_; ++k) s[0] += row[k] * col[k];
      c[j0] = (s[0] + s[1]) + (s[2] + s[3]);
      ++e;
      continue;
    }
    std::fill(c + j0, c + j1, 0.0);
    for (std::size_t k = 0; k < n_; ++k) {
      const double a = a_[i * n_ + k];
      const double* b = &b_[k * n_];
      for (std::size_t j = j0; j < j1; ++j) c[j] += a * b[j];
    }
    e += j1 - j0;
  }
}

void Matmul::clear() { std::fill(c_.begin(), c_.end(), -1.0); }

bool Matmul::correct() {
  if (expected_.empty()) {
    std::vector<double> got = c_;
    compute(0, elements());
    expected_ = c_;
    c_ = got;
  }
  return c_ == expected_;
}

}  // namespace presto::bench
