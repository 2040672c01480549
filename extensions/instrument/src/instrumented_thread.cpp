#include <presto/instrument/instrumented_thread.hpp>

#include <algorithm>
#include <type_traits>

#include <presto/errors.hpp>
#include <presto/processor.hpp>
#include <presto/runtime.hpp>

namespace presto::instrument {

InstrumentedThread* InstrumentedThread::current() noexcept {
  return dynamic_cast<InstrumentedThread*>(&Thread::current());
}

Recorder* Recorder::current() noexcept {
  InstrumentedThread* t = InstrumentedThread::current();
  return t != nullptr ? &t->recorder() : nullptr;
}

InstrumentedThread::InstrumentedThread(std::shared_ptr<Recorder> recorder, ThreadAttributes attributes)
    : Thread(std::move(attributes)), recorder_(std::move(recorder)) {
  if (!recorder_) throw UsageError("InstrumentedThread " + describe() + " needs a recorder");
  begin(recorder_->now());
}

std::unique_ptr<Thread> InstrumentedThread::newthread(ThreadAttributes attributes) const {
  return std::make_unique<InstrumentedThread>(recorder_, std::move(attributes));
}

void InstrumentedThread::reinitialize(ThreadAttributes attributes) {
  Thread::reinitialize(std::move(attributes));
  begin(recorder_->now());
}

void InstrumentedThread::begin(Nanos now) {
  InstrumentedThread* creator = current();
  if (creator != nullptr && creator->recorder_ != recorder_) creator = nullptr;
  off_ = Off::created;
  on_processor_ = false;
  created_ = since_ = slice_start_ = charged_at_ = now;
  charged_clock_ = 0;
  running_ = ready_ = blocked_ = work_ = 0;
  weight_ = 0;
  slices_ = 0;
  waits_.clear();
  wait_index_ = 0;
  woken_ = false;
  woken_at_ = woken_chain_ = 0;
  woken_flow_ = flow_in_ = 0;
  // A thread starts on the longest-path clock where its creator stands; one created outside
  // the runtime, after everything finished so far.
  chain_end_ = creator != nullptr ? creator->chain_position(now) : recorder_->span_so_far();
  chain_start_ = chain_end_;
  // Quartz: thread creation is an asynchronous call, charged to the creator's profile stack.
  if (creator != nullptr) {
    stack_ = creator->stack_;
  } else {
    stack_.clear();
  }
  entry_totals_.clear();
}

void InstrumentedThread::run() {
  recorder_->note_creation(created_);  // the first thread to run starts the recorder's epoch
  recorder_->note_processors(runtime()->processors());
  switch_in();
  try {
    Thread::run();
  } catch (...) {
    finish_body();
    throw;
  }
  finish_body();
}

// Runs `leave` (the base class's sleep or yield) with the thread accounted off its processor
// meanwhile. Only the thread itself may: otherwise `leave` runs unaccounted and raises the
// misuse.
template <class F>
decltype(auto) InstrumentedThread::off_processor(Off why, SynchroObject* so, F&& leave) {
  if (this != &Thread::current()) return leave();
  switch_out(why, so);
  try {
    if constexpr (std::is_void_v<decltype(leave())>) {
      leave();
      switch_in();
    } else {
      auto result = leave();
      switch_in();
      return result;
    }
  } catch (...) {
    switch_in();
    throw;
  }
}

void InstrumentedThread::sleep(SynchroObject& so) {
  off_processor(Off::blocked, &so, [&] { Thread::sleep(so); });
}

bool InstrumentedThread::sleep_until(SynchroObject& so, Clock::time_point deadline) {
  return off_processor(Off::blocked, &so, [&] { return Thread::sleep_until(so, deadline); });
}

void InstrumentedThread::yield() {
  off_processor(Off::yielded, nullptr, [&] { Thread::yield(); });
}

void InstrumentedThread::wakeup(SynchroObject& so) {
  // Only a genuine wake-up of a sleeper is recorded; Thread::wakeup raises the misuse otherwise.
  // The sleeper is switched out: its spinlock-guarded sleep completed before a waker could
  // recall it, and it reads these fields only after Thread::wakeup has made it ready.
  if (waiting_on() == &so && off_ == Off::blocked && !on_processor_) {
    const Nanos now = recorder_->now();
    InstrumentedThread* waker = current();
    if (waker != nullptr && waker->recorder_ != recorder_) waker = nullptr;
    woken_ = true;
    woken_at_ = now;
    // A timer's wake-up (no instrumented waker) adds no edge to the longest path.
    woken_chain_ = waker != nullptr ? waker->chain_position(now) : chain_end_;
    woken_flow_ = waker != nullptr && recorder_->options().trace && waker->processor() != nullptr
                      ? recorder_->record_flow(waker->processor()->index(), now)
                      : 0;
  }
  Thread::wakeup(so);
}

std::size_t InstrumentedThread::wait_entry(const SynchroObject& so) {
  const std::string_view kind = so.kind();
  for (std::size_t i = 0; i < waits_.size(); ++i) {
    if (waits_[i].kind == kind && waits_[i].name == so.name()) return i;
  }
  waits_.push_back(Wait{.kind = std::string(kind), .name = so.name()});
  return waits_.size() - 1;
}

void InstrumentedThread::switch_out(Off why, SynchroObject* so) {
  Nanos now = 0;
  const double clock = recorder_->advance_busy(-1, now);
  close_slice(now, clock);
  off_ = why;
  since_ = now;
  woken_ = false;
  woken_flow_ = 0;
  if (so != nullptr) {
    wait_index_ = wait_entry(*so);
    ++waits_[wait_index_].waits;
  }
}

void InstrumentedThread::switch_in() {
  Nanos now = 0;
  const double clock = recorder_->advance_busy(+1, now);
  if (off_ == Off::blocked) {
    const Nanos woke = woken_ ? std::clamp(woken_at_, since_, now) : now;
    blocked_ += woke - since_;
    waits_[wait_index_].blocked += woke - since_;
    ready_ += now - woke;
    chain_start_ = woken_ ? std::max(chain_end_, woken_chain_) : chain_end_;
    flow_in_ = woken_flow_;
  } else {
    ready_ += now - since_;
    chain_start_ = chain_end_;
    flow_in_ = 0;
  }
  on_processor_ = true;
  slice_start_ = charged_at_ = now;
  charged_clock_ = clock;
  if (recorder_->options().cpu_time) slice_cpu_start_ = recorder_->cpu_now();
}

void InstrumentedThread::charge(Nanos now, double clock) {
  const double weight = clock - charged_clock_;
  const Nanos time = now - charged_at_;
  weight_ += weight;
  for (std::size_t i = 0; i < stack_.size(); ++i) {
    const std::uint32_t e = stack_[i];
    if (std::find(stack_.begin(), stack_.begin() + static_cast<std::ptrdiff_t>(i), e) !=
        stack_.begin() + static_cast<std::ptrdiff_t>(i)) {
      continue;  // recursive entries count once
    }
    auto it = std::find_if(entry_totals_.begin(), entry_totals_.end(), [e](const auto& p) { return p.first == e; });
    if (it == entry_totals_.end()) it = entry_totals_.insert(entry_totals_.end(), {e, {0.0, Nanos{0}}});
    it->second.first += weight;
    it->second.second += time;
  }
  charged_at_ = now;
  charged_clock_ = clock;
}

Nanos InstrumentedThread::slice_work(Nanos now) const noexcept {
  const Nanos elapsed = now - slice_start_;
  if (!recorder_->options().cpu_time) return elapsed;
  // The interval ran on one OS thread, whose CPU time it cannot exceed in elapsed time.
  return std::clamp(recorder_->cpu_now() - slice_cpu_start_, Nanos{0}, elapsed);
}

Nanos InstrumentedThread::chain_position(Nanos now) const noexcept {
  return on_processor_ ? chain_start_ + slice_work(now) : chain_end_;
}

void InstrumentedThread::close_slice(Nanos now, double clock) {
  const Nanos length = now - slice_start_;
  const Nanos work = slice_work(now);
  running_ += length;
  work_ += work;
  ++slices_;
  charge(now, clock);
  chain_end_ = chain_start_ + work;
  on_processor_ = false;
  if (recorder_->options().trace && processor() != nullptr) {
    recorder_->lane(processor()->index()).slices.push_back({id(), slice_start_, now, flow_in_});
  }
  flow_in_ = 0;
}

void InstrumentedThread::checkpoint() {
  if (!on_processor_) return;
  Nanos now = 0;
  const double clock = recorder_->advance_busy(0, now);
  charge(now, clock);
}

bool InstrumentedThread::push_entry(std::uint32_t entry) {
  if (!stack_.empty() && stack_.back() == entry) return false;
  checkpoint();
  stack_.push_back(entry);
  return true;
}

void InstrumentedThread::pop_entry(std::uint32_t entry) {
  if (stack_.empty() || stack_.back() != entry) return;
  checkpoint();
  stack_.pop_back();
}

void InstrumentedThread::finish_body() noexcept {
  Nanos now = 0;
  const double clock = recorder_->advance_busy(-1, now);
  close_slice(now, clock);
  off_ = Off::created;
  recorder_->finish(Recorder::Finished{.id = id(),
                                       .name = name(),
                                       .lifetime = now - created_,
                                       .running = running_,
                                       .ready = ready_,
                                       .blocked = blocked_,
                                       .work = work_,
                                       .weight = weight_,
                                       .slices = slices_,
                                       .waits = waits_,
                                       .finished = now,
                                       .end_of_chain = chain_end_,
                                       .entries = entry_totals_});
}

}  // namespace presto::instrument
