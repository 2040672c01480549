// HeapPool<KeyOf>: a ready pool that serves the thread of least key first, equal keys in the
// order they became ready, written the way a user writes a pool: from public headers only.
// KeyOf is a default-constructible callable, const presto::Thread& -> an ordered Key, read in
// put() (so a key that changes takes effect the next time the thread becomes ready). A binary
// heap under a presto::Spinlock: O(log n) a put or get, no allocation once the heap has grown.
// It gives any thread to any processor (it does not honour Thread::affinity(), so
// ThreadPool::has_work_for's default fits it). EdfPool (edf_pool.hpp) and PSIM's
// LowestTimestampFirstPool (apps/psim_schedulers) are HeapPools.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <type_traits>
#include <vector>

#include <presto/spinlock.hpp>
#include <presto/thread.hpp>
#include <presto/thread_pool.hpp>

template <class KeyOf>
class HeapPool : public presto::ThreadPool {
 public:
  using Key = std::invoke_result_t<KeyOf, const presto::Thread&>;

  explicit HeapPool(std::string_view name) : name_(name) { heap_.reserve(1024); }

  void put(presto::Thread& t) override {
    const Key key = KeyOf{}(t);
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
  std::string_view name() const noexcept override { return name_; }

 private:
  struct Entry {
    Key key;
    std::uint64_t sequence;
    presto::Thread* thread;
  };
  // std heap order: "a before b in the comparator" means b is served first.
  static bool later(const Entry& a, const Entry& b) noexcept {
    if (a.key != b.key) return b.key < a.key;
    return a.sequence > b.sequence;
  }

  std::string_view name_;
  presto::Spinlock lock_;
  std::vector<Entry> heap_;
  std::uint64_t sequence_ = 0;
  std::atomic<std::size_t> size_{0};
};
