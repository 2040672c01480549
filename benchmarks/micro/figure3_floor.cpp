// figure3_floor: what Figure 3's one-thread-per-element product could cost at best on this
// machine, with no threads at all. It measures the design proposed in docs/design/lazy-forks.md
// stripped to its bones, so that its figures bound what that design can reach:
//   - a fork writes a record (a part's index and a state word) into the forker's queue, a
//     spinlocked deque, and nothing else;
//   - the joiner joins the records in fork order: one still queued it claims and calls on its
//     own stack; one claimed by the other processor it waits for, running records from its
//     own queue meanwhile (what a processor does while its thread is blocked);
//   - the other processor (one OS thread) steals half of the forker's queue at a time, from
//     its oldest end (today's LocalQueuePool) or its newest, and calls each record it claims.
// The kernel is presto_bench's matmul200 (the paper's): each part computes its elements of
// C = A x B, 200 x 200, as dot products with B transposed. Prints, for each steal end, the
// least and the median of 31 products with 2 parts and with 40,000 (one per element), and
// their ratio, Figure 3's target (<= 1.15x).
//
// Usage: figure3_floor [--quick]  (--quick: 5 products a point, for CI's smoke run)

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kN = 200;
constexpr std::size_t kMaxParts = kN * kN;  // one part per element

class Product {
 public:
  Product() : a_(kN * kN), bt_(kN * kN), c_(kN * kN) {
    for (std::size_t i = 0; i < kN * kN; ++i) {
      a_[i] = static_cast<double>(i % 7);
      bt_[i] = static_cast<double>(i % 5);
    }
  }
  void part(std::size_t t, std::size_t parts) {
    for (std::size_t e = kN * kN * t / parts, last = kN * kN * (t + 1) / parts; e < last; ++e) {
      const double* row = &a_[(e / kN) * kN];
      const double* col = &bt_[(e % kN) * kN];
      double sum = 0;
      for (std::size_t k = 0; k < kN; ++k) sum += row[k] * col[k];
      c_[e] = sum;
    }
  }
  double checksum() const {
    double s = 0;
    for (double x : c_) s += x;
    return s;
  }

 private:
  std::vector<double> a_, bt_, c_;
};

class TasLock {
 public:
  void lock() noexcept {
    while (held_.exchange(true, std::memory_order_acquire)) {
      while (held_.load(std::memory_order_relaxed)) __builtin_ia32_pause();
    }
  }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

enum : int { kQueued, kClaimed, kEnded };

struct Record {  // a fork's closure (part t of parts) and its state
  std::size_t part = 0;
  std::size_t parts = 0;
  std::atomic<int> state{kQueued};
};

class Floor {
 public:
  Floor(Product& product, bool steal_newest) : product_(product), steal_newest_(steal_newest), thief_([this] { steal(); }) {}
  ~Floor() {
    stop_.store(true, std::memory_order_relaxed);
    thief_.join();
  }

  // One product in `parts` (at most kMaxParts) records; milliseconds.
  double multiply(std::size_t parts) {
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t t = 0; t < parts; ++t) {
      Record& r = records_[t];
      r.part = t;
      r.parts = parts;
      r.state.store(kQueued, std::memory_order_relaxed);
      std::lock_guard hold(lock_);
      queue_.push_back(&r);
      size_.store(queue_.size(), std::memory_order_relaxed);
    }
    for (std::size_t t = 0; t < parts; ++t) {
      Record& r = records_[t];
      run(r);
      while (r.state.load(std::memory_order_acquire) != kEnded) {
        if (Record* other = pop_front()) {
          run(*other);
        } else {
          __builtin_ia32_pause();
        }
      }
    }
    std::lock_guard hold(lock_);  // records joined inline are still queued: drop them
    queue_.clear();
    size_.store(0, std::memory_order_relaxed);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }

 private:
  void run(Record& r) {  // unless the other side claimed it first
    int queued = kQueued;
    if (!r.state.compare_exchange_strong(queued, kClaimed, std::memory_order_acq_rel)) return;
    product_.part(r.part, r.parts);
    r.state.store(kEnded, std::memory_order_release);
  }
  Record* pop_front() {
    if (size_.load(std::memory_order_relaxed) == 0) return nullptr;
    std::lock_guard hold(lock_);
    if (queue_.empty()) return nullptr;
    Record* r = queue_.front();
    queue_.pop_front();
    size_.store(queue_.size(), std::memory_order_relaxed);
    return r;
  }
  void steal() {
    std::vector<Record*> batch;
    while (!stop_.load(std::memory_order_relaxed)) {
      if (size_.load(std::memory_order_relaxed) == 0) {
        __builtin_ia32_pause();
        continue;
      }
      batch.clear();
      {
        std::lock_guard hold(lock_);
        for (std::size_t k = (queue_.size() + 1) / 2; k > 0; --k) {
          if (steal_newest_) {
            batch.push_back(queue_.back());
            queue_.pop_back();
          } else {
            batch.push_back(queue_.front());
            queue_.pop_front();
          }
        }
        size_.store(queue_.size(), std::memory_order_relaxed);
      }
      for (Record* r : batch) run(*r);
    }
  }
  Product& product_;
  const bool steal_newest_;
  std::vector<Record> records_ = std::vector<Record>(kMaxParts);
  TasLock lock_;
  std::deque<Record*> queue_;
  alignas(64) std::atomic<std::size_t> size_{0};
  std::atomic<bool> stop_{false};
  std::thread thief_;
};

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (argc > 1 && !quick) {
    std::fprintf(stderr, "usage: figure3_floor [--quick]\n");
    return 2;
  }
  const int products = quick ? 5 : 31;
  Product product;
  product.part(0, 1);
  const double expected = product.checksum();
  std::printf("%-14s %22s %26s %8s\n", "thief steals", "2 parts: least/median", "40,000 parts: least/median", "ratio");
  for (bool newest : {false, true}) {
    Floor floor{product, newest};
    double median[2] = {0, 0};
    double least[2] = {0, 0};
    int point = 0;
    for (std::size_t parts : {std::size_t{2}, std::size_t{40'000}}) {
      std::vector<double> ms;
      for (int i = 0; i < products; ++i) {
        ms.push_back(floor.multiply(parts));
        if (product.checksum() != expected) throw std::runtime_error("figure3_floor: wrong product");
      }
      std::sort(ms.begin(), ms.end());
      least[point] = ms.front();
      median[point] = ms[ms.size() / 2];
      ++point;
    }
    std::printf("%-14s %10.2f / %6.2f ms %14.2f / %6.2f ms %7.2fx\n", newest ? "newest half" : "oldest half", least[0],
                median[0], least[1], median[1], median[1] / median[0]);
  }
}
