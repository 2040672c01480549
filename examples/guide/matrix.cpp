// Guide, chapter 2: a thread per matrix element (PRESTO's Matrix::multiply).
// Threads are cheap enough that the problem decides how many there are: a stack is bound
// only when a thread is first dispatched and goes back to a per-processor cache when it
// finishes, and control blocks made by fork are recycled.
#include <cstdio>
#include <vector>

#include <presto/presto.hpp>

namespace {

class Matrix {
 public:
  Matrix(int rows, int cols) : rows_(rows), cols_(cols), elems_(static_cast<std::size_t>(rows * cols)) {}
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  long& at(int i, int j) { return elems_[static_cast<std::size_t>(i * cols_ + j)]; }
  long at(int i, int j) const { return elems_[static_cast<std::size_t>(i * cols_ + j)]; }

  // Synchronous invocation, parallel execution: the caller cannot tell that every element
  // of the product is computed by its own thread.
  Matrix multiply(const Matrix& m, presto::RuntimeStats* during = nullptr) const {
    Matrix p(rows_, m.cols());
    std::vector<presto::JoinHandle<void>> workers;
    workers.reserve(static_cast<std::size_t>(rows_ * m.cols()));
    for (int i = 0; i < rows_; ++i) {
      for (int j = 0; j < m.cols(); ++j) {
        workers.push_back(presto::fork(&Matrix::dot_product, this, &p.at(i, j), std::cref(m), i, j));
      }
    }
    if (during != nullptr) *during = presto::this_thread::runtime()->stats();
    for (auto& w : workers) w.join();  // wait here until all threads terminate
    return p;
  }

 private:
  // The dot product of row i of this and column j of m, stored in *el.
  void dot_product(long* el, const Matrix& m, int i, int j) const {
    long s = 0;
    for (int k = 0; k < cols_; ++k) s += at(i, k) * m.at(k, j);
    *el = s;
  }

  int rows_, cols_;
  std::vector<long> elems_;
};

}  // namespace

int main() {
  const int n = 40;
  presto::Runtime rt{{.processors = 2}};
  presto::RuntimeStats during{};
  long trace = rt.run([&] {
    Matrix a(n, n), b(n, n);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        a.at(i, j) = i + j;
        b.at(i, j) = i == j ? 2 : 0;  // 2 * identity
      }
    }
    Matrix p = a.multiply(b, &during);
    p = p.multiply(b);  // a second product reuses what the first left (control blocks, stacks)
    long t = 0;
    for (int i = 0; i < n; ++i) t += p.at(i, i);
    return t;
  });
  presto::RuntimeStats after = rt.stats();
  // trace(a * 4I) = 4 * sum of 2i = 4 * n(n-1)
  std::printf("trace of a*b*b = %ld (expected %d)\n", trace, 4 * n * (n - 1));
  std::printf("%d threads per product; while the first product's threads were being forked:\n", n * n);
  std::printf("  %zu live threads, %zu stacks in use\n", during.live_threads, during.stacks_in_use);
  std::printf("after both products: %llu control blocks created, %llu recycled, %llu forks never needed one, "
              "%zu stacks cached\n",
              static_cast<unsigned long long>(after.threads_created),
              static_cast<unsigned long long>(after.threads_recycled),
              static_cast<unsigned long long>(after.threadless_forks), after.stacks_cached);
  // Stacks belong to started threads only: far fewer than the threads that exist.
  const bool few_stacks = during.stacks_in_use * 10 < static_cast<std::size_t>(n * n);
  return trace == 4L * n * (n - 1) && few_stacks && after.live_threads == 0 ? 0 : 1;
}
