// presto::parallel_for: every index runs exactly once under every schedule, pool and number of
// processors, for empty, tiny and large ranges and signed, negative and unsigned index types;
// the schedules' chunk arithmetic; misuse; a throwing body cancels the loop and its first
// exception reaches the caller.

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace presto;

namespace {

std::vector<Schedule> all_schedules() {
  return {Schedule::static_blocks(), Schedule::chunked(3), Schedule::self(), Schedule::guided(),
          Schedule::guided(4)};
}

// On a presto thread: runs parallel_for over [begin, end) and returns how often each index
// ran, by its distance from begin.
template <class I>
std::vector<int> counts(I begin, I end, Schedule s) {
  using U = std::make_unsigned_t<I>;
  auto offset = [begin](I i) { return static_cast<std::size_t>(static_cast<U>(static_cast<U>(i) - static_cast<U>(begin))); };
  std::vector<std::atomic<int>> hits(begin < end ? offset(end) : 0);
  parallel_for(begin, end, [&](I i) {
    hits[offset(i)].fetch_add(1, std::memory_order_relaxed);
    if (i % 7 == 0) this_thread::yield();  // let the team interleave
  }, s);
  std::vector<int> out;
  for (auto& h : hits) out.push_back(h.load());
  return out;
}

bool all_once(const std::vector<int>& c) {
  for (int v : c) {
    if (v != 1) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("parallel_for runs every index exactly once", "[sched][parallel_for]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  for (Schedule s : all_schedules()) {
    INFO("schedule " << s.describe());
    presto::test::Record record;
    presto::test::run(cfg, [&] {
      using I64 = std::int64_t;
      using U64 = std::uint64_t;
      record.expect(all_once(counts(0, 1000, s)), "0..1000");
      record.expect(counts(5, 5, s).empty(), "5..5 is empty");
      record.expect(counts(9, 3, s).empty(), "9..3 is empty");
      record.expect(all_once(counts(7, 8, s)), "one index");
      record.expect(all_once(counts(0, 3, s)), "fewer indices than processors");
      record.expect(all_once(counts(-50, 50, s)), "-50..50");
      record.expect(all_once(counts(std::int8_t{-128}, std::int8_t{127}, s)), "int8 -128..127");
      record.expect(all_once(counts(10u, 77u, s)), "10u..77u");
      record.expect(all_once(counts(std::numeric_limits<I64>::max() - 20, std::numeric_limits<I64>::max(), s)),
                    "the top of int64");
      record.expect(all_once(counts(std::numeric_limits<U64>::max() - 20, std::numeric_limits<U64>::max(), s)),
                    "the top of uint64");
    });
    PRESTO_CHECK_RECORD(record);
  }
}

TEST_CASE("parallel_for's schedules hand out the chunks their definitions give", "[sched][parallel_for]") {
  auto chunks = [](std::uint64_t n, std::size_t threads, Schedule s, std::size_t member) {
    LoopClaims claims(n, threads, s);
    std::vector<std::uint64_t> sizes;
    std::uint64_t first = 0, last = 0, expected_first = 0;
    for (std::size_t c = 0; claims.claim(member, c, first, last); ++c) {
      if (s.kind() != Schedule::Kind::static_blocks) CHECK(first == expected_first);
      expected_first = last;
      sizes.push_back(last - first);
    }
    return sizes;
  };
  // static: 1000 over 3 threads is 334, 333, 333 (the remainder goes to the first threads)
  CHECK(chunks(1000, 3, Schedule::static_blocks(), 0) == std::vector<std::uint64_t>{334});
  CHECK(chunks(1000, 3, Schedule::static_blocks(), 2) == std::vector<std::uint64_t>{333});
  CHECK(chunks(10, 4, Schedule::chunked(4), 0) == std::vector<std::uint64_t>{4, 4, 2});
  CHECK(chunks(3, 2, Schedule::self(), 0) == std::vector<std::uint64_t>{1, 1, 1});
  // GSS: ceil(R/P) of the R remaining: 100 over 4 -> 25, 19, 14, 11, 8, 6, 5, 3, 3, 2, 1, 1, 1, 1
  CHECK(chunks(100, 4, Schedule::guided(), 0) ==
        std::vector<std::uint64_t>{25, 19, 14, 11, 8, 6, 5, 3, 3, 2, 1, 1, 1, 1});
  // GSS(k): no chunk below k but the last
  CHECK(chunks(100, 4, Schedule::guided(10), 0) == std::vector<std::uint64_t>{25, 19, 14, 11, 10, 10, 10, 1});
  CHECK(Schedule::chunked(4).describe() == "chunked(4)");
  CHECK(Schedule::static_blocks().describe() == "static");
  CHECK_THROWS_AS(Schedule::chunked(0), UsageError);
  CHECK_THROWS_AS(Schedule::guided(0), UsageError);
}

TEST_CASE("parallel_for outside a presto thread is a UsageError naming the caller", "[sched][parallel_for]") {
  try {
    parallel_for(0, 10, [](int) {});
    FAIL("no UsageError");
  } catch (const UsageError& e) {
    const std::string what = e.what();
    CHECK(what.find("presto::parallel_for") != std::string::npos);
    CHECK(what.find("not a presto thread") != std::string::npos);
  }
}

TEST_CASE("a throwing body cancels the loop and its first exception reaches the caller", "[sched][parallel_for]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  for (Schedule s : all_schedules()) {
    INFO("schedule " << s.describe());
    Runtime rt{presto::test::runtime_config(cfg)};
    std::atomic<int> ran{0};
    std::string caught;
    rt.run([&] {
      try {
        parallel_for(0, 10000, [&](int i) {
          ran.fetch_add(1, std::memory_order_relaxed);
          if (i % 100 == 37) throw std::runtime_error("index " + std::to_string(i));
          this_thread::yield();
        }, s);
      } catch (const std::runtime_error& e) {
        caught = e.what();
      }
    });
    CHECK(caught.rfind("index ", 0) == 0);
    CHECK(ran.load() < 10000);  // cancelled: not every index ran
    presto::test::check_no_leaks(rt);
  }
}

TEST_CASE("parallel_for nests and its bodies may block", "[sched][parallel_for]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  long total = presto::test::run(cfg, [] {
    Lock lock{"total"};
    long sum = 0;
    parallel_for(0, 20, [&](int i) {
      parallel_for(0, 30, [&](int j) {
        std::scoped_lock guard(lock);
        sum += i * 30 + j;
      }, Schedule::chunked(4));
    }, Schedule::self());
    return sum;
  });
  CHECK(total == 599L * 600 / 2);
}
