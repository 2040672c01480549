// presto-quicksort: parallel quicksort with futures. Each partition step sorts its left part
// in a Future (a new thread) and its right part itself, then waits for the future: the
// recursion's natural decomposition, one thread per partition above a cutoff. The result is
// checked against std::sort of the same input.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <presto/futures/future.hpp>
#include <presto/runtime.hpp>

#include "command_line.hpp"

namespace {

struct Options {
  std::size_t size = 1'000'000;
  std::size_t cutoff = 4096;   // below this, sort sequentially
  std::size_t processors = 0;  // 0: all hardware threads
  unsigned seed = 1;
};

constexpr const char* usage =
      "usage: %s [--size N] [--cutoff C] [--processors P] [--seed S]\n"
      "Sorts N random integers (default 1000000) with a parallel quicksort that forks a future\n"
      "for every partition larger than C (default 4096), on P processors (default: all); checks\n"
      "the result against std::sort and prints the time of both.\n";

bool parse(int argc, char** argv, Options& o) {
  presto::apps::CommandLine cl{usage};
  cl.option("--size", o.size).processors(o.processors).option("--seed", o.seed);
  cl.option("--cutoff", [&o](const std::string& v) {
    o.cutoff = std::max<std::size_t>(2, presto::apps::parse_value<std::size_t>("--cutoff", v));
  });
  if (!cl.parse(argc, argv)) return false;
  return true;
}

// Sorts [first, last); returns the number of futures it made.
std::size_t quicksort(int* first, int* last, std::size_t cutoff) {
  if (static_cast<std::size_t>(last - first) <= cutoff) {
    std::sort(first, last);
    return 0;
  }
  const int pivot = std::max(std::min(first[0], first[(last - first) / 2]),
                             std::min(std::max(first[0], first[(last - first) / 2]), last[-1]));  // median of 3
  int* mid = std::partition(first, last, [pivot](int x) { return x < pivot; });
  int* right_first = mid;  // [first, mid) < pivot <= [mid, last)
  if (mid == first) right_first = std::partition(mid, last, [pivot](int x) { return x == pivot; });  // progress
  presto::futures::Future left{quicksort, first, mid, cutoff};
  const std::size_t right = quicksort(right_first, last, cutoff);
  return 1 + left.get() + right;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  std::vector<int> input(o.size);
  std::mt19937 gen(o.seed);
  std::uniform_int_distribution<int> dist(0, 1'000'000'000);
  for (int& x : input) x = dist(gen);

  std::vector<int> expected = input;
  auto t0 = std::chrono::steady_clock::now();
  std::sort(expected.begin(), expected.end());
  const double seq_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  presto::Runtime rt{{.processors = o.processors}};
  std::vector<int> data = input;
  t0 = std::chrono::steady_clock::now();
  const std::size_t futures = rt.run([&] { return quicksort(data.data(), data.data() + data.size(), o.cutoff); });
  const double par_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  const bool ok = data == expected;
  std::printf("PRESTO parallel quicksort: %zu integers, cutoff %zu, %zu processor(s), seed %u\n", o.size, o.cutoff,
              rt.processors(), o.seed);
  std::printf("futures: %zu; time %.2f ms (std::sort, one OS thread: %.2f ms)\n", futures, par_ms, seq_ms);
  std::printf("check: result %s std::sort's\n", ok ? "equals" : "DIFFERS FROM");
  return ok ? 0 : 1;
}
