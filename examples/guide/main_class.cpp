// Guide, chapter 1: PRESTO's 1988 program shape, presto::Main.
// init() runs single-threaded and fills in `config`; main() is the first thread; done() runs
// single-threaded again after the system halted, and its result is the program's.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <presto/presto.hpp>

class SumOfSquares : public presto::Main {
 public:
  using Main::Main;

 protected:
  int init() override {
    // Like PRESTO's Main::init(): choose the processors before the system exists.
    config.processors = 2;
    config.name = "squares";
    n_ = argc() > 1 ? std::atol(argv()[1]) : 1000;
    if (n_ <= 0) {
      std::fprintf(stderr, "usage: %s [n > 0]\n", argv()[0]);
      return 2;  // non-zero: run() returns it at once, main() never runs
    }
    return 0;
  }

  int main() override {
    // One thread per block of 100 numbers.
    std::vector<presto::JoinHandle<long>> parts;
    for (long lo = 1; lo <= n_; lo += 100) {
      long hi = std::min(n_, lo + 99);
      parts.push_back(presto::fork([lo, hi] {
        long s = 0;
        for (long i = lo; i <= hi; ++i) s += i * i;
        return s;
      }));
    }
    for (auto& p : parts) sum_ += p.join();
    threads_ = parts.size();
    return 0;
  }

  int done(int status) override {
    // Single-threaded again: the processors have stopped.
    const long expected = n_ * (n_ + 1) * (2 * n_ + 1) / 6;
    std::printf("sum of squares 1..%ld = %ld (%zu threads on %zu processors); expected %ld\n", n_, sum_, threads_,
                runtime().processors(), expected);
    return status != 0 ? status : (sum_ == expected ? 0 : 1);
  }

 private:
  long n_ = 0;
  long sum_ = 0;
  std::size_t threads_ = 0;
};

int main(int argc, char** argv) { return SumOfSquares{argc, argv}.run(); }
