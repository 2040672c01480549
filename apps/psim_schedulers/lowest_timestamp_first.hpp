// LowestTimestampFirst: a PSIM scheduler under which the ready LP holding the earliest message
// runs first, written the way a user writes one: from public headers only. It keeps PSIM's own
// deadlock resolution and end of simulation, and changes only the choice of the next LP (hook 1
// of simulation_scheduler.hpp), through its inner pool:
//
// LowestTimestampFirstPool: a binary heap of ready threads under a presto::Spinlock, keyed by
// LogicalProcess::ready_time() (the time of the earliest message the LP held when PSIM made it
// ready), read in put(). A thread that is not an LP (the one waiting in Simulation::run) goes
// first; equal times go in the order they became ready. O(log n) a put or get, no allocation
// once the heap has grown. It gives any thread to any processor (it ignores
// Thread::affinity()), so ThreadPool::has_work_for's default fits it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include <presto/presto.hpp>
#include <presto/psim/simulation_scheduler.hpp>

namespace psim_schedulers {

class LowestTimestampFirstPool final : public presto::ThreadPool {
 public:
  LowestTimestampFirstPool() { heap_.reserve(1024); }

  void put(presto::Thread& t) override {
    const auto* lp = dynamic_cast<const presto::psim::LogicalProcess*>(&t);
    const presto::psim::Time key = lp != nullptr ? lp->ready_time() : -std::numeric_limits<presto::psim::Time>::infinity();
    std::scoped_lock guard{lock_};
    heap_.push_back(Entry{key, sequence_++, &t});
    std::push_heap(heap_.begin(), heap_.end(), later);
    size_.store(heap_.size(), std::memory_order_relaxed);
  }

  presto::Thread* get(presto::Processor&) override {
    if (size_.load(std::memory_order_relaxed) == 0) return nullptr;  // cheap check, no lock
    std::scoped_lock guard{lock_};
    if (heap_.empty()) return nullptr;
    std::pop_heap(heap_.begin(), heap_.end(), later);
    presto::Thread* t = heap_.back().thread;
    heap_.pop_back();
    size_.store(heap_.size(), std::memory_order_relaxed);
    return t;
  }

  std::size_t size() const noexcept override { return size_.load(std::memory_order_relaxed); }
  std::string_view name() const noexcept override { return "lowest-timestamp-first"; }

 private:
  struct Entry {
    presto::psim::Time time;
    std::uint64_t sequence;
    presto::Thread* thread;
  };
  // std heap order: "a before b in the comparator" means b is served first.
  static bool later(const Entry& a, const Entry& b) noexcept {
    if (a.time != b.time) return a.time > b.time;
    return a.sequence > b.sequence;
  }

  presto::Spinlock lock_;
  std::vector<Entry> heap_;
  std::uint64_t sequence_ = 0;
  std::atomic<std::size_t> size_{0};
};

class LowestTimestampFirst final : public presto::psim::SimulationScheduler {
 public:
  LowestTimestampFirst() : SimulationScheduler(std::make_unique<LowestTimestampFirstPool>()) {}
  std::string_view name() const noexcept override { return "lowest-timestamp-first"; }
};

}  // namespace psim_schedulers
