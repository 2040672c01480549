#include <presto/runtime.hpp>

#include <spdlog/spdlog.h>

#include "current.hpp"
#include "dispatch.hpp"
#include "kept_names.hpp"
#include "runtime_configurer.hpp"
#include "runtime_allocation.hpp"
#include "runtime_impl.hpp"

namespace presto {

namespace {
WaitPolicy checked_wait_policy(const RuntimeConfig& config) {
  WaitPolicy p = config.wait_policy;
  if (p.mode == WaitMode::inherit) p.mode = WaitMode::block;
  detail::WaitState check;
  check.set_policy(p, "RuntimeConfig::wait_policy of runtime '" + config.name + "'");
  return p;
}
}  // namespace

Runtime::Runtime(RuntimeConfig config) : Runtime(detail::apply_configurers(std::move(config)), nullptr) {}

Runtime::Runtime(RuntimeConfig&& configured, std::nullptr_t) : wait_policy_(checked_wait_policy(configured)) {
  std::unique_ptr<AllocationPolicy> allocation = detail::RuntimeAllocation::from_environment();
  if (!allocation) allocation = std::move(configured.allocation);
  impl_ = std::make_unique<detail::RuntimeImpl>(*this, std::move(configured));
  impl_->install();
  allocation_ = std::make_unique<detail::RuntimeAllocation>(*this, std::move(allocation));
}

Runtime::~Runtime() = default;

Scheduler& Runtime::scheduler() const noexcept { return *impl_->scheduler.load(std::memory_order_acquire); }

std::unique_ptr<Scheduler> Runtime::replace_scheduler(std::unique_ptr<Scheduler> next) {
  return impl_->replace_scheduler(std::move(next));
}

const Thread& Runtime::thread_prototype() const noexcept { return *impl_->prototype.load(std::memory_order_acquire); }

std::unique_ptr<Thread> Runtime::set_thread_prototype(std::unique_ptr<Thread> prototype) {
  return impl_->set_thread_prototype(std::move(prototype));
}

std::size_t Runtime::processors() const noexcept { return impl_->processors.active(); }

void Runtime::set_processors(std::size_t n) { impl_->set_processors(n); }

std::unique_ptr<AllocationPolicy> Runtime::set_allocation_policy(std::unique_ptr<AllocationPolicy> policy,
                                                                 std::size_t limit) {
  return allocation_->replace(std::move(policy), limit);
}

const AllocationPolicy& Runtime::allocation_policy() const noexcept { return allocation_->policy(); }

void Runtime::begin_parallel_region() { allocation_->begin_region(); }

Processor& Runtime::processor(std::size_t index) const {
  if (const std::size_t n = impl_->processors.active(); index >= n) {
    throw UsageError("runtime '" + impl_->name + "' has " + std::to_string(n) + " processors; there is no processor " +
                     std::to_string(index));
  }
  return impl_->processors[index];
}

KeepAlive Runtime::keep_alive() noexcept {
  impl_->keep_alives.fetch_add(1, std::memory_order_seq_cst);
  return KeepAlive(this);
}

IdlePoller& Runtime::install_idle_poller(std::unique_ptr<IdlePoller> poller) {
  if (!poller) throw UsageError("runtime '" + impl_->name + "': install_idle_poller was given a null poller");
  std::lock_guard lock(impl_->replace_mutex);
  if (IdlePoller* installed = impl_->poller.load(std::memory_order_acquire)) return *installed;
  impl_->owned_poller = std::move(poller);
  impl_->poller.store(impl_->owned_poller.get(), std::memory_order_release);
  return *impl_->owned_poller;
}

IdlePoller* Runtime::idle_poller() const noexcept { return impl_->poller.load(std::memory_order_acquire); }

KeepAlive& KeepAlive::operator=(KeepAlive&& other) noexcept {
  if (this != &other) {
    reset();
    runtime_ = std::exchange(other.runtime_, nullptr);
  }
  return *this;
}

void KeepAlive::reset() noexcept {
  if (Runtime* rt = std::exchange(runtime_, nullptr)) {
    auto& r = detail::RuntimeImpl::of(*rt);
    if (r.keep_alives.fetch_sub(1, std::memory_order_seq_cst) == 1) r.poke();
  }
}

RuntimeStats Runtime::stats() const {
  RuntimeStats s;
  s.processors = impl_->processors.active();
  std::int64_t records = 0;  // lazy forks not yet ended or made threads (their counts may go below 0 per processor)
  impl_->processors.for_each([&](const Processor& p) {
    s.live_threads += p.state_->registry.size();
    s.stacks_cached += p.state_->free.cached_stacks.load(std::memory_order_relaxed);
    s.threads_recycled += p.state_->recycled.load(std::memory_order_relaxed);
    s.dispatches += p.dispatches();
    s.inline_joins += p.state_->inline_joins.load(std::memory_order_relaxed);
    const std::uint64_t threadless = p.state_->threadless.load(std::memory_order_relaxed);
    s.threadless_forks += threadless;
    records += p.state_->records.load(std::memory_order_relaxed) - static_cast<std::int64_t>(threadless);
    s.preemptions += p.preemptions();
    s.parks += p.state_->parks.load(std::memory_order_relaxed);
  });
  s.wakeups = impl_->wakeups.load(std::memory_order_relaxed);
  s.fork_records = impl_->records_made();
  s.live_threads += impl_->external_registry.size();
  records += impl_->external_records.load(std::memory_order_relaxed);
  if (records > 0) s.live_threads += static_cast<std::size_t>(records);
  s.ready_threads = scheduler().pool().size();
  s.stacks_cached += impl_->free_lists->central_stacks();
  s.stacks_in_use = impl_->stacks.in_use() - s.stacks_cached;
  s.stacks_cached += impl_->stacks.cached();
  s.pending_timers = impl_->timers.pending();
  s.threads_created = impl_->threads_created.load(std::memory_order_relaxed);
  s.unguarded_stacks = impl_->stacks.unguarded();
  return s;
}

spdlog::logger& Runtime::logger() const noexcept { return *impl_->logger; }
Spinlock& Runtime::free_list_lock() const noexcept { return impl_->free_lists->lock; }
std::uint64_t Runtime::seed() const noexcept { return impl_->seed; }
const std::string& Runtime::name() const noexcept { return impl_->name; }
std::size_t Runtime::default_stack_size() const noexcept { return impl_->stack_size; }
std::chrono::microseconds Runtime::quantum() const noexcept { return impl_->quantum; }
bool Runtime::running() const noexcept { return impl_->running.load(std::memory_order_acquire); }

Runtime* Runtime::current() noexcept {
  Processor* p = detail::current_processor();
  return p != nullptr ? &p->runtime() : nullptr;
}

Thread& Runtime::make_thread(ThreadAttributes* attributes) { return impl_->make_thread(attributes); }

void Runtime::unmake_thread(Thread& t) noexcept {
  t.forked_ = true;
  delete &t;
}

void Runtime::launch(Thread& t) { impl_->launch(t); }

void Runtime::run_until_halt(Thread& main) { impl_->run_until_halt(main); }

void Runtime::visit_threads(void (*fn)(void*, const Thread&), void* ctx) const {
  std::unique_lock<std::mutex> lock;
  struct Thaw {
    detail::RuntimeImpl* r = nullptr;
    ~Thaw() {
      if (r != nullptr) r->records_frozen.store(false, std::memory_order_relaxed);
    }
  } thaw;
  if (impl_->lazy_forks) {  // queued forks are ready threads: made so, to be listed
    lock = std::unique_lock(impl_->replace_mutex);
    impl_->materialize_for_walk();
    thaw.r = impl_.get();
  }
  auto visit = [&](Thread& t) { fn(ctx, t); };
  impl_->processors.for_each([&](Processor& p) { p.state_->registry.for_each(visit); });
  impl_->external_registry.for_each(visit);
}

namespace detail {

Runtime& current_runtime(const char* operation) {
  if (Runtime* rt = Runtime::current()) return *rt;
  throw UsageError(std::string(operation) + " called on " + Thread::current().describe() +
                   ", which is not a presto thread: use Runtime::fork or Runtime::start");
}

void release_joined(Thread& t) noexcept { RuntimeImpl::of(*t.runtime()).release_joined(t); }

const char* keep_name(const Thread& t) noexcept { return KeptNames::keep(t.name()); }

void drop_name(const char* kept) noexcept { KeptNames::drop(kept); }

void release_handle(Thread& t) noexcept {
  if (Runtime* rt = t.runtime()) {
    RuntimeImpl::of(*rt).release_handle(t);
  } else {
    delete &t;  // never launched
  }
}

void throw_empty_handle(std::uint64_t id, const char* name, const char* operation) {
  throw UsageError(Thread::current().describe() + " called JoinHandle::" + operation +
                   (id == 0 ? std::string(" on an empty handle")
                            : " on the handle of thread '" + std::string(*name != '\0' ? name : "<unnamed>") +
                                  "' (id " + std::to_string(id) + "), which was already joined or detached"));
}

}  // namespace detail

}  // namespace presto
