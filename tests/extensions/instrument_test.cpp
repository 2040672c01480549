// presto::instrument: interval accounting on scripted schedules (a scripted clock on one
// processor, every pool), invariants on real runs (1, 2, 4 processors, every pool), the
// speed-up bounds, the trace parsed back, and PRESTO_TRACE's automatic installation.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include <presto/instrument/instrument.hpp>
#include <presto/presto.hpp>

#include "test_support.hpp"

namespace {

using namespace presto;
using namespace presto::instrument;
using presto::test::Config;

// --- A scripted clock: time advances only when a thread "works" ---------------------------
std::atomic<Nanos> g_ticks{0};
Nanos scripted_clock() { return g_ticks.load(std::memory_order_relaxed); }
void work(Nanos d) { g_ticks.fetch_add(d, std::memory_order_relaxed); }

std::shared_ptr<Recorder> scripted_recorder(bool trace = false) {
  g_ticks = 0;
  return std::make_shared<Recorder>(RecorderOptions{.trace = trace, .clock = &scripted_clock});
}

RuntimeConfig instrumented_config(const Config& c, const std::shared_ptr<Recorder>& rec) {
  RuntimeConfig rc = presto::test::runtime_config(c);
  rc.thread_prototype = std::make_unique<InstrumentedThread>(rec);
  return rc;
}

template <class F>
void run_instrumented(const Config& c, const std::shared_ptr<Recorder>& rec, F&& f, std::uint64_t seed = 0) {
  RuntimeConfig rc = instrumented_config(c, rec);
  if (seed != 0) rc.seed = seed;
  Runtime rt{std::move(rc)};
  rt.run(std::forward<F>(f));
  presto::test::check_no_leaks(rt);
}

// The scripted schedules: one processor under every pool (with the test process's seed), and
// ShufflePool with fixed seeds. Scripted results must not depend on the order.
struct ScriptedRun {
  Config config;
  std::uint64_t seed = 0;  // 0: the test process's seed
};

std::ostream& operator<<(std::ostream& os, const ScriptedRun& s) {
  if (s.seed == 0) return os << s.config;
  return os << s.config.processors << " processor(s), shuffle pool, fixed seed " << s.seed;
}

auto schedules() {
  std::vector<ScriptedRun> all;
  for (std::size_t k = 0; k < 5; ++k) all.push_back({Config{1, static_cast<presto::test::PoolKind>(k)}});
  for (std::uint64_t seed : {1, 7, 42, 1234}) all.push_back({Config{1, presto::test::PoolKind::shuffle}, seed});
  return Catch::Generators::from_range(all);
}

const ThreadRecord& record_named(const Profile& p, const std::string& name) {
  auto it = std::find_if(p.thread_records.begin(), p.thread_records.end(),
                         [&](const ThreadRecord& t) { return t.name == name; });
  REQUIRE(it != p.thread_records.end());
  return *it;
}

const ObjectRecord& object_named(const Profile& p, const std::string& name) {
  auto it = std::find_if(p.objects.begin(), p.objects.end(), [&](const ObjectRecord& o) { return o.object == name; });
  REQUIRE(it != p.objects.end());
  return *it;
}

const ProfileEntry& entry_named(const Profile& p, const std::string& name) {
  auto it = std::find_if(p.quartz.begin(), p.quartz.end(), [&](const ProfileEntry& e) { return e.name == name; });
  REQUIRE(it != p.quartz.end());
  return *it;
}

// Yields until `so` has a waiter: makes "the other thread is asleep" part of the script.
void yield_until_waited_on(SynchroObject& so) {
  while (!presto::test::has_waiters(so)) Thread::current().yield();
}

// --- A small JSON reader, enough to parse the trace back ---------------------------------
struct Json {
  std::variant<std::nullptr_t, bool, double, std::string, std::vector<Json>, std::map<std::string, Json>> v;
  const Json& operator[](const std::string& k) const { return std::get<std::map<std::string, Json>>(v).at(k); }
  bool has(const std::string& k) const {
    const auto* m = std::get_if<std::map<std::string, Json>>(&v);
    return m != nullptr && m->contains(k);
  }
  const std::vector<Json>& array() const { return std::get<std::vector<Json>>(v); }
  double number() const { return std::get<double>(v); }
  const std::string& string() const { return std::get<std::string>(v); }
};

class JsonReader {
 public:
  explicit JsonReader(std::string text) : s_(std::move(text)) {}
  Json parse() {
    Json j = value();
    space();
    if (i_ != s_.size()) fail("trailing text");
    return j;
  }

 private:
  [[noreturn]] void fail(const std::string& why) {
    throw std::runtime_error("JSON: " + why + " at offset " + std::to_string(i_));
  }
  void space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  char peek() {
    space();
    if (i_ >= s_.size()) fail("unexpected end");
    return s_[i_];
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string str() {
    expect('"');
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\') {
        ++i_;
        if (i_ >= s_.size()) fail("bad escape");
        char e = s_[i_];
        if (e == 'n') out += '\n';
        else if (e == 't') out += '\t';
        else if (e == 'u') {
          out += static_cast<char>(std::stoi(s_.substr(i_ + 1, 4), nullptr, 16));
          i_ += 4;
        } else out += e;
        ++i_;
      } else {
        if (static_cast<unsigned char>(s_[i_]) < 0x20) fail("control character in string");
        out += s_[i_++];
      }
    }
    expect('"');
    return out;
  }
  Json value() {
    const char c = peek();
    if (c == '{') {
      ++i_;
      std::map<std::string, Json> m;
      if (peek() == '}') {
        ++i_;
        return Json{m};
      }
      for (;;) {
        std::string k = str();
        expect(':');
        if (!m.emplace(k, value()).second) fail("duplicate key " + k);
        if (peek() == ',') {
          ++i_;
          continue;
        }
        expect('}');
        return Json{m};
      }
    }
    if (c == '[') {
      ++i_;
      std::vector<Json> a;
      if (peek() == ']') {
        ++i_;
        return Json{a};
      }
      for (;;) {
        a.push_back(value());
        if (peek() == ',') {
          ++i_;
          continue;
        }
        expect(']');
        return Json{a};
      }
    }
    if (c == '"') return Json{str()};
    if (s_.compare(i_, 4, "true") == 0) {
      i_ += 4;
      return Json{true};
    }
    if (s_.compare(i_, 5, "false") == 0) {
      i_ += 5;
      return Json{false};
    }
    if (s_.compare(i_, 4, "null") == 0) {
      i_ += 4;
      return Json{nullptr};
    }
    std::size_t used = 0;
    double d = 0;
    try {
      d = std::stod(s_.substr(i_, 40), &used);
    } catch (...) {
      fail("bad value");
    }
    i_ += used;
    return Json{d};
  }

  std::string s_;
  std::size_t i_ = 0;
};

long long ns(double micros) { return std::llround(micros * 1000.0); }

// Parses `text` as a trace in the format of recorder.hpp and checks it; returns the number of
// running intervals and of wake-up arrows.
std::pair<std::size_t, std::size_t> check_trace(const std::string& text, std::size_t processors) {
  Json doc = JsonReader(text).parse();
  CHECK(doc["displayTimeUnit"].string() == "ns");
  CHECK(doc["otherData"]["processors"].number() == double(processors));
  CHECK(doc["otherData"].has("program"));
  std::map<long long, std::vector<std::pair<long long, long long>>> lanes;  // tid -> (ts, end)
  std::map<double, long long> starts, finishes;                             // flow id -> ts
  std::vector<bool> named(processors, false);
  std::size_t slices = 0;
  for (const Json& e : doc["traceEvents"].array()) {
    const std::string ph = e["ph"].string();
    CHECK(e["pid"].number() == 1);
    if (ph == "M") {
      if (e["name"].string() == "thread_name") {
        const auto tid = static_cast<std::size_t>(e["tid"].number());
        REQUIRE(tid < processors);
        CHECK(e["args"]["name"].string() == "processor " + std::to_string(tid));
        named[tid] = true;
      }
      continue;
    }
    const auto tid = static_cast<long long>(e["tid"].number());
    CHECK(tid >= 0);
    CHECK(tid < static_cast<long long>(processors));
    CHECK(e["ts"].number() >= 0);
    if (ph == "X") {
      ++slices;
      CHECK(e["cat"].string() == "run");
      CHECK(!e["name"].string().empty());
      CHECK(e["args"].has("thread"));
      CHECK(e["dur"].number() >= 0);
      lanes[tid].push_back({ns(e["ts"].number()), ns(e["ts"].number()) + ns(e["dur"].number())});
    } else if (ph == "s" || ph == "f") {
      CHECK(e["cat"].string() == "wakeup");
      CHECK(e["name"].string() == "wakeup");
      if (ph == "f") CHECK(e["bp"].string() == "e");
      auto& side = ph == "s" ? starts : finishes;
      CHECK(side.emplace(e["id"].number(), ns(e["ts"].number())).second);  // ids are unique
    } else {
      FAIL_CHECK("unexpected event kind " << ph);
    }
  }
  for (std::size_t i = 0; i < processors; ++i) CHECK(named[i]);
  // A processor runs one thread at a time: its intervals do not overlap.
  for (auto& [tid, intervals] : lanes) {
    std::sort(intervals.begin(), intervals.end());
    for (std::size_t i = 1; i < intervals.size(); ++i) CHECK(intervals[i - 1].second <= intervals[i].first);
  }
  // Every arrow has both ends, and points forward in time.
  CHECK(starts.size() == finishes.size());
  for (const auto& [id, at] : finishes) {
    auto s = starts.find(id);
    REQUIRE(s != starts.end());
    CHECK(s->second <= at);
  }
  return {slices, finishes.size()};
}

std::string trace_text(const Recorder& rec) {
  std::ostringstream out;
  rec.write_trace(out);
  return out.str();
}

}  // namespace

TEST_CASE("bounds: Eager, Zahorjan and Lazowska's formulas", "[instrument]") {
  // n = 4, A = 2: S in [8/5, 2], E in [2/5, 1/2].
  Bounds b = bounds(4, 2);
  CHECK(b.speedup_lower == Approx(1.6));
  CHECK(b.speedup_upper == Approx(2.0));
  CHECK(b.efficiency_lower == Approx(0.4));
  CHECK(b.efficiency_upper == Approx(0.5));
  // A = 1: no speed-up is possible, and none is lost.
  b = bounds(8, 1);
  CHECK(b.speedup_lower == Approx(1.0));
  CHECK(b.speedup_upper == Approx(1.0));
  // One processor: S(1) = 1 whatever A is.
  b = bounds(1, 5.762);
  CHECK(b.speedup_lower == Approx(1.0));
  CHECK(b.speedup_upper == Approx(1.0));
  CHECK(b.efficiency_lower == Approx(1.0));
  // The paper's MVA(10,10) job (A = 121/21) on n = A-ish processors, and limits.
  b = bounds(6, 121.0 / 21);
  CHECK(b.speedup_lower == Approx(6 * (121.0 / 21) / (6 + 121.0 / 21 - 1)));
  CHECK(b.speedup_upper == Approx(121.0 / 21));
  CHECK(bounds(4, 1e9).speedup_lower == Approx(4.0));  // n << A: S -> n
  CHECK(bounds(1e9, 3).speedup_lower == Approx(3.0));  // n >> A: S -> A
  // Corollary 1.1: E(n) + S(n)/A > 1 holds at the lower bounds.
  for (double n : {2.0, 4.0, 16.0}) {
    for (double a : {1.5, 4.0, 100.0}) {
      const Bounds x = bounds(n, a);
      CHECK(x.efficiency_lower + x.speedup_lower / a > 1.0);
      CHECK(x.speedup_lower <= x.speedup_upper);
    }
  }
  CHECK_THROWS_AS(bounds(0, 2), UsageError);
  CHECK_THROWS_AS(bounds(2, 0.5), UsageError);
}

TEST_CASE("intervals: a scripted schedule is accounted exactly", "[instrument]") {
  const ScriptedRun sc = GENERATE(schedules());
  INFO(sc);
  auto rec = scripted_recorder();
  run_instrumented(sc.config, rec, [] {
    Scope phase{"phase"};
    work(1);
    Semaphore s{0, "s"};
    auto x = fork(ThreadAttributes{.name = "x"}, [&] {
      work(3);
      s.acquire();
      work(4);
    });
    auto y = fork(ThreadAttributes{.name = "y"}, [&] {
      yield_until_waited_on(s);
      {
        Scope inner{"y-critical"};
        work(7);
      }
      s.release();
      work(2);
    });
    x.join();
    y.join();
  }, sc.seed);
  const Profile p = rec->profile();
  CHECK(p.threads == 3);
  CHECK(p.processors == 1);
  CHECK(p.elapsed == 17);

  const ThreadRecord& x = record_named(p, "x");
  CHECK(x.running == 7);
  CHECK(x.blocked == 7);  // while y works 7
  CHECK(x.ready == 2);    // while y finishes
  CHECK(x.lifetime == 16);
  CHECK(x.slices == 2);
  REQUIRE(x.blocked_on.size() == 1);
  CHECK(x.blocked_on[0].object == "semaphore 's'");
  CHECK(x.blocked_on[0].waits == 1);
  CHECK(x.blocked_on[0].blocked == 7);
  CHECK(x.blocked_share() == Approx(7.0 / 16));

  const ThreadRecord& y = record_named(p, "y");
  CHECK(y.running == 9);
  CHECK(y.blocked == 0);
  CHECK(y.ready == 3);  // while x works 3, whoever ran first
  CHECK(y.lifetime == 12);

  const ThreadRecord& main = record_named(p, "main");
  CHECK(main.running == 1);
  CHECK(main.blocked == 16);
  CHECK(main.ready == 0);
  REQUIRE(!main.blocked_on.empty());
  CHECK(main.blocked_on[0].object == "thread 'x'");

  // One processor: a thread's weight is its running time; the program's is the elapsed time.
  for (const ThreadRecord& t : p.thread_records) CHECK(t.weight == Approx(double(t.running)));
  CHECK(entry_named(p, "program").weight == Approx(17));
  CHECK(entry_named(p, "phase").weight == Approx(17));  // inherited by x and y
  CHECK(entry_named(p, "y-critical").weight == Approx(7));
  CHECK(object_named(p, "semaphore 's'").waits == 1);

  // Longest path: main 1 -> y 7 -> (wakes x) x 4 = 12, of 17 units of work.
  CHECK(p.parallelism.work == 17);
  CHECK(p.parallelism.span == 12);
  CHECK(p.parallelism.average() == Approx(17.0 / 12));
  CHECK(!format_report(p).empty());
}

TEST_CASE("intervals: average parallelism of a fork-join program", "[instrument]") {
  const ScriptedRun sc = GENERATE(schedules());
  const bool cpu_time = GENERATE(false, true);  // the scripted clock stands for CPU time too
  INFO(sc << (cpu_time ? ", CPU time" : ""));
  g_ticks = 0;
  auto rec = std::make_shared<Recorder>(RecorderOptions{.cpu_time = cpu_time, .clock = &scripted_clock});
  run_instrumented(sc.config, rec, [] {
    work(5);
    std::vector<JoinHandle<void>> children;
    for (int i = 1; i <= 4; ++i) children.push_back(fork([i] { work(10 * i); }));
    for (auto& h : children) h.join();
  }, sc.seed);
  const Profile p = rec->profile();
  CHECK(p.threads == 5);
  CHECK(p.parallelism.work == 105);
  CHECK(p.parallelism.span == 45);  // 5, then the longest child (40)
  CHECK(p.parallelism.average() == Approx(105.0 / 45));
  CHECK(p.parallelism.cpu_time == cpu_time);
}

TEST_CASE("instrumented lock: acquisitions, contention, wait and hold times", "[instrument]") {
  const ScriptedRun sc = GENERATE(schedules());
  INFO(sc);
  auto rec = scripted_recorder();
  LockStats stats;
  run_instrumented(sc.config, rec, [&] {
    InstrumentedLock lock{"L"};
    InstrumentedMonitor monitor{"M"};
    auto holder = fork([&] {
      lock.lock();
      yield_until_waited_on(lock);
      work(5);
      lock.unlock();
    });
    auto contender = fork([&] {
      while (lock.owner() == nullptr) Thread::current().yield();
      lock.lock();  // held: waits 5
      work(2);
      lock.unlock();
    });
    holder.join();
    contender.join();
    {
      InstrumentedMonitor::Entry e{monitor};
      work(3);
    }
    CHECK(monitor.stats().acquisitions == 1);
    stats = lock.stats();
  }, sc.seed);
  CHECK(stats.acquisitions == 2);
  CHECK(stats.contended == 1);
  CHECK(stats.acquire_wait == 5);
  CHECK(stats.held == 7);
  const Profile p = rec->profile();
  const ObjectRecord& l = object_named(p, "lock 'L'");
  CHECK(l.acquisitions == 2);
  CHECK(l.contended == 1);
  CHECK(l.contention() == Approx(0.5));
  CHECK(l.held == 7);
  CHECK(l.waits == 1);
  CHECK(l.blocked == 5);
  CHECK(entry_named(p, "lock 'L'").weight == Approx(7));  // critical sections charged to the lock
  CHECK(object_named(p, "monitor 'M'").held == 3);
  CHECK(entry_named(p, "monitor 'M'").weight == Approx(3));
}

TEST_CASE("intervals: invariants of real runs on every configuration", "[instrument]") {
  const Config c = GENERATE(presto::test::configs());
  INFO(c);
  auto rec = std::make_shared<Recorder>(RecorderOptions{.trace = true});
  const std::size_t rounds = presto::test::scaled(200);
  run_instrumented(c, rec, [rounds] {
    Semaphore ping{0, "ping"}, pong{0, "pong"};
    InstrumentedLock shared{"shared"};
    long counter = 0;
    auto a = fork(ThreadAttributes{.name = "pinger"}, [&] {
      for (std::size_t i = 0; i < rounds; ++i) {
        ping.release();
        pong.acquire();
      }
    });
    auto b = fork(ThreadAttributes{.name = "ponger"}, [&] {
      for (std::size_t i = 0; i < rounds; ++i) {
        ping.acquire();
        pong.release();
      }
    });
    std::vector<JoinHandle<void>> workers;
    for (int w = 0; w < 8; ++w) {
      workers.push_back(fork([&] {
        for (std::size_t i = 0; i < rounds; ++i) {
          std::scoped_lock guard(shared);
          ++counter;
          if (i % 16 == 0) Thread::current().yield();
        }
      }));
    }
    a.join();
    b.join();
    for (auto& w : workers) w.join();
  });
  const Profile p = rec->profile();
  CHECK(p.threads == 11);
  CHECK(p.processors == c.processors);
  std::uint64_t slices = 0;
  double weight = 0;
  Nanos work = 0;
  for (const ThreadRecord& t : p.thread_records) {
    CHECK(t.running + t.ready + t.blocked == t.lifetime);
    CHECK(t.running > 0);
    CHECK(t.weight <= double(t.running) * 1.000001);
    CHECK(t.weight >= double(t.running) / double(c.processors) * 0.999999);
    Nanos on_objects = 0;
    for (const ObjectWait& w : t.blocked_on) on_objects += w.blocked;
    CHECK(on_objects == t.blocked);
    slices += t.slices;
    weight += t.weight;
    work += t.running;
  }
  CHECK(record_named(p, "pinger").blocked_on.size() <= 1);
  CHECK(object_named(p, "lock 'shared'").acquisitions == 8 * rounds);
  CHECK(entry_named(p, "program").weight == Approx(weight));
  CHECK(weight <= double(p.elapsed) * 1.000001);
  CHECK(p.parallelism.work == work);
  CHECK(p.parallelism.span <= p.parallelism.work);
  CHECK(p.parallelism.span <= p.elapsed);
  CHECK(p.parallelism.average() >= 1.0);

  const auto [traced, arrows] = check_trace(trace_text(*rec), c.processors);
  CHECK(traced == slices);
  CHECK(arrows > 0);
}

TEST_CASE("trace: a scripted run's trace, parsed back", "[instrument]") {
  const ScriptedRun sc = GENERATE(schedules());
  INFO(sc);
  auto rec = scripted_recorder(true);
  run_instrumented(sc.config, rec, [] {
    Semaphore s{0, "s"};
    auto waiter = fork(ThreadAttributes{.name = "wait \"quoted\""}, [&] {
      s.acquire();
      work(2);
    });
    yield_until_waited_on(s);
    work(3);
    s.release();
    waiter.join();
  }, sc.seed);
  const std::string text = trace_text(*rec);
  const auto [slices, arrows] = check_trace(text, 1);
  CHECK(arrows == 2);  // main wakes the waiter; the waiter's end wakes main's join
  const Profile p = rec->profile();
  std::uint64_t expected = 0;
  for (const ThreadRecord& t : p.thread_records) expected += t.slices;
  CHECK(slices == expected);
  CHECK(text.find(R"("name":"wait \"quoted\"")") != std::string::npos);
}

TEST_CASE("trace: thread names that are not valid UTF-8 are replaced, valid ones kept", "[instrument]") {
  auto rec = scripted_recorder(true);
  // A stray continuation byte, an overlong '/', a surrogate, a truncated 3-byte sequence at
  // the end; then valid 2-, 3- and 4-byte characters.
  const std::string bad = "bad\x80|\xc0\xaf|\xed\xa0\x80|\xe2\x82";
  const std::string good = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
  run_instrumented(Config{1, presto::test::PoolKind::fifo}, rec, [&] {
    fork(ThreadAttributes{.name = bad}, [] { work(1); }).join();
    fork(ThreadAttributes{.name = good}, [] { work(1); }).join();
  }, 1);
  const std::string text = trace_text(*rec);
  check_trace(text, 1);
  CHECK(text.find(R"("name":"bad\ufffd|\ufffd\ufffd|\ufffd\ufffd\ufffd|\ufffd\ufffd")") != std::string::npos);
  CHECK(text.find("\"name\":\"" + good + "\"") != std::string::npos);
  CHECK(text.find("bad\x80") == std::string::npos);  // no invalid byte written raw
  CHECK(text.find('\xc0') == std::string::npos);
  CHECK(text.find('\xed') == std::string::npos);
}

TEST_CASE("PRESTO_TRACE installs a recorder in a runtime with no prototype of its own", "[instrument]") {
  const std::string path = "instrument_test_trace.json";
  std::remove(path.c_str());
  ::setenv("PRESTO_TRACE", path.c_str(), 1);
  {
    Runtime rt{{.processors = 2}};
    CHECK(dynamic_cast<const InstrumentedThread*>(&rt.thread_prototype()) != nullptr);
    rt.run([] {
      std::vector<JoinHandle<int>> hs;
      for (int i = 0; i < 10; ++i) hs.push_back(fork([i] { return i; }));
      int sum = 0;
      for (auto& h : hs) sum += h.join();
      return sum;
    });
    presto::test::check_no_leaks(rt);
    // A runtime with its own prototype is left alone.
    Runtime own{{.processors = 1, .thread_prototype = std::make_unique<Thread>()}};
    CHECK(dynamic_cast<const InstrumentedThread*>(&own.thread_prototype()) == nullptr);
  }
  ::unsetenv("PRESTO_TRACE");
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const auto [slices, arrows] = check_trace(text.str(), 2);
  CHECK(slices >= 11);
  std::remove(path.c_str());
}

TEST_CASE("misuse: raised as by presto::Thread, and the accounting survives it", "[instrument]") {
  CHECK_THROWS_AS(InstrumentedThread(nullptr), UsageError);
  const Config c = GENERATE(filter([](const Config& x) { return x.processors == 1; }, presto::test::configs()));
  INFO(c);
  auto rec = scripted_recorder();
  bool yield_refused = false, wakeup_refused = false;
  run_instrumented(c, rec, [&] {
    Semaphore never{0, "never"};
    auto other = fork(ThreadAttributes{.name = "other"}, [] { work(1); });
    try {
      other.thread().yield();  // a thread can only yield itself
    } catch (const UsageError&) {
      yield_refused = true;
    }
    try {
      other.thread().wakeup(never);  // not asleep there
    } catch (const UsageError&) {
      wakeup_refused = true;
    }
    work(2);
    other.join();
  });
  CHECK(yield_refused);
  CHECK(wakeup_refused);
  const Profile p = rec->profile();
  CHECK(record_named(p, "other").running == 1);
  CHECK(record_named(p, "main").running == 2);
  for (const ThreadRecord& t : p.thread_records) CHECK(t.running + t.ready + t.blocked == t.lifetime);
}
