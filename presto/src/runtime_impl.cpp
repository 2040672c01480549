#include "runtime_impl.hpp"

#include <cstdlib>
#include <random>
#include <sstream>
#include <typeinfo>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <presto/lock.hpp>
#include <presto/fifo_pool.hpp>
#include <presto/local_queue_pool.hpp>

#include "asymmetric_fence.hpp"
#include "current.hpp"
#include "dispatch.hpp"
#include "futex.hpp"
#include "quantum_timer.hpp"
#include "race_point.hpp"
#include "stack_guard.hpp"

namespace presto::detail {

void set_current_processor(Processor* p) noexcept;  // processor.cpp

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

std::uint64_t parse_unsigned(const char* variable, const std::string& text, bool positive) {
  std::size_t used = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &used, 10);
  } catch (...) {
    used = 0;
  }
  if (used != text.size() || text.empty() || text[0] == '-' || (positive && value == 0)) {
    throw UsageError(std::string(variable) + "='" + text + "' is not a " +
                     (positive ? "positive " : "non-negative ") + "integer");
  }
  return value;
}

std::shared_ptr<spdlog::logger> make_logger(const std::string& name) {
  auto logger = std::make_shared<spdlog::logger>(name, std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  logger->set_pattern("[%H:%M:%S.%e] [%n] [%l] %v");
  logger->set_level(spdlog::level::warn);
  return logger;
}

}  // namespace

RuntimeImpl::RuntimeImpl(Runtime& runtime, RuntimeConfig config)
    : rt(runtime),
      logger(config.logger ? std::move(config.logger) : make_logger(config.name)),
      name(std::move(config.name)),
      stacks(*logger) {
  for (const char* variable : {"PRESTO_LOG", "PRESTO_LOG_LEVEL"}) {  // the second wins
    if (std::string level = env(variable); !level.empty()) {
      auto l = spdlog::level::from_str(level);
      if (l == spdlog::level::off && level != "off") {
        throw UsageError(std::string(variable) + "='" + level +
                         "' is not one of trace, debug, info, warn, error, critical, off");
      }
      logger->set_level(l);
    }
  }
  std::size_t n = config.processors;
  if (std::string v = env("PRESTO_PROCESSORS"); !v.empty()) {
    n = resolve_processors(parse_unsigned("PRESTO_PROCESSORS", v, false), "PRESTO_PROCESSORS");
  } else {
    n = resolve_processors(n);
  }
  seed = config.seed;
  if (std::string v = env("PRESTO_SEED"); !v.empty()) seed = parse_unsigned("PRESTO_SEED", v, false);
  if (seed == 0) seed = (static_cast<std::uint64_t>(std::random_device{}()) << 32) | std::random_device{}();
  debug_logging = logger->should_log(spdlog::level::debug);
  stack_size = StackAllocator::round_size(config.stack_size);
  inline_joins = config.inline_joins;
  stack_reserve = inline_joins ? 2 * stack_size : stack_size;
  idle_spin = config.idle_spin;
  quantum = config.quantum;
  if (std::string v = env("PRESTO_QUANTUM_US"); !v.empty()) {
    quantum = std::chrono::microseconds(parse_unsigned("PRESTO_QUANTUM_US", v, false));
  }
  if (quantum.count() < 0) throw UsageError("RuntimeConfig::quantum is negative");
  if (quantum.count() != 0) {  // only then is the process-wide SIGURG handler installed
    if (const char* why = QuantumTimer::unavailable()) {
      logger->info("runtime '{}': {}; quantum ignored", name, why);
      quantum = std::chrono::microseconds{0};
    }
  }
  if (std::string v = env("PRESTO_LAZY_FORKS"); !v.empty()) config.lazy_forks = parse_unsigned("PRESTO_LAZY_FORKS", v, false) != 0;
  // A record run by its joiner is not a thread the quantum handler could preempt.
  lazy_forks = config.lazy_forks && inline_joins && quantum.count() == 0;

  owned_scheduler = config.scheduler ? std::move(config.scheduler) : std::make_unique<Scheduler>(nullptr);
  if (config.pool) {
    owned_scheduler->owned_pool_ = std::move(config.pool);
    owned_scheduler->pool_.store(owned_scheduler->owned_pool_.get(), std::memory_order_release);
  }
  owned_prototype = config.thread_prototype ? std::move(config.thread_prototype) : std::make_unique<Thread>();
  processor_prototype = config.processor_prototype ? std::move(config.processor_prototype)
                                                   : std::make_unique<Processor>();
  free_lists.emplace(config.free_lists, config.thread_cache, ProcessorState::kStackCache, n);
  processors.reserve(std::max(n, ProcessorSet::kMinCapacity));
  os_threads.resize(processors.capacity());
  for (std::size_t i = 0; i < n; ++i) add_processor();
  processors.set_active(n);
  parked.reserve(processors.capacity());
  install_overflow_handler();
  asymmetric_fences();
}

void RuntimeImpl::allow_records() noexcept {
  records_allowed.store(lazy_forks && typeid(*owned_prototype) == typeid(Thread), std::memory_order_release);
}

void RuntimeImpl::add_processor() {
  std::unique_ptr<Processor> p = processor_prototype->newprocessor();
  p->runtime_ = &rt;
  p->index_ = processors.made();
  p->state_ = std::make_unique<ProcessorState>();
  free_lists->prepare(p->state_->free);
  processors.add(std::move(p));
}

void RuntimeImpl::adopt(Scheduler& s) {
  s.runtime_ = &rt;
  s.plain_ = typeid(s) == typeid(Scheduler);
  s.pool().attach(rt);
}

void RuntimeImpl::refresh_own_queues() noexcept {
  // Release, as the scheduler's and the pool's own pointers: a processor that reads its word
  // (acquire) sees the pool and its queues as its attach left them.
  const Scheduler& s = *scheduler.load(std::memory_order_relaxed);  // the caller published it
  processors.for_each([&](Processor& p) { p.own_queue_.store(Dispatch::own_queue(s, p), std::memory_order_release); });
}

void RuntimeImpl::install() {
  adopt(*owned_scheduler);
  scheduler.store(owned_scheduler.get(), std::memory_order_release);
  refresh_own_queues();
  prototype.store(owned_prototype.get(), std::memory_order_release);
  allow_records();
  logger->info("runtime '{}': {} processor{}, scheduler '{}', pool '{}', {} KiB stacks, quantum {} us, seed {} (replay with PRESTO_SEED={})",
               name, processors.active(), processors.active() == 1 ? "" : "s", owned_scheduler->name(),
               owned_scheduler->pool().name(), stack_size / 1024, quantum.count(), seed, seed);
}

RuntimeImpl::~RuntimeImpl() {
  os_threads.clear();  // idle: no run is in progress
  abandon_survivors();
  std::vector<Thread*> kept;
  retained.for_each([&](Thread& t) { kept.push_back(&t); });
  for (Thread* t : kept) {
    retained.remove(*t, false);
    if (t->forked_) delete t;  // user-owned ones are their owners' to destroy
  }
  processors.for_each([&](Processor& p) { release_caches(p); });
  free_lists->clear_shared(stacks);
}

// --- component replacement ------------------------------------------------------------

void RuntimeImpl::quiesce() noexcept {
  // The caller has published the new component. Each processor's own-queue word follows it
  // first. After the heavy fence, a processor either is seen inside its gate (and may hold the
  // old component or the old word: wait for it to leave) or will read the new ones when it
  // next enters.
  refresh_own_queues();
  heavy_fence();
  processors.for_each([](Processor& p) {
    Backoff backoff;
    while (p.in_gate_.load(std::memory_order_acquire)) backoff.pause();
  });
  external_gate.lock();
  external_gate.unlock();
}

void RuntimeImpl::drain(ThreadPool& from, ThreadPool& to) {
  std::size_t moved = 0;
  processors.for_each([&](Processor& p) {
    while (Thread* t = from.get(p)) {
      to.put(*t);
      ++moved;
    }
  });
  if (from.size() != 0) {
    logger->error("pool '{}' still holds {} threads after being drained: they are lost", from.name(), from.size());
  }
  logger->debug("moved {} ready threads from pool '{}' to '{}'", moved, from.name(), to.name());
}

std::unique_ptr<ThreadPool> RuntimeImpl::replace_pool(Scheduler& s, std::unique_ptr<ThreadPool> next) {
  if (!next) throw UsageError("replace_pool: the new pool is null");
  std::lock_guard lock(replace_mutex);
  replacing.fetch_add(1, std::memory_order_seq_cst);
  next->attach(rt);
  std::unique_ptr<ThreadPool> old = std::move(s.owned_pool_);
  s.owned_pool_ = std::move(next);
  s.pool_.store(s.owned_pool_.get(), std::memory_order_release);
  quiesce();  // no processor is inside `old` any more, and none can enter it
  drain(*old, *s.owned_pool_);
  replacing.fetch_sub(1, std::memory_order_seq_cst);
  wake_all();  // ready threads moved: let idle processors look, and re-check halting
  logger->debug("pool '{}' replaced by '{}'", old->name(), s.owned_pool_->name());
  return old;
}

std::unique_ptr<Scheduler> RuntimeImpl::replace_scheduler(std::unique_ptr<Scheduler> next) {
  if (!next) throw UsageError("replace_scheduler: the new scheduler is null");
  std::lock_guard lock(replace_mutex);
  replacing.fetch_add(1, std::memory_order_seq_cst);
  adopt(*next);
  std::unique_ptr<Scheduler> old = std::move(owned_scheduler);
  owned_scheduler = std::move(next);
  scheduler.store(owned_scheduler.get(), std::memory_order_release);
  quiesce();
  drain(old->pool(), owned_scheduler->pool());
  old->runtime_ = nullptr;
  replacing.fetch_sub(1, std::memory_order_seq_cst);
  wake_all();
  logger->debug("scheduler '{}' replaced by '{}'", old->name(), owned_scheduler->name());
  return old;
}

std::unique_ptr<Thread> RuntimeImpl::set_thread_prototype(std::unique_ptr<Thread> next) {
  if (!next) throw UsageError("set_thread_prototype: the new prototype is null");
  if (next->state() != ThreadState::created) {
    throw UsageError("set_thread_prototype: " + next->describe() + " was started; a prototype must be a fresh thread");
  }
  std::lock_guard lock(replace_mutex);
  std::unique_ptr<Thread> old = std::move(owned_prototype);
  owned_prototype = std::move(next);
  prototype.store(owned_prototype.get(), std::memory_order_release);
  allow_records();  // records already made become plain threads, as forks under the old prototype would be
  generation.fetch_add(1, std::memory_order_release);  // cached control blocks of `old` go stale
  quiesce();  // nobody is still cloning `old`
  return old;
}

// --- threads ---------------------------------------------------------------------------

Thread& RuntimeImpl::make_thread(ThreadAttributes* given) {
  Processor* p = detail::current_processor();
  if (p != nullptr && &p->runtime() != &rt) p = nullptr;
  Thread* t = nullptr;
  std::unique_ptr<Thread> made;
  std::uint32_t gen = 0;
  // The attributes to build or reinitialize a block with, made only on those paths: a default
  // fork of a plain thread takes neither.
  auto attributes = [given] { return given != nullptr ? std::move(*given) : ThreadAttributes{}; };
  auto clone = [&] {
    gen = generation.load(std::memory_order_acquire);
    made = prototype.load(std::memory_order_acquire)->newthread(attributes());
  };
  if (p != nullptr) {
    Dispatch::enter(*p);
    while (t == nullptr && (t = free_lists->take_block(p->state_->free)) != nullptr) {
      if (t->generation_ != generation.load(std::memory_order_acquire)) {  // made by a replaced prototype
        delete t;
        t = nullptr;
      }
    }
    try {
      if (t == nullptr) clone();
    } catch (...) {
      Dispatch::leave(*p);
      throw;
    }
    Dispatch::leave(*p);
  } else {
    std::lock_guard gate(external_gate);
    clone();
  }
  if (t != nullptr) {
    std::atomic<std::uint64_t>& recycled = p->state_->recycled;  // written by p only
    recycled.store(recycled.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (given == nullptr && t->plain_) {
      t->reinitialize_default();  // what Thread::reinitialize({}) does, without building the attributes
    } else {
      t->reinitialize(attributes());
    }
  } else {
    if (!made) throw UsageError("the thread prototype's newthread() returned null");
    t = made.release();
    t->generation_ = gen;
    t->plain_ = typeid(*t) == typeid(Thread);  // once: a recycled block keeps its class
    threads_created.fetch_add(1, std::memory_order_relaxed);
  }
  t->forked_ = true;
  return *t;
}

void RuntimeImpl::launch(Thread& t) {
  t.check_affinity(rt, t.affinity_.load(std::memory_order_relaxed));
  t.runtime_ = &rt;
  if (!t.forked_) t.plain_ = typeid(t) == typeid(Thread);  // forked: set when its block was made
  Processor* p = detail::current_processor();
  if (p != nullptr && &p->runtime() != &rt) p = nullptr;
  if (p != nullptr) {
    ProcessorState& ps = *p->state_;
    t.id_ = take_id(ps);
    ps.registry.add(t);
  } else {
    t.id_ = id_source.fetch_add(1, std::memory_order_relaxed);
    external_registry.add_shared(t);
  }
  t.set_state(ThreadState::ready);
  try {
    Dispatch::make_ready(t);
  } catch (...) {
    t.registry_->remove(t, p != nullptr && t.registry_ == &p->state_->registry);
    t.set_state(ThreadState::created);
    throw;
  }
}

void RuntimeImpl::recycle(Thread& t) noexcept {
  t.task_.reset();
  t.exception_ = nullptr;
  Processor* p = detail::current_processor();
  if (p != nullptr && &p->runtime() == &rt && t.state() == ThreadState::terminated &&
      t.generation_ == generation.load(std::memory_order_acquire)) {
    Dispatch::enter(*p);
    const bool kept = free_lists->keep_block(p->state_->free, t);
    Dispatch::leave(*p);
    if (kept) return;
  }
  delete &t;
}

void RuntimeImpl::finished_holding_locks(Thread& t) noexcept {
  std::string message = t.describe() + " finished while holding " + std::to_string(t.locks_held_) +
                        " lock(s) or monitor(s); they stay held forever";
  logger->error("{}", message);
  if (t.forked_) retained.add_shared(t);
  try {
    throw UsageError(message);
  } catch (...) {
    request_stop(std::current_exception());
  }
}

void RuntimeImpl::release_handle(Thread& t) noexcept {
  // Under the spinlock, so that an end or an abandonment that took it is over before the
  // thread is seen finished.
  t.spin_lock();
  const bool finished = (t.end_.fetch_or(Thread::kDetached, std::memory_order_acq_rel) & Thread::kEnded) != 0;
  // A finished thread's registry_ was last written before its end word's kEnded, so it is
  // read here only once the thread is seen finished.
  const bool kept = finished && t.registry_ == &retained;  // kept until the runtime dies
  std::exception_ptr orphan = finished && t.state() == ThreadState::terminated ? t.exception_ : nullptr;
  t.spin_unlock();
  if (!finished || kept) return;  // an unfinished thread recycles itself when it finishes
  if (orphan) note_orphan_exception(t.describe(), orphan);
  recycle(t);
}

void RuntimeImpl::release_joined(Thread& t) noexcept {
  // The join saw t's end (kEnded), set by Dispatch::end_thread's last access, and took its
  // exception: nothing about t can change any more.
  if (t.registry_ != &retained) recycle(t);  // else kept until the runtime dies
}

void RuntimeImpl::note_orphan_exception(const std::string& who, std::exception_ptr e) noexcept {
  logger->error("{} ended with an exception nobody joined: {}", who, exception_text(e));
  if (running.load(std::memory_order_acquire)) request_stop(std::move(e));
}

std::vector<BlockedThread> RuntimeImpl::blocked_threads() {
  std::vector<BlockedThread> out;
  auto visit = [&](Thread& t) {
    if (t.state() != ThreadState::blocked) return;
    std::string on = "an object that was destroyed";
    if (SynchroObject* so = t.waiting_on_; so == &fork_ends) {
      fork_ends.spin_lock();
      on = fork_ends.describe_wait(t);  // the fork it joins
      fork_ends.spin_unlock();
    } else if (so != nullptr) {
      on = so->describe();
      if (auto* lock = dynamic_cast<Lock*>(so); lock != nullptr && lock->owner() != nullptr) {
        on += ", held by " + lock->owner()->describe();
      }
    }
    out.push_back(BlockedThread{t.describe(), t.id(), std::move(on)});
  };
  processors.for_each([&](Processor& p) { p.state_->registry.for_each(visit); });
  external_registry.for_each(visit);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

// --- running ---------------------------------------------------------------------------

void RuntimeImpl::wake_if_needed() noexcept {
  // Pairs with the fence in Processor::park(): either the parker sees the new thread, or we
  // see the parker. (An asymmetric pair, membarrier in park, was tried: Figure 3 on two
  // processors, whose idle processor parks often, got slower.)
  full_fence();
  if (spinning.load(std::memory_order_relaxed) == 0 && sleepers.load(std::memory_order_relaxed) != 0) wake_one();
}

void RuntimeImpl::wake_one() noexcept {
  Processor* q = nullptr;
  bool was_polling = false;
  parked_lock.lock();
  if (!parked.empty()) {
    q = parked.back();
    parked.pop_back();
    sleepers.fetch_sub(1, std::memory_order_relaxed);
    was_polling = q == polling;
    // q counts as spinning until it has looked for work (Go's wakep does the same): a putter
    // that comes before it wakes up does not wake another for the same work. (Figure 3's
    // pattern, one forker on 16 processors, paid a futex wake on most forks without it.)
    if (!q->state_->spin_token) {
      q->state_->spin_token = true;
      spinning.fetch_add(1, std::memory_order_seq_cst);
    }
  }
  parked_lock.unlock();
  if (q != nullptr) unpark(*q, was_polling);
}

void RuntimeImpl::unpark(Processor& q, bool was_polling) noexcept {
  wakeups.fetch_add(1, std::memory_order_relaxed);
  if (was_polling) {
    poller.load(std::memory_order_acquire)->wake();
    return;
  }
  q.park_word_.store(1, std::memory_order_release);
  futex_wake_one(q.park_word_);
}

void RuntimeImpl::wake_processor(std::size_t index) noexcept {
  if (index >= processors.active()) return;
  full_fence();  // as in wake_if_needed
  if (sleepers.load(std::memory_order_relaxed) == 0) return;
  Processor* q = &processors[index];
  bool was_parked = false;
  bool was_polling = false;
  parked_lock.lock();
  for (auto it = parked.begin(); it != parked.end(); ++it) {
    if (*it == q) {
      parked.erase(it);
      sleepers.fetch_sub(1, std::memory_order_relaxed);
      was_parked = true;
      was_polling = q == polling;
      break;
    }
  }
  parked_lock.unlock();
  if (was_parked) unpark(*q, was_polling);
}

void RuntimeImpl::poke() noexcept {
  recheck.store(true, std::memory_order_seq_cst);
  wake_one();
}

void RuntimeImpl::wake_all() noexcept {
  parked_lock.lock();
  std::vector<Processor*> all;
  all.swap(parked);
  parked.reserve(processors.capacity());
  sleepers.store(0, std::memory_order_relaxed);
  Processor* was_polling = polling;
  parked_lock.unlock();
  for (Processor* q : all) unpark(*q, q == was_polling);
}

void RuntimeImpl::request_stop(std::exception_ptr reason) noexcept {
  halt_lock.lock();
  if (!stop.load(std::memory_order_relaxed)) {
    stop_reason = std::move(reason);
    stop.store(true, std::memory_order_seq_cst);
  }
  halt_lock.unlock();
  wake_all();
}

// Fails while a wake-up may still come. Whatever makes such a failure stale is followed by a
// new check, or the run would never end: a processor entering its idle loop checks; the last
// timer firing and the last KeepAlive dropped poke(); a replacement ends with wake_all(); and
// the IdlePoller's waiting() drops inside a poll, whose processor returns to its idle loop
// (Processor::idle, Processor::park), or where a KeepAlive or a running thread covers it
// (presto/idle_poller.hpp).
bool RuntimeImpl::try_halt(Processor& p) {
  std::lock_guard lock(halt_lock);
  if (stop.load(std::memory_order_relaxed)) return true;
  const std::uint64_t exits = idle_exits.load(std::memory_order_seq_cst);
  if (idle.load(std::memory_order_seq_cst) != live.load(std::memory_order_seq_cst)) return false;
  IdlePoller* io = poller.load(std::memory_order_acquire);
  // What may still make a thread ready is read before the pool: a timer is counted pending
  // until its thread is in the pool (TimerService), so a count read as zero here means that
  // thread is seen below. Read the other way round, a timer firing between the two reads went
  // unseen by both, and the run halted with its thread ready (a TSan run of waiting_tests did,
  // 2026-11-28).
  if (timers.pending() != 0 || (io != nullptr && io->waiting()) || keep_alives.load(std::memory_order_seq_cst) != 0 ||
      replacing.load(std::memory_order_seq_cst) != 0 || Dispatch::ready_count(p) != 0) {
    return false;
  }
  full_fence();  // orders the pool read above before the count read below
  if (idle_exits.load(std::memory_order_seq_cst) != exits) return false;  // one left to run a thread
  revived.store(false, std::memory_order_relaxed);
  halting.store(true, std::memory_order_seq_cst);
  Dispatch::enter(p);
  try {
    scheduler.load(std::memory_order_acquire)->halt();
  } catch (...) {
    Dispatch::leave(p);
    halting.store(false, std::memory_order_seq_cst);
    stop_reason = std::current_exception();
    stop.store(true, std::memory_order_seq_cst);
    return true;
  }
  Dispatch::leave(p);
  halting.store(false, std::memory_order_seq_cst);
  if (revived.load(std::memory_order_acquire)) return false;  // halt() made threads ready: go on
  logger->debug("system halted");
  stop.store(true, std::memory_order_seq_cst);
  return true;
}

void RuntimeImpl::idle_loop(Processor& p) {
  idle.fetch_add(1, std::memory_order_seq_cst);
  struct Leave {
    RuntimeImpl& r;
    // Not idle any more, then counted out, in this order: a halter that still saw this
    // processor idle read the exit count before it moved, so if this processor then takes a
    // thread from the pool, the halter either still sees that thread or sees the count move.
    // (Counted out first, a halter could read the new count, then "all idle", then the pool
    // this processor had just emptied, and halt while the thread runs.)
    ~Leave() {
      r.idle.fetch_sub(1, std::memory_order_seq_cst);
      r.idle_exits.fetch_add(1, std::memory_order_seq_cst);
    }
  } leave{*this};
  for (;;) {
    if (p.work_available()) break;
    if (idle.load(std::memory_order_seq_cst) == live.load(std::memory_order_seq_cst) && try_halt(p)) {
      wake_all();
      break;
    }
    p.idle();
  }
}

void RuntimeImpl::processor_main(Processor& p) noexcept {
  set_current_processor(&p);
  AltStack altstack;
  QuantumTimer quantum_timer(quantum);
  p.state_->quantum_timer = &quantum_timer;
  Dispatch::start_processor(p);
  try {
    p.on_start();
    for (;;) {
      if (Dispatch::dispatch_from_native(p)) continue;
      if (stopping()) break;
      if (p.phase_.load(std::memory_order_acquire) != Processor::Phase::active && try_retire(p)) break;
      idle_loop(p);
    }
    p.on_stop();
  } catch (...) {
    logger->error("processor {} failed; ending the run", p.index());
    request_stop(std::current_exception());
  }
  p.state_->quantum_timer = nullptr;
  set_current_processor(nullptr);
}

bool RuntimeImpl::try_retire(Processor& p) noexcept {
  auto retiring = Processor::Phase::retiring;
  if (!p.phase_.compare_exchange_strong(retiring, Processor::Phase::retired, std::memory_order_acq_rel)) {
    return false;  // added back meanwhile: go on
  }
  // Nothing runs here any more. The threads it made ready are in the pool, which others
  // share; its caches go back to the shared allocators.
  PRESTO_RACE_POINT("RuntimeImpl::try_retire: between the phase and the release of the caches");
  Dispatch::enter(p);
  release_caches(p);
  Dispatch::leave(p);
  live.fetch_sub(1, std::memory_order_seq_cst);
  if (Dispatch::ready_count(p) != 0) wake_if_needed();
  poke();  // the others may be idle: one of them checks whether the system has halted
  logger->debug("processor {} retired", p.index());
  return true;
}

void RuntimeImpl::release_caches(Processor& p) noexcept {
  ThreadCache::clear(p.state_->free, stacks);
  release_records(*p.state_);
}

void RuntimeImpl::start_processor(std::size_t i) {
  if (!os_threads[i]) {
    os_threads[i] = std::make_unique<HostThread>(name + "-" + std::to_string(i), [this, i] { processor_main(processors[i]); });
  }
  os_threads[i]->wait_idle();  // retired: its loop has ended
  processors[i].phase_.store(Processor::Phase::active, std::memory_order_release);
  live.fetch_add(1, std::memory_order_seq_cst);
  try {
    os_threads[i]->start();
  } catch (...) {
    processors[i].phase_.store(Processor::Phase::retired, std::memory_order_release);
    live.fetch_sub(1, std::memory_order_seq_cst);
    throw;
  }
}

void RuntimeImpl::resize_pool() {
  // ThreadPool::attach may only run while no other method of the pool does: park the ready
  // threads in a holding pool meanwhile, as replace_pool would.
  Scheduler& s = *scheduler.load(std::memory_order_acquire);
  auto holding = std::unique_ptr<ThreadPool>(std::make_unique<FifoPool>());
  holding->attach(rt);
  std::unique_ptr<ThreadPool> pool = std::exchange(s.owned_pool_, std::move(holding));
  s.pool_.store(s.owned_pool_.get(), std::memory_order_release);
  quiesce();
  PRESTO_RACE_POINT("RuntimeImpl::resize_pool: between the quiesce and the drain");
  drain(*pool, *s.owned_pool_);
  std::exception_ptr failed;
  try {
    pool->attach(rt);
  } catch (...) {
    failed = std::current_exception();
  }
  holding = std::exchange(s.owned_pool_, std::move(pool));
  s.pool_.store(s.owned_pool_.get(), std::memory_order_release);
  quiesce();
  drain(*holding, *s.owned_pool_);
  if (failed) std::rethrow_exception(failed);
}

void RuntimeImpl::set_processors(std::size_t n) {
  if (n == 0) throw UsageError("set_processors(0): runtime '" + name + "' needs at least processor 0");
  if (n > processors.capacity()) {
    throw UsageError("set_processors(" + std::to_string(n) + "): runtime '" + name + "' can have at most " +
                     std::to_string(processors.capacity()) + " processors");
  }
  // More processors could run a waiter the caller left deferred past a monitor's release
  // (Thread::release_deferred): it is woken first. (A body run in a join leaves its joiner's
  // waiter with the thread whose stack it runs on: a joiner that became a thread woke its own.)
  if (Processor* p = current_processor(); p != nullptr && &p->runtime() == &rt) {
    if (Thread* me = Dispatch::thread_on_stack(*p); me != nullptr && me->heir_lingers_) me->wake_deferred();
  }
  std::lock_guard lock(replace_mutex);
  std::lock_guard threads_lock(os_threads_mutex);
  const std::size_t old = processors.active();
  if (n == old) return;
  replacing.fetch_add(1, std::memory_order_seq_cst);
  struct Done {
    RuntimeImpl& r;
    ~Done() {
      r.replacing.fetch_sub(1, std::memory_order_seq_cst);
      r.wake_all();  // retiring processors leave their idle loop; the others look for work
    }
  } done{*this};
  const bool started = processors_started && !stopping();
  while (processors.made() < n) add_processor();
  std::vector<std::size_t> to_start;
  for (std::size_t i = old; i < n; ++i) {  // growing: reuse a retiring processor, else start one
    auto retiring = Processor::Phase::retiring;
    if (processors[i].phase_.compare_exchange_strong(retiring, Processor::Phase::active, std::memory_order_acq_rel)) {
      continue;
    }
    processors[i].phase_.store(Processor::Phase::active, std::memory_order_release);
    if (started) to_start.push_back(i);
  }
  for (std::size_t i = n; i < old; ++i) {  // shrinking: each leaves at its next dispatch
    processors[i].phase_.store(started ? Processor::Phase::retiring : Processor::Phase::retired,
                               std::memory_order_release);
  }
  processors.set_active(n);
  resize_pool();
  for (std::size_t i : to_start) start_processor(i);
  logger->debug("runtime '{}': {} processors (were {})", name, n, old);
}

void RuntimeImpl::run_until_halt(Thread& main) {
  if (Processor::current() != nullptr) {
    throw UsageError("Runtime::run called on " + Thread::current().describe() +
                     ", which already runs inside a runtime");
  }
  if (running.exchange(true, std::memory_order_acq_rel)) {
    throw UsageError("Runtime::run: runtime '" + name + "' is already running");
  }
  stop.store(false, std::memory_order_relaxed);
  stop_reason = nullptr;
  main_thread = &main;
  timers.start();
  {
    std::lock_guard lock(os_threads_mutex);
    processors.for_each([](Processor& p) { p.phase_.store(Processor::Phase::retired, std::memory_order_relaxed); });
    processors[0].phase_.store(Processor::Phase::active, std::memory_order_relaxed);
    live.store(1, std::memory_order_seq_cst);
    processors_started = true;
    try {
      for (std::size_t i = 1; i < processors.active(); ++i) start_processor(i);
    } catch (...) {
      request_stop(std::current_exception());
    }
  }
  processor_main(processors[0]);
  {
    std::lock_guard lock(os_threads_mutex);  // set_processors starts no more threads
    processors_started = false;
    for (auto& t : os_threads) {
      if (t) t->wait_idle();
    }
  }
  timers.stop();
  main_thread = nullptr;
  abandon_survivors();
  if (IdlePoller* io = poller.load(std::memory_order_acquire)) io->run_ended();
  std::exception_ptr reason = std::exchange(stop_reason, nullptr);
  stop.store(false, std::memory_order_relaxed);
  idle.store(0, std::memory_order_relaxed);
  running.store(false, std::memory_order_release);
  if (reason) std::rethrow_exception(reason);
}

void RuntimeImpl::abandon_survivors() {
  // Every processor has stopped: nothing runs, and no thread will ever run again. Take each
  // survivor off its pool or wait queue, drop its stack without unwinding it, and free what
  // the runtime owns. Queued lazy forks become threads first, to be abandoned as threads.
  Dispatch::materialize_all_queued(*this);
  std::vector<Thread*> survivors;
  auto collect = [&](Thread& t) { survivors.push_back(&t); };
  processors.for_each([&](Processor& p) { p.state_->registry.for_each(collect); });
  external_registry.for_each(collect);
  if (survivors.empty()) return;
  const std::size_t programs = survivors.size();  // and after them, unnamed, the runners hosting them
  processors.for_each([&](Processor& p) { p.state_->runners.for_each(collect); });

  ThreadPool& pool = scheduler.load(std::memory_order_acquire)->pool();
  processors.for_each([&](Processor& p) {
    while (pool.get(p) != nullptr) {
    }
  });
  for (Thread* t : survivors) {
    if (SynchroObject* so = t->waiting_on_) {
      so->spin_lock();
      so->forget(*t);
      if (so == &fork_ends) fork_ends.remove_waits_of(*t);  // linked from a stack about to be dropped
      so->spin_unlock();
    }
  }
  std::ostringstream names;
  constexpr std::size_t kNamed = 20;  // enough to see what happened; the count says the rest
  for (std::size_t i = 0; i < programs && i < kNamed; ++i) {
    names << "\n  " << survivors[i]->describe() << " (" << to_string(survivors[i]->state()) << ")";
  }
  if (programs > kNamed) names << "\n  ... and " << programs - kNamed << " more";
  for (Thread* t : survivors) {
    t->registry_->remove(*t, false);
    Dispatch::discard_stack(*t, stacks);
    t->task_.reset();
    t->destroy_locals();
    t->waiting_on_ = nullptr;
    t->spin_lock();
    t->set_state(ThreadState::abandoned);
    const std::uint32_t end = t->end_.fetch_or(Thread::kEnded, std::memory_order_acq_rel);  // no end to wait for
    const bool free_it = t->forked_ && (end & Thread::kDetached) != 0;
    // Its handle may be lost with an abandoned stack: freed with the runtime. Registered before
    // the spinlock is released, so that a handle released meanwhile sees it kept.
    if (!free_it && t->forked_) retained.add_shared(*t);
    t->spin_unlock();
    if (free_it) delete t;
  }
  logger->warn("run of '{}' ended with {} still alive, abandoned:{}", name,
               programs == 1 ? std::string("1 thread") : std::to_string(programs) + " threads",
               names.str());
}

}  // namespace presto::detail
