#pragma once
// InstrumentedThread: PRESTO's first customization, an instrumented execution environment made
// by redefining Thread. It overrides sleep, sleep_until, wakeup, yield and the body to time
// each thread's running, ready and blocked intervals (blocked ones per object waited on), the
// normalized processor time of its running intervals (Quartz), and the creation and wake-up
// edges from which the Recorder derives the program's average parallelism. Install one as the
// runtime's thread prototype and every thread the runtime creates is instrumented, with no
// change to the application:
//
//   presto::Runtime rt{{.thread_prototype = std::make_unique<InstrumentedThread>(recorder)}};
//
// A running interval begins when the thread's body starts or its sleep/yield returns (it has
// been dispatched) and ends when it sleeps, yields or its body ends; the few instructions of
// the switch itself fall outside. A thread's figures are handed to the recorder when its body
// ends. Subclasses may override the virtuals again but must call these versions.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <presto/instrument/recorder.hpp>
#include <presto/thread.hpp>

namespace presto::instrument {

class InstrumentedThread : public Thread {
 public:
  explicit InstrumentedThread(std::shared_ptr<Recorder> recorder, ThreadAttributes attributes = {});

  Recorder& recorder() const noexcept { return *recorder_; }
  const std::shared_ptr<Recorder>& shared_recorder() const noexcept { return recorder_; }

  // The calling thread if it is an InstrumentedThread, nullptr otherwise (a dynamic_cast, used
  // on wake-ups, creations, scopes and instrumented locks, never on a plain switch).
  static InstrumentedThread* current() noexcept;

  void sleep(SynchroObject& so) override;
  bool sleep_until(SynchroObject& so, Clock::time_point deadline) override;
  void wakeup(SynchroObject& so) override;
  void yield() override;
  std::unique_ptr<Thread> newthread(ThreadAttributes attributes) const override;

  // Quartz profile stack: entries (Recorder entry ids) whose weight the thread's running time
  // is charged to. push returns false (and pushes nothing) if `entry` is already on top; pop
  // removes the top entry if it is `entry`. Only the thread itself, while running, calls them.
  bool push_entry(std::uint32_t entry);
  void pop_entry(std::uint32_t entry);

 protected:
  void run() override;
  void reinitialize(ThreadAttributes attributes) override;

 private:
  // How the thread last left its processor.
  enum class Off : unsigned char { created, blocked, yielded };
  using Wait = Recorder::Wait;

  void begin(Nanos now);        // as a fresh thread: created now by the calling thread
  template <class F>
  decltype(auto) off_processor(Off why, SynchroObject* so, F&& leave);
  void switch_out(Off why, SynchroObject* so);
  void switch_in();
  void checkpoint();            // charges the running time so far (before the stack changes)
  void charge(Nanos now, double clock);  // running time and weight since the last charge
  void close_slice(Nanos now, double clock);
  std::size_t wait_entry(const SynchroObject& so);
  void finish_body() noexcept;
  // Where the thread, the calling one, stands on the longest-path clock at `now`.
  Nanos chain_position(Nanos now) const noexcept;
  // The work of the current running interval up to `now`: its elapsed time, or the CPU time
  // of the processor's OS thread since it began (RecorderOptions::cpu_time).
  Nanos slice_work(Nanos now) const noexcept;

  std::shared_ptr<Recorder> recorder_;
  // Intervals.
  Off off_ = Off::created;
  bool on_processor_ = false;
  Nanos created_ = 0;
  Nanos since_ = 0;        // start of the current ready/blocked interval
  Nanos slice_start_ = 0;
  Nanos charged_at_ = 0;   // running time up to here is charged
  double charged_clock_ = 0;
  Nanos running_ = 0, ready_ = 0, blocked_ = 0;
  Nanos work_ = 0;
  Nanos slice_cpu_start_ = 0;
  double weight_ = 0;
  std::uint64_t slices_ = 0;
  std::vector<Wait> waits_;
  std::size_t wait_index_ = 0;  // waits_ entry of the current sleep
  // Set by the waker before the wake-up makes the thread ready.
  bool woken_ = false;
  Nanos woken_at_ = 0;
  Nanos woken_chain_ = 0;
  std::uint64_t woken_flow_ = 0;
  // Longest-path clock: where the current interval starts, where the last one ended.
  Nanos chain_start_ = 0;
  Nanos chain_end_ = 0;
  std::uint64_t flow_in_ = 0;
  // Quartz.
  std::vector<std::uint32_t> stack_;
  Recorder::EntryTotals entry_totals_;
};

}  // namespace presto::instrument
