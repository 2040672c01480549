// figure3_floor: what Figure 3's one-thread-per-element product could cost at best on this
// machine, with no threads at all. It measures the design proposed in docs/design/lazy-forks.md
// stripped to its bones, so that its figures bound what that design can reach:
//   - a fork writes a record (its part of the product and a state word) into the forker's
//     queue, and nothing else;
//   - the joiner joins the records in fork order: one still queued it claims and calls on its
//     own stack; one claimed by the other processor it waits for, running records from its
//     own queue meanwhile (what a processor does while its thread is blocked);
//   - the other processor (one OS thread) steals half of what is queued at a time and calls
//     each record it claims.
// Three queues: a spinlocked deque, as a processor's ready queue is today, whose thief takes
// the oldest half, or the newest half, or the newest half but at most 128 records a steal (as
// LocalQueuePool's thieves take records: this design's floor); and an array with no lock, whose
// thief takes the newer half of what it has not looked at yet. Then a design that makes no
// record for most forks: the array, but a fork finding 1,024 records queued and not taken runs
// its part at once, as a plain call (which a thread's fork may not do: a part that blocked
// would stop its forker) or on a stack of its own reached by a context switch (which it may).
// Two kernels, as presto_bench's Figure 3 targets have:
//   paper - presto_bench's matmul200 (the paper's): each part computes its elements of
//           C = A x B, 200 x 200, as dot products with B transposed;
//   tight - presto_bench's tight kernel (suite/matmul_kernel.hpp, the same object code): a
//           part's run of a row by the i-k-j loop, a lone element by a dot product with four
//           sums. With it, the floor also calls each element's kernel in turn on two OS threads,
//           with no records at all: the baseline of Figure 3's third target.
// Prints, for each kernel and queue, the least and the median of 31 products with 2 parts and
// with 40,000 (one per element), each product checked, and the medians' ratio (Figure 3's
// targets are <= 1.15x), with the host's cross-core round trip taken just before that queue's
// products (support/harness.hpp, core_round_trip): on a host whose two CPUs are sometimes far
// apart, a queue with a lock the two OS threads share moves with it. Each row is printed twice:
// as a table row, and as a JSON line that benchmarks/run.py reads.
// A record takes one cache line. --record-bytes 192 or 448 makes it as large as three lines or
// as a thread's control block today (7 lines), each line written at the fork and at the run:
// what the size of a fork's state costs, apart from the instructions that handle it.
//
// Usage: figure3_floor [--quick] [--record-bytes 64|192|448] [--kernel paper|tight|both]
//   (--quick: 5 products a point, for CI's smoke run; the default record is 64 bytes, the
//   default kernel both)

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>

#include <boost/context/detail/fcontext.hpp>

#include "../suite/matmul_kernel.hpp"
#include "../support/harness.hpp"
#include "figure3_product.hpp"

namespace {

using presto::bench::Matmul;
using Product = presto::bench::Figure3Product;
constexpr std::size_t kMaxParts = Product::kElements;  // one part per element
constexpr std::size_t kStealLimit = 128;  // what a steal takes at most in PRESTO (LocalQueuePool's, private)

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

// A fork's closure (part t of parts) and its state, in a record of `Bytes` bytes. Beyond the
// first line, the record stands for a thread's control block: each further line is written at
// the fork and at the run, and the join reads the last one and the middle one.
template <std::size_t Bytes>
struct alignas(64) Record {
  static_assert(Bytes % 64 == 0 && Bytes >= 64);
  std::size_t part = 0;
  std::size_t parts = 0;
  std::atomic<int> state{kQueued};
  std::array<unsigned char, Bytes - 64> rest{};

  void publish(std::size_t t, std::size_t n) noexcept {  // the fork
    part = t;
    parts = n;
    for (std::size_t l = 0; l < rest.size(); l += 64) rest[l] = static_cast<unsigned char>(t);
    state.store(kQueued, std::memory_order_release);
  }
  template <class P>
  void run(P& product) {  // unless the other side claimed it first
    int queued = kQueued;
    if (!state.compare_exchange_strong(queued, kClaimed, std::memory_order_acq_rel)) return;
    for (std::size_t l = 0; l < rest.size(); l += 64) ++rest[l];
    product.part(part, parts);
    state.store(kEnded, std::memory_order_release);
  }
  bool ended() const noexcept {
    if (state.load(std::memory_order_acquire) != kEnded) return false;
    if constexpr (Bytes > 64) {
      const volatile unsigned char* line = rest.data();
      const unsigned char read = static_cast<unsigned char>(line[rest.size() / 2] + line[rest.size() - 1]);
      asm volatile("" : : "r"(read));
    }
    return true;
  }
};

// The join of records[i], in an array whose records [i + 1, end) were forked after it: calls it
// if it is still queued; while the other side runs it, calls the later ones still queued, as a
// processor does while its thread waits.
template <std::size_t Bytes, class P>
void join_in_array(std::vector<Record<Bytes>>& records, std::size_t i, std::size_t end, P& product) {
  Record<Bytes>& r = records[i];
  r.run(product);
  for (std::size_t k = i + 1; !r.ended();) {
    if (k < end) {
      records[k++].run(product);
    } else {
      __builtin_ia32_pause();
    }
  }
}

// Pins the calling OS thread to the CPU of `processor` (0 or 1) of the two the floor's OS
// threads stand for: the first two this process may use (none where only one is). As PRESTO's
// processors are pinned: unpinned, a 2-part product sometimes took twice its time, as long as
// one thread computing both parts. The CPUs are read once, before the first thread pins
// itself and so narrows what the threads it starts may use.
cpu_set_t process_cpus;  // the CPUs this process may use, read by main before it pins itself

void pin(std::size_t processor) {
  static const std::vector<int> cpus = presto::bench::allowed_cpus(2);
  if (cpus.size() == 2) presto::bench::pin_to_cpu(cpus[processor]);
}

// The other processor: an OS thread on the second CPU that calls `work` (a thief's steal) over
// and over until it is destroyed. Its owner declares it last, so that it stops before anything
// it uses is destroyed.
class Thief {
 public:
  explicit Thief(std::function<void()> work)
      : thread_([this, work = std::move(work)] {
          pin(1);
          while (!stop_.load(std::memory_order_relaxed)) work();
        }) {}
  ~Thief() {
    stop_.store(true, std::memory_order_relaxed);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

template <class F>
double milliseconds(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The records' queue is a spinlocked deque, as a processor's ready queue is today. A steal takes
// half of what is queued, but at most `most` records.
template <std::size_t Bytes, class P>
class DequeFloor {
 public:
  DequeFloor(P& product, bool steal_newest, std::size_t most = kMaxParts)
      : product_(product), steal_newest_(steal_newest), most_(most) {}

  // One product in `parts` (at most kMaxParts) records; milliseconds.
  double multiply(std::size_t parts) {
    return milliseconds([&] {
      for (std::size_t t = 0; t < parts; ++t) {
        records_[t].publish(t, parts);
        std::lock_guard hold(lock_);
        queue_.push_back(&records_[t]);
        size_.store(queue_.size(), std::memory_order_relaxed);
      }
      for (std::size_t t = 0; t < parts; ++t) {
        Record<Bytes>& r = records_[t];
        r.run(product_);
        while (!r.ended()) {
          if (Record<Bytes>* other = pop_front()) {
            other->run(product_);
          } else {
            __builtin_ia32_pause();
          }
        }
      }
      std::lock_guard hold(lock_);  // records joined inline are still queued: drop them
      queue_.clear();
      size_.store(0, std::memory_order_relaxed);
    });
  }

 private:
  Record<Bytes>* pop_front() {
    if (size_.load(std::memory_order_relaxed) == 0) return nullptr;
    std::lock_guard hold(lock_);
    if (queue_.empty()) return nullptr;
    Record<Bytes>* r = queue_.front();
    queue_.pop_front();
    size_.store(queue_.size(), std::memory_order_relaxed);
    return r;
  }
  void steal() {
    if (size_.load(std::memory_order_relaxed) == 0) {
      __builtin_ia32_pause();
      return;
    }
    batch_.clear();
    {
      std::lock_guard hold(lock_);
      for (std::size_t k = std::min((queue_.size() + 1) / 2, most_); k > 0; --k) {
        if (steal_newest_) {
          batch_.push_back(queue_.back());
          queue_.pop_back();
        } else {
          batch_.push_back(queue_.front());
          queue_.pop_front();
        }
      }
      size_.store(queue_.size(), std::memory_order_relaxed);
    }
    for (Record<Bytes>* r : batch_) r->run(product_);
  }

  P& product_;
  const bool steal_newest_;
  const std::size_t most_;
  std::vector<Record<Bytes>> records_ = std::vector<Record<Bytes>>(kMaxParts);
  TasLock lock_;
  std::deque<Record<Bytes>*> queue_;
  alignas(64) std::atomic<std::size_t> size_{0};
  std::vector<Record<Bytes>*> batch_;  // the thief's
  Thief thief_{[this] { steal(); }};
};

// No lock at all: the records lie in an array in fork order. The forker publishes how many
// there are, the joiner how far it has got. The thief takes the newer half of the records it
// has not looked at, a run of indices at a time, and claims each by its state word, as the
// joiner does.
template <std::size_t Bytes, class P>
class ArrayFloor {
 public:
  explicit ArrayFloor(P& product) : product_(product) {}

  double multiply(std::size_t parts) {
    return milliseconds([&] {
      for (std::size_t t = 0; t < parts; ++t) {
        records_[t].publish(t, parts);
        count_.store(t + 1, std::memory_order_release);
      }
      for (std::size_t t = 0; t < parts; ++t) {
        front_.store(t, std::memory_order_relaxed);
        join_in_array(records_, t, parts, product_);
      }
      front_.store(0, std::memory_order_relaxed);
      count_.store(0, std::memory_order_relaxed);
      product_number_.fetch_add(1, std::memory_order_release);
    });
  }

 private:
  // A record the thief claims was published (its state set to queued after its fields), so a
  // stale view of the indices costs only failed claims.
  void steal() {
    if (const std::uint64_t n = product_number_.load(std::memory_order_acquire); n != seen_) {
      seen_ = n;
      lo_ = hi_ = 0;
    }
    const std::size_t count = count_.load(std::memory_order_acquire);
    const std::size_t front = front_.load(std::memory_order_relaxed);
    std::size_t from = 0, to = 0;
    if (count > hi_ && count > front) {  // new records: the newer half of them
      from = lo_ == hi_ ? front + (count - front) / 2 : hi_ + (count - hi_) / 2;
      if (lo_ == hi_) lo_ = from;
      to = hi_ = count;
    } else if (lo_ > front + 1) {  // the forker is done: the newer half of what lies below
      from = front + (lo_ - front + 1) / 2;
      to = lo_;
      lo_ = from;
    }
    if (from == to) __builtin_ia32_pause();
    for (std::size_t i = from; i < to; ++i) records_[i].run(product_);
  }

  P& product_;
  std::vector<Record<Bytes>> records_ = std::vector<Record<Bytes>>(kMaxParts);
  alignas(64) std::atomic<std::size_t> count_{0};
  alignas(64) std::atomic<std::size_t> front_{0};
  alignas(64) std::atomic<std::uint64_t> product_number_{0};
  std::size_t lo_ = 0, hi_ = 0;  // the thief's: the span of indices looked at in this product
  std::uint64_t seen_ = 0;       // the thief's: the product those are of
  Thief thief_{[this] { steal(); }};
};

// A design with no record for most forks (docs/design/lazy-forks.md, "A fork that runs its part
// at once"): a fork runs its part at once while the forker's queue holds kBound records nobody
// has taken, and queues a record otherwise. The records lie in an array, as ArrayFloor's; the
// thief takes the older half of the records it has not taken at a time (the forker's records
// are the newest, and it needs none of them until it joins). A part run at once is ended when
// its fork returns: its join reads only the forker's note of it (in a runtime, the join
// handle). With `Switch`, such a part runs on a stack of its own, reached by a Boost.Context
// switch and left by another, as a fork that keeps a thread's meaning would have to (a part
// that blocked could then wait there while its forker goes on).
template <std::size_t Bytes, class P, bool Switch>
class EagerFloor {
 public:
  // Past this many records queued and not taken, a fork runs its part at once. Of 64, 256, 1,024
  // and 4,096 (2026-12-05, two runs each), 1,024 was the best or within 3% of it with both
  // kernels, a call or a switch.
  static constexpr std::size_t kBound = 1024;

  explicit EagerFloor(P& product) : product_(product) {
    if constexpr (Switch) {
      child_ = boost::context::detail::make_fcontext(stack_.data() + stack_.size(), stack_.size(), &child_body);
    }
  }

  double multiply(std::size_t parts) {
    // The thief starts the product with nothing taken before the clock starts.
    const std::uint64_t product = product_number_.fetch_add(1, std::memory_order_release) + 1;
    while (started_.load(std::memory_order_acquire) != product) __builtin_ia32_pause();
    return milliseconds([&] {
      std::size_t count = 0;
      for (std::size_t t = 0; t < parts; ++t) {
        if (count - taken_.load(std::memory_order_relaxed) >= kBound) {
          run_now(t, parts);
          where_[t] = kRanNow;
          continue;
        }
        records_[count].publish(t, parts);
        where_[t] = count;
        count_.store(++count, std::memory_order_release);
      }
      for (std::size_t t = 0; t < parts; ++t) {
        if (where_[t] != kRanNow) join_in_array(records_, where_[t], count, product_);
      }
      count_.store(0, std::memory_order_relaxed);
      if (parts == kMaxParts) records_made_.push_back(count);
    });
  }

  // How many of a 40,000-part product's parts were records (the rest ran at once): the median.
  std::size_t records_made() {
    std::sort(records_made_.begin(), records_made_.end());
    return records_made_[records_made_.size() / 2];
  }

 private:
  static constexpr std::size_t kRanNow = ~std::size_t{0};
  struct Call {
    P* product;
    std::size_t part, parts;
  };

  void run_now(std::size_t t, std::size_t parts) {
    if constexpr (Switch) {
      Call call{&product_, t, parts};
      child_ = boost::context::detail::jump_fcontext(child_, &call).fctx;
    } else {
      product_.part(t, parts);
    }
  }
  static void child_body(boost::context::detail::transfer_t from) {
    for (;;) {
      const Call* call = static_cast<const Call*>(from.data);
      call->product->part(call->part, call->parts);
      from = boost::context::detail::jump_fcontext(from.fctx, nullptr);
    }
  }

  void steal() {
    const std::uint64_t n = product_number_.load(std::memory_order_acquire);
    if (n != started_.load(std::memory_order_relaxed)) {  // only this thread writes started_
      taken_.store(0, std::memory_order_relaxed);
      started_.store(n, std::memory_order_release);
      return;
    }
    const std::size_t count = count_.load(std::memory_order_acquire);
    const std::size_t taken = taken_.load(std::memory_order_relaxed);  // only this thread writes it
    if (count <= taken) {
      __builtin_ia32_pause();
      return;
    }
    const std::size_t to = taken + (count - taken + 1) / 2;
    taken_.store(to, std::memory_order_relaxed);
    for (std::size_t i = taken; i < to; ++i) records_[i].run(product_);
  }

  P& product_;
  std::vector<std::size_t> records_made_;  // one for each product
  std::vector<Record<Bytes>> records_ = std::vector<Record<Bytes>>(kMaxParts);
  std::vector<std::size_t> where_ = std::vector<std::size_t>(kMaxParts);  // each part's record, or kRanNow
  std::vector<char> stack_ = std::vector<char>(Switch ? 64 * 1024 : 0);
  boost::context::detail::fcontext_t child_ = nullptr;
  alignas(64) std::atomic<std::size_t> count_{0};
  alignas(64) std::atomic<std::size_t> taken_{0};
  alignas(64) std::atomic<std::uint64_t> product_number_{0};
  alignas(64) std::atomic<std::uint64_t> started_{0};
  Thief thief_{[this] { steal(); }};
};

// Figure 3's product with the paper's kernel, checked as Matmul::checked checks the tight one:
// C cleared before `multiply`, compared after it with the product computed once in one part.
class PaperProduct : public Product {
 public:
  PaperProduct() {
    part(0, 1);
    expected_ = checksum();
  }
  template <class F>
  void checked(F&& multiply) {
    clear();
    multiply();
    if (checksum() != expected_) throw std::runtime_error("figure3_floor: wrong product");
  }

 private:
  double expected_ = 0;
};

// The tight kernel's own floor: each element's kernel called in turn, no records, half the
// elements on the calling thread and half on a second OS thread, which spins between products
// (as the floors' thieves do) so that none of its start or wake-up is timed.
class KernelAlone {
 public:
  explicit KernelAlone(Matmul& m) : m_(m) {}

  // One product, each element's kernel a call of its own (`parts` is kMaxParts: the only split
  // it makes); milliseconds.
  double multiply(std::size_t parts) {
    if (parts != kMaxParts) throw std::logic_error("figure3_floor: the kernel alone runs one element a call");
    return milliseconds([&] {
      const std::uint64_t product = go_.fetch_add(1, std::memory_order_release) + 1;
      half(0);
      while (done_.load(std::memory_order_acquire) != product) __builtin_ia32_pause();
    });
  }

 private:
  void half(std::size_t h) noexcept {
    for (std::size_t e = kMaxParts * h / 2, last = kMaxParts * (h + 1) / 2; e < last; ++e) m_.compute(e, e + 1);
  }
  void second_half() noexcept {
    const std::uint64_t product = go_.load(std::memory_order_acquire);
    if (product == done_.load(std::memory_order_relaxed)) {  // only this thread writes done_
      __builtin_ia32_pause();
      return;
    }
    half(1);
    done_.store(product, std::memory_order_release);
  }

  Matmul& m_;
  alignas(64) std::atomic<std::uint64_t> go_{0};    // products started
  alignas(64) std::atomic<std::uint64_t> done_{0};  // products whose second half is done
  Thief other_{[this] { second_half(); }};
};

// Least and median of `products` products in `parts` parts, ms.
struct Times {
  double least = 0;
  double median = 0;
};
template <class Floor, class P>
Times measure_split(Floor& floor, P& product, int products, std::size_t parts) {
  std::vector<double> ms;
  for (int i = 0; i < products; ++i) {
    product.checked([&] { ms.push_back(floor.multiply(parts)); });
  }
  std::sort(ms.begin(), ms.end());
  return {ms.front(), ms[ms.size() / 2]};
}

// The host's cross-core round trip just now (ns; 0 where it cannot be measured). A locked
// queue's floor moves with it, the unlocked array's much less (docs/design/lazy-forks.md).
// The main thread is pinned to the first CPU meanwhile: it may use the process's CPUs again
// for the measure, and is pinned back after it.
double round_trip() {
  pthread_setaffinity_np(pthread_self(), sizeof process_cpus, &process_cpus);
  const auto r = presto::bench::core_round_trip("core_round_trip", 3, /*print=*/false);
  pin(0);
  return r ? r->median_ns : 0;
}

// One floor's row: 2 parts and 40,000, and the medians' ratio; with `alone` (the tight
// kernel's median with no records, ms), the 40,000 parts' median against it too; how many
// records a product of 40,000 parts made (the median, where the floor counts them); and the
// host's round trip `trip` taken just before the floor started.
template <class Floor, class P>
void measure(const char* kernel, const char* what, std::size_t bytes, Floor& floor, P& product, int products,
             double alone, double trip) {
  const Times two = measure_split(floor, product, products, 2);
  const Times all = measure_split(floor, product, products, kMaxParts);
  const double ratio = all.median / two.median;
  std::printf("%-58s %10.2f / %6.2f ms %14.2f / %6.2f ms %7.2fx", what, two.least, two.median, all.least,
              all.median, ratio);
  if (alone > 0) std::printf(" %10.2fx", all.median / alone);
  std::size_t records = kMaxParts;  // a record for each part, unless the floor says otherwise
  if constexpr (requires { floor.records_made(); }) records = floor.records_made();
  std::printf("  (%zu records; host round trip %.0f ns)\n", records, trip);
  // The same row for benchmarks/run.py, which prints it beside Figure 3's targets.
  std::printf("{\"floor\":\"%s\",\"kernel\":\"%s\",\"record_bytes\":%zu,\"least_ms\":[%.3f,%.3f],"
              "\"median_ms\":[%.3f,%.3f],\"ratio\":%.3f",
              what, kernel, bytes, two.least, all.least, two.median, all.median, ratio);
  if (alone > 0) std::printf(",\"alone_ms\":%.3f,\"ratio_to_alone\":%.3f", alone, all.median / alone);
  std::printf(",\"records\":%zu,\"round_trip_ns\":%.1f}\n", records, trip);
}

// One floor's row: the host's round trip first, then the floor, made of `product` and `args`
// (its thief starts with it, and would share the second CPU with the round trip's echo).
template <class Floor, class P, class... Args>
void measure_row(const char* kernel, const char* what, std::size_t bytes, P& product, int products, double alone,
                 Args... args) {
  const double trip = round_trip();
  Floor floor{product, args...};
  measure(kernel, what, bytes, floor, product, products, alone, trip);
}

template <std::size_t Bytes, class P>
void measure_queues(const char* kernel, P& product, int products, double alone) {
  measure_row<DequeFloor<Bytes, P>>(kernel, "deque, the oldest half", Bytes, product, products, alone, false);
  measure_row<DequeFloor<Bytes, P>>(kernel, "deque, the newest half", Bytes, product, products, alone, true);
  measure_row<DequeFloor<Bytes, P>>(kernel, "deque, the newest half, at most 128 a steal (as PRESTO's)", Bytes,
                                    product, products, alone, true, kStealLimit);
  measure_row<ArrayFloor<Bytes, P>>(kernel, "array, no lock, newer half", Bytes, product, products, alone);
  measure_row<EagerFloor<Bytes, P, false>>(kernel, "array; past 1,024 queued, a part run by a call", Bytes, product,
                                           products, alone);
  measure_row<EagerFloor<Bytes, P, true>>(kernel, "array; past 1,024 queued, a part run on a stack of its own",
                                          Bytes, product, products, alone);
}

void print_heading(const char* kernel, std::size_t bytes, const char* last_column) {
  std::printf("%s kernel, %zu-byte records\n", kernel, bytes);
  std::printf("%-58s %22s %26s %8s%s\n", "records' queue, thief takes", "2 parts: least/median",
              "40,000 parts: least/median", "ratio", last_column);
}

template <std::size_t Bytes>
void measure_all(bool paper, bool tight, int products) {
  if (paper) {
    PaperProduct product;
    print_heading("paper's", Bytes, "");
    measure_queues<Bytes>("paper", product, products, 0);
  }
  if (tight) {
    Matmul m{Product::kN, Matmul::Kernel::tight};
    KernelAlone alone{m};
    const double alone_ms = measure_split(alone, m, products, kMaxParts).median;
    std::printf("tight kernel, no records: each element's kernel in turn, on 2 OS threads: %.2f ms (median)\n",
                alone_ms);
    std::printf("{\"kernel_alone_ms\":%.3f,\"kernel\":\"tight\"}\n", alone_ms);
    print_heading("tight", Bytes, "  / kernel alone");
    measure_queues<Bytes>("tight", m, products, alone_ms);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::size_t bytes = 64;
  std::string kernel = "both";
  bool usage = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--record-bytes") == 0 && i + 1 < argc) {
      bytes = std::strtoul(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--kernel") == 0 && i + 1 < argc) {
      kernel = argv[++i];
    } else {
      usage = true;
    }
  }
  if (usage || (bytes != 64 && bytes != 192 && bytes != 448) || (kernel != "paper" && kernel != "tight" && kernel != "both")) {
    std::fprintf(stderr, "usage: figure3_floor [--quick] [--record-bytes 64|192|448] [--kernel paper|tight|both]\n");
    return 2;
  }
  sched_getaffinity(0, sizeof process_cpus, &process_cpus);
  pin(0);
  const int products = quick ? 5 : 31;
  const bool paper = kernel != "tight";
  const bool tight = kernel != "paper";
  if (bytes == 64) measure_all<64>(paper, tight, products);
  if (bytes == 192) measure_all<192>(paper, tight, products);
  if (bytes == 448) measure_all<448>(paper, tight, products);
}
