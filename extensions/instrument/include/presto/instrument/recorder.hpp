#pragma once
// Recorder: where instrumented threads, locks and scopes of one program (or one test) put what
// they measure. Install it through an InstrumentedThread prototype:
//
//   auto rec = std::make_shared<presto::instrument::Recorder>();
//   presto::Runtime rt{{.thread_prototype = std::make_unique<presto::instrument::InstrumentedThread>(rec)}};
//   rt.run(...);
//   std::cout << presto::instrument::format_report(rec->profile());
//
// A thread's figures reach the recorder when its body ends; profile() and write_trace() see the
// threads finished so far. With RecorderOptions::trace, every running interval and wake-up is
// kept for write_trace(): a Chrome Trace Event JSON file (open it in https://ui.perfetto.dev):
//   {"traceEvents":[...], "displayTimeUnit":"ns", "otherData":{"program":..., "processors":N}}
// pid 1 is the runtime; tid i is processor i, named by a "thread_name" metadata event; each
// running interval is an "X" event (cat "run", name: the thread's name or "thread <id>",
// args.thread: its id); each wake-up is a flow ("s" on the waker's processor at the wake-up,
// "f" with "bp":"e" at the start of the woken thread's next interval), cat and name "wakeup".
// Timestamps are microseconds from the first thread's creation. A tracing recorder serves one
// runtime at a time: its lanes are indexed by processor, written by that processor alone.
//
// Without PRESTO code changes: a program linked with presto::instrument and run with
// PRESTO_TRACE=out.json (or PRESTO_PROFILE=report.txt, "-" for stderr) gets a recorder in
// every runtime that has no thread prototype of its own; the files are written when the
// runtime is destroyed (later runtimes of the process add .1, .2, ... to the names).
//
// Set RecorderOptions::cpu_time (PRESTO_CPU_TIME=1 with PRESTO_TRACE/PRESTO_PROFILE) to
// measure work and the longest path in CPU time on a machine shared with other work.
//
// Costs: two clock reads and two short critical sections on a recorder-wide spinlock per
// switch; a few hundred bytes per finished thread (the first thread_records threads keep their
// own record, later ones are summed by name); with tracing, 32 bytes per running interval.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <presto/instrument/profile.hpp>
#include <presto/spinlock.hpp>

namespace presto::instrument {

class InstrumentedThread;

struct RecorderOptions {
  bool trace = false;            // keep running intervals and wake-ups for write_trace()
  std::string trace_path{};      // written at destruction (implies trace)
  std::string report_path{};     // format_report written at destruction; "-": stderr
  std::size_t thread_records = 4096;
  // Measure work and the longest path in CPU time of the processors' OS threads instead of
  // elapsed time: time the OS takes a processor's core away then counts in neither, which
  // makes the average parallelism meaningful on a loaded machine. Costs two more system calls
  // per switch. Running intervals, lifetimes and weights stay in elapsed time.
  bool cpu_time = false;
  // Time source in nanoseconds (nullptr: std::chrono::steady_clock). Must be thread-safe and
  // never go back; tests script time with it.
  Nanos (*clock)() = nullptr;
};

class Recorder {
 public:
  explicit Recorder(RecorderOptions options = {});
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;
  // Writes the files named in the options (errors go to stderr).
  ~Recorder();

  const RecorderOptions& options() const noexcept { return options_; }
  Nanos now() const noexcept;
  // The calling OS thread's CPU time (the scripted clock, if one is set).
  Nanos cpu_now() const noexcept;

  // What the threads finished so far measured.
  Profile profile() const;
  // The trace (RecorderOptions::trace) of the threads' running intervals so far. Call it once
  // the runtime has halted (no thread running).
  void write_trace(std::ostream& out) const;

  // The recorder of the calling thread, if it is an InstrumentedThread; nullptr otherwise.
  static Recorder* current() noexcept;

 private:
  friend class InstrumentedThread;
  friend class InstrumentedLockCore;
  friend class Scope;

  struct Slice {
    std::uint64_t thread;
    Nanos start;
    Nanos end;
    std::uint64_t flow_in;  // 0: none
  };
  struct Flow {
    std::uint64_t id;
    Nanos at;
  };
  struct Lane {  // written only by the processor of its index
    std::vector<Slice> slices;
    std::vector<Flow> flows;
    std::uint64_t next_flow = 0;
  };
  static constexpr std::size_t kMaxLanes = 1024;
  struct Entry {
    std::string name;
    double weight = 0;
    Nanos processor_time = 0;
  };
  // A thread's blocking waits on one object (kind and name).
  struct Wait {
    std::string kind;
    std::string name;
    std::uint64_t waits = 0;
    Nanos blocked = 0;
  };
  using EntryTotals = std::vector<std::pair<std::uint32_t, std::pair<double, Nanos>>>;
  // What a finished thread hands over (references into the thread, valid during finish()).
  struct Finished {
    std::uint64_t id;
    const std::string& name;  // empty: unnamed
    Nanos lifetime, running, ready, blocked;
    Nanos work;  // running, or its CPU time (RecorderOptions::cpu_time)
    double weight;
    std::uint64_t slices;
    const std::vector<Wait>& waits;
    Nanos finished;
    Nanos end_of_chain;  // its last moment on the longest-path clock
    const EntryTotals& entries;
  };

  // Moves the busy-thread count by `delta` at the current time, returned in `now`; returns the
  // normalized clock (integral of dt / busy threads) at that time.
  double advance_busy(int delta, Nanos& now) noexcept;
  void note_creation(Nanos at) noexcept;
  void note_processors(std::size_t n) noexcept;
  Lane& lane(std::size_t processor);
  std::uint64_t record_flow(std::size_t processor, Nanos at);
  std::uint32_t entry(std::string_view name);
  void finish(const Finished& f);
  void merge_lock(const std::string& object, std::uint64_t acquisitions, std::uint64_t contended, Nanos wait,
                  Nanos held);
  Nanos span_so_far() const noexcept { return span_.load(std::memory_order_acquire); }
  void write_files() const;

  RecorderOptions options_;
  static constexpr Nanos kUnset = INT64_MIN;
  std::atomic<Nanos> epoch_{kUnset};
  std::atomic<std::size_t> processors_{0};
  std::atomic<Nanos> span_{0};

  presto::Spinlock busy_lock_;
  int busy_ = 0;
  double normalized_ = 0;
  Nanos busy_since_ = 0;

  std::array<std::atomic<Lane*>, kMaxLanes> lanes_{};

  mutable std::mutex mutex_;
  std::uint64_t threads_ = 0;
  std::vector<ThreadRecord> records_;
  std::map<std::string, ThreadRecord, std::less<>> groups_;
  std::map<std::string, ObjectRecord, std::less<>> objects_;
  std::string key_;  // scratch for object names
  std::vector<Entry> entries_;
  std::unordered_map<std::string, std::uint32_t> entry_ids_;
  std::unordered_map<std::uint64_t, std::string> names_;  // traced threads with a name
  Nanos work_ = 0;
  Nanos running_ = 0;
  Nanos last_finish_ = 0;
  double weight_ = 0;
};

}  // namespace presto::instrument
