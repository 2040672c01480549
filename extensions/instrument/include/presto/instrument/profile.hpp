#pragma once
// Profile: what a Recorder measured, as plain data, and its text report.
//
// Times are nanoseconds of the recorder's clock. A thread's lifetime runs from the moment its
// control block is made (fork) or it is constructed, to the end of its body, and is split
// exactly into running (on a processor), ready (waiting for one) and blocked (asleep on a
// synchronization object) time. Quartz's normalized processor time ("weight") of a running
// interval is its length divided by the number of instrumented threads running at each moment,
// so the weights of all threads add up to the time during which any thread ran.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace presto::instrument {

using Nanos = std::int64_t;

// Time blocked on one object, identified by kind and name ("semaphore 'slots'"): name the
// objects you want told apart.
struct ObjectWait {
  std::string object;
  std::uint64_t waits = 0;
  Nanos blocked = 0;
};

struct ThreadRecord {
  std::uint64_t id = 0;      // of the (first) thread; 0 for a group
  std::string name;          // the thread's name, or "thread <id>"; a group's common name
  std::uint64_t threads = 1; // > 1: several threads of this name, summed (Recorder keeps the
                             // first RecorderOptions::thread_records threads apart)
  Nanos lifetime = 0;
  Nanos running = 0;
  Nanos ready = 0;
  Nanos blocked = 0;
  double weight = 0;         // normalized processor time
  std::uint64_t slices = 0;  // running intervals
  std::vector<ObjectWait> blocked_on;  // longest first

  double blocked_share() const noexcept { return lifetime > 0 ? double(blocked) / double(lifetime) : 0; }
};

// Per object: blocking waits of instrumented threads on it, and, for InstrumentedLock and
// InstrumentedMonitor, acquisitions, how many found it held, time waited and time held.
struct ObjectRecord {
  std::string object;
  std::uint64_t waits = 0;
  Nanos blocked = 0;
  std::uint64_t acquisitions = 0;
  std::uint64_t contended = 0;
  Nanos acquire_wait = 0;
  Nanos held = 0;

  double contention() const noexcept { return acquisitions > 0 ? double(contended) / double(acquisitions) : 0; }
};

// A line of the Quartz profile: a user-marked Scope or an instrumented lock, with the
// normalized (weight) and plain processor time spent inside it, including threads created
// inside it (they inherit their creator's scopes). "program" is the sum over all threads.
struct ProfileEntry {
  std::string name;
  double weight = 0;
  Nanos processor_time = 0;
};

struct Parallelism {
  Nanos work = 0;  // total running time of all threads (T1)
  Nanos span = 0;  // the longest chain of running time linked by creations and wake-ups (T-infinity)
  bool cpu_time = false;  // both measured in CPU time (RecorderOptions::cpu_time)
  double average() const noexcept { return span > 0 ? double(work) / double(span) : 1; }
};

struct Profile {
  std::size_t processors = 0;
  Nanos elapsed = 0;  // from the first thread's creation to the last one's end
  std::uint64_t threads = 0;
  std::vector<ThreadRecord> thread_records;  // in order of completion, then groups
  std::vector<ObjectRecord> objects;         // most blocked first
  std::vector<ProfileEntry> quartz;          // heaviest first; "program" is the first
  Parallelism parallelism;
};

// The report: per thread, its blocked share and on what; per object, waits and contention; the
// Quartz profile; the average parallelism and the bounds it implies for 1, 2, 4, ... processors
// up to twice the recorded count. At most `max_threads` thread lines, most blocked first.
std::string format_report(const Profile& profile, std::size_t max_threads = 20);

}  // namespace presto::instrument
