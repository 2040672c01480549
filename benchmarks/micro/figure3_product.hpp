#pragma once
// Figure 3's product for the programs that take it apart (figure3_floor, figure3_split):
// C = A x B, 200 x 200 doubles, each element of C the paper's kernel, a dot product with B
// kept transposed (presto_bench's matmul200 computes the same). The matrices hold small
// integers, so every order of computing the elements gives the same C to the bit.

#include <algorithm>
#include <cstddef>
#include <vector>

namespace presto::bench {

class Figure3Product {
 public:
  static constexpr std::size_t kN = 200;
  static constexpr std::size_t kElements = kN * kN;

  Figure3Product() : a_(kElements), bt_(kElements), c_(kElements) {
    for (std::size_t i = 0; i < kElements; ++i) {
      a_[i] = static_cast<double>(i % 7);
      bt_[i] = static_cast<double>(i % 5);
    }
  }
  // Element e of C.
  void element(std::size_t e) noexcept {
    const double* row = &a_[(e / kN) * kN];
    const double* col = &bt_[(e % kN) * kN];
    double sum = 0;
    for (std::size_t k = 0; k < kN; ++k) sum += row[k] * col[k];
    c_[e] = sum;
  }
  // Part t of `parts`: a contiguous run of elements.
  void part(std::size_t t, std::size_t parts) noexcept {
    for (std::size_t e = kElements * t / parts, last = kElements * (t + 1) / parts; e < last; ++e) element(e);
  }
  void clear() { std::fill(c_.begin(), c_.end(), -1.0); }
  const std::vector<double>& c() const noexcept { return c_; }
  double checksum() const {
    double s = 0;
    for (double x : c_) s += x;
    return s;
  }

 private:
  std::vector<double> a_, bt_, c_;
};

}  // namespace presto::bench
