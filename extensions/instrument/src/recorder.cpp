#include <presto/instrument/recorder.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include <time.h>

namespace presto::instrument {

Recorder::Recorder(RecorderOptions options) : options_(std::move(options)) {
  if (!options_.trace_path.empty()) options_.trace = true;
}

Recorder::~Recorder() {
  write_files();
  for (auto& l : lanes_) delete l.load(std::memory_order_acquire);
}

void Recorder::write_files() const {
  try {
    if (!options_.trace_path.empty()) {
      std::ofstream out(options_.trace_path);
      write_trace(out);
      out.close();
      if (!out) throw std::runtime_error("cannot write the trace to " + options_.trace_path);
    }
    if (!options_.report_path.empty()) {
      const std::string report = format_report(profile());
      if (options_.report_path == "-") {
        std::fputs(report.c_str(), stderr);
      } else {
        std::ofstream out(options_.report_path);
        out << report;
        out.close();
        if (!out) throw std::runtime_error("cannot write the report to " + options_.report_path);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "presto::instrument: %s\n", e.what());
  }
}

Nanos Recorder::now() const noexcept {
  if (options_.clock != nullptr) return options_.clock();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Nanos Recorder::cpu_now() const noexcept {
  if (options_.clock != nullptr) return options_.clock();
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return Nanos{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

double Recorder::advance_busy(int delta, Nanos& now) noexcept {
  std::lock_guard guard(busy_lock_);
  now = this->now();
  if (busy_ > 0) normalized_ += double(now - busy_since_) / busy_;
  busy_since_ = now;
  busy_ += delta;
  return normalized_;
}

void Recorder::note_creation(Nanos at) noexcept {
  Nanos unset = kUnset;
  if (epoch_.load(std::memory_order_relaxed) == kUnset) epoch_.compare_exchange_strong(unset, at);
}

void Recorder::note_processors(std::size_t n) noexcept {
  std::size_t seen = processors_.load(std::memory_order_relaxed);
  while (seen < n && !processors_.compare_exchange_weak(seen, n)) {
  }
}

Recorder::Lane& Recorder::lane(std::size_t processor) {
  std::atomic<Lane*>& slot = lanes_[std::min(processor, kMaxLanes - 1)];
  Lane* l = slot.load(std::memory_order_acquire);
  if (l == nullptr) {
    auto fresh = std::make_unique<Lane>();
    if (slot.compare_exchange_strong(l, fresh.get(), std::memory_order_acq_rel)) l = fresh.release();
  }
  return *l;
}

std::uint64_t Recorder::record_flow(std::size_t processor, Nanos at) {
  Lane& l = lane(processor);
  const std::uint64_t id = (std::uint64_t{processor} + 1) << 40 | ++l.next_flow;
  l.flows.push_back({id, at});
  return id;
}

std::uint32_t Recorder::entry(std::string_view name) {
  std::lock_guard lock(mutex_);
  auto [it, fresh] = entry_ids_.try_emplace(std::string(name), static_cast<std::uint32_t>(entries_.size()));
  if (fresh) entries_.push_back(Entry{.name = std::string(name)});
  return it->second;
}

void Recorder::finish(const Finished& f) {
  std::lock_guard lock(mutex_);
  ++threads_;
  work_ += f.work;
  running_ += f.running;
  weight_ += f.weight;
  last_finish_ = std::max(last_finish_, f.finished);
  if (f.end_of_chain > span_.load(std::memory_order_relaxed)) span_.store(f.end_of_chain, std::memory_order_release);
  for (const auto& [e, totals] : f.entries) {
    entries_[e].weight += totals.first;
    entries_[e].processor_time += totals.second;
  }
  if (options_.trace && !f.name.empty()) names_.emplace(f.id, f.name);
  ThreadRecord* into = nullptr;
  if (records_.size() < options_.thread_records) {
    into = &records_.emplace_back();
    into->id = f.id;
    into->name = f.name.empty() ? "thread " + std::to_string(f.id) : f.name;
  } else {  // summed by name
    const std::string_view key = f.name.empty() ? std::string_view("<unnamed>") : std::string_view(f.name);
    auto it = groups_.find(key);
    if (it == groups_.end()) {
      it = groups_.emplace(std::string(key), ThreadRecord{}).first;
      it->second.name = it->first;
      it->second.threads = 0;
    }
    into = &it->second;
    ++into->threads;
  }
  into->lifetime += f.lifetime;
  into->running += f.running;
  into->ready += f.ready;
  into->blocked += f.blocked;
  into->weight += f.weight;
  into->slices += f.slices;
  for (const Wait& w : f.waits) {
    key_.assign(w.kind).append(" '").append(w.name.empty() ? std::string_view("<unnamed>") : w.name).append("'");
    auto o = objects_.find(key_);
    if (o == objects_.end()) o = objects_.emplace(key_, ObjectRecord{}).first;
    o->second.waits += w.waits;
    o->second.blocked += w.blocked;
    auto same = std::find_if(into->blocked_on.begin(), into->blocked_on.end(),
                             [&](const ObjectWait& x) { return x.object == key_; });
    if (same == into->blocked_on.end()) {
      into->blocked_on.push_back({key_, w.waits, w.blocked});
    } else {
      same->waits += w.waits;
      same->blocked += w.blocked;
    }
  }
}

void Recorder::merge_lock(const std::string& object, std::uint64_t acquisitions, std::uint64_t contended, Nanos wait,
                          Nanos held) {
  std::lock_guard lock(mutex_);
  ObjectRecord& o = objects_[object];
  o.acquisitions += acquisitions;
  o.contended += contended;
  o.acquire_wait += wait;
  o.held += held;
}

Profile Recorder::profile() const {
  std::lock_guard lock(mutex_);
  Profile p;
  p.processors = processors_.load(std::memory_order_relaxed);
  const Nanos epoch = epoch_.load(std::memory_order_relaxed);
  p.elapsed = epoch == kUnset || threads_ == 0 ? 0 : last_finish_ - epoch;
  p.threads = threads_;
  p.thread_records = records_;
  for (const auto& [name, g] : groups_) p.thread_records.push_back(g);
  for (ThreadRecord& t : p.thread_records) {
    std::sort(t.blocked_on.begin(), t.blocked_on.end(),
              [](const ObjectWait& a, const ObjectWait& b) { return a.blocked > b.blocked; });
  }
  for (const auto& [name, o] : objects_) {
    p.objects.push_back(o);
    p.objects.back().object = name;
  }
  std::sort(p.objects.begin(), p.objects.end(), [](const ObjectRecord& a, const ObjectRecord& b) {
    return a.blocked + a.acquire_wait > b.blocked + b.acquire_wait;
  });
  p.quartz.push_back(ProfileEntry{.name = "program", .weight = weight_, .processor_time = running_});
  for (const Entry& e : entries_) p.quartz.push_back(ProfileEntry{e.name, e.weight, e.processor_time});
  std::stable_sort(p.quartz.begin() + 1, p.quartz.end(),
                   [](const ProfileEntry& a, const ProfileEntry& b) { return a.weight > b.weight; });
  p.parallelism.work = work_;
  p.parallelism.cpu_time = options_.cpu_time;
  p.parallelism.span = span_.load(std::memory_order_relaxed);
  return p;
}

}  // namespace presto::instrument
