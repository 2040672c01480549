#include <presto/shuffle_pool.hpp>

#include <mutex>

#include <presto/thread.hpp>

#include <spdlog/spdlog.h>

#include <presto/runtime.hpp>

namespace presto {

void ShufflePool::attach(const Runtime& rt) {
  pinned_.attach(rt.processors());
  if (seed_) {
    rt.logger().info("shuffle pool seeded with {} (given to its constructor)", *seed_);
  } else {
    seed_ = rt.seed();
    rt.logger().info("shuffle pool seeded with {} (the runtime's; replay with PRESTO_SEED={} on one processor)",
                     *seed_, *seed_);
  }
  state_ = *seed_;
}

std::uint64_t ShufflePool::next_random() noexcept {
  // splitmix64: small, fast, and every seed gives a full-period sequence
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void ShufflePool::put(Thread& t) {
  if (pinned_.put(t)) return;
  std::lock_guard lock(lock_);
  ready_.push_back(&t);
  size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // under lock_
}

Thread* ShufflePool::get(Processor& p) {
  if (Thread* t = pinned_.get(p)) return t;
  if (size_.load(std::memory_order_relaxed) == 0) return nullptr;
  std::lock_guard lock(lock_);
  if (ready_.empty()) return nullptr;
  std::size_t i = static_cast<std::size_t>(next_random() % ready_.size());
  Thread* t = ready_[i];
  ready_[i] = ready_.back();
  ready_.pop_back();
  size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);  // under lock_
  return t;
}

}  // namespace presto
