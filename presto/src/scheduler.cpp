#include <presto/scheduler.hpp>

#include <presto/local_queue_pool.hpp>
#include <presto/runtime.hpp>

#include "runtime_impl.hpp"

namespace presto {

Scheduler::Scheduler(std::unique_ptr<ThreadPool> pool)
    : owned_pool_(pool ? std::move(pool) : std::make_unique<LocalQueuePool>()) {
  pool_.store(owned_pool_.get(), std::memory_order_release);
}

Scheduler::~Scheduler() = default;

void Scheduler::ready(Thread& t) { pool().put(t); }

Thread* Scheduler::next(Processor& p) { return pool().get(p); }

bool Scheduler::withdraw(Thread& t) { return pool().withdraw(t); }

void Scheduler::halt() {
  std::vector<BlockedThread> blocked = blocked_threads();
  if (!blocked.empty()) throw Deadlock(std::move(blocked));
}

std::unique_ptr<ThreadPool> Scheduler::replace_pool(std::unique_ptr<ThreadPool> pool) {
  if (runtime_ != nullptr) return detail::RuntimeImpl::of(*runtime_).replace_pool(*this, std::move(pool));
  if (!pool) throw UsageError("replace_pool: the new pool is null");
  std::unique_ptr<ThreadPool> old = std::move(owned_pool_);
  owned_pool_ = std::move(pool);
  pool_.store(owned_pool_.get(), std::memory_order_release);
  return old;
}

std::vector<BlockedThread> Scheduler::blocked_threads() const {
  if (runtime_ == nullptr) return {};
  return detail::RuntimeImpl::of(*runtime_).blocked_threads();
}

}  // namespace presto
