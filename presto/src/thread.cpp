#include <presto/thread.hpp>

#include <presto/stop_token.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <thread>

#include <sys/syscall.h>
#include <unistd.h>

#include <presto/detail/cpu.hpp>
#include <presto/processor.hpp>
#include <presto/runtime.hpp>
#include <presto/thread_local.hpp>

#include "current.hpp"
#include "dispatch.hpp"
#include "futex.hpp"
#include "runtime_impl.hpp"

namespace presto {

std::string_view to_string(ThreadState state) noexcept {
  switch (state) {
    case ThreadState::created: return "created";
    case ThreadState::ready: return "ready";
    case ThreadState::running: return "running";
    case ThreadState::blocked: return "blocked";
    case ThreadState::terminated: return "terminated";
    case ThreadState::abandoned: return "abandoned";
  }
  return "unknown";
}

Thread::Thread(ThreadAttributes attributes)
    : SynchroObject(std::move(attributes.name)),
      priority_(attributes.priority),
      stack_size_(attributes.stack_size) {
  set_scheduling(attributes);
  queue_hook_.owner = this;
}

Thread::Thread(std::string name, std::size_t stack_size)
    : Thread(ThreadAttributes{.name = std::move(name), .stack_size = stack_size}) {}

Thread::Thread(ExternalTag, std::string name) : Thread(ThreadAttributes{.name = std::move(name)}) {
  external_ = true;
  set_state(ThreadState::running);
}

Thread::~Thread() noexcept(false) {
  const ThreadState s = state();
  if (!external_ && (s == ThreadState::ready || s == ThreadState::running || s == ThreadState::blocked)) {
    std::string message = "presto: " + describe() + " destroyed while " + std::string(to_string(s)) +
                          "; a thread must finish before its object is destroyed\n";
    std::fputs(message.c_str(), stderr);
    std::abort();
  }
  // The runtime's last access to a finished thread is its end word's kEnded, or under this
  // spinlock: wait for both.
  spin_lock();
  spin_unlock();
  if (s == ThreadState::terminated) {
    while ((end_.load(std::memory_order_acquire) & kEnded) == 0) detail::relax_cpu();
  }
  destroy_locals();
  if (!forked_ && exception_ && !joined_ && s == ThreadState::terminated) {
    std::string message = "presto: " + describe() + " was destroyed without being joined; its exception is lost: " +
                          exception_text(exception_) + "\n";
    std::fputs(message.c_str(), stderr);
  }
  check_no_waiters();
}

namespace {
thread_local __attribute__((tls_model("initial-exec"))) std::unique_ptr<Thread> tl_external;

std::string os_thread_name() { return "os-" + std::to_string(static_cast<long>(syscall(SYS_gettid))); }
}  // namespace

__attribute__((noinline, cold)) Thread& Thread::external() {
  if (!tl_external) tl_external.reset(new Thread(ExternalTag{}, os_thread_name()));
  return *tl_external;
}


std::string Thread::describe() const {
  const std::string& n = name().empty() ? std::string("<unnamed>") : name();
  if (external_) return "external thread '" + n + "'";
  return "thread '" + n + "' (id " + std::to_string(id_) + ")";
}

std::unique_ptr<Thread> Thread::newthread(ThreadAttributes attributes) const {
  return std::make_unique<Thread>(std::move(attributes));
}

void Thread::reinitialize(ThreadAttributes attributes) {
  if (!attributes.name.empty() || !name().empty()) set_name(std::move(attributes.name));
  stack_size_ = attributes.stack_size;
  priority_ = attributes.priority;
  set_scheduling(attributes);
  reset_run_state();
}

void Thread::reinitialize_default() noexcept {
  if (!name().empty()) set_name({});
  stack_size_ = 0;
  priority_ = 0;
  scheduling_deadline_.store(kNone, std::memory_order_relaxed);
  affinity_.store(kAnyProcessor, std::memory_order_relaxed);
  reset_run_state();
}

void Thread::reset_run_state() noexcept {
  id_ = 0;
  runtime_ = nullptr;
  waiting_on_ = nullptr;
  end_.store(0, std::memory_order_relaxed);
  deferred_wake_ = nullptr;
  heir_lingers_ = false;
  joined_ = false;
  timed_out_ = false;
  exception_ = nullptr;
  task_.reset();
  set_state(ThreadState::created);
}

void Thread::set_scheduling(const ThreadAttributes& attributes) {
  set_deadline(attributes.deadline);
  affinity_.store(attributes.affinity.value_or(kAnyProcessor), std::memory_order_relaxed);
}

void Thread::check_affinity(const Runtime& rt, std::size_t affinity) const {
  if (affinity != kAnyProcessor && affinity >= rt.processors()) {
    throw UsageError("affinity of " + describe() + " set to processor " + std::to_string(affinity) + ", but runtime '" +
                     std::string(rt.name()) + "' has " + std::to_string(rt.processors()) + " processors");
  }
}

void Thread::set_affinity(std::optional<std::size_t> affinity) {
  const std::size_t a = affinity.value_or(kAnyProcessor);
  if (runtime_ != nullptr) check_affinity(*runtime_, a);
  affinity_.store(a, std::memory_order_relaxed);
}

void Thread::run() {
  if (!task_.has_callable()) {
    throw UsageError(describe() + " has no body: start it with a function, or override run() and call start()");
  }
  task_.invoke();
}

void Thread::start() {
  check_startable();
  launch(nullptr);
}

void Thread::check_startable() const {
  if (external_) throw UsageError(describe() + " stands for an OS thread and cannot be started");
  if (state() != ThreadState::created) {
    throw UsageError(describe() + " was already started (it is " + std::string(to_string(state())) + ")");
  }
}

void Thread::launch(Runtime* rt) {
  if (rt == nullptr) rt = Runtime::current();
  if (rt == nullptr) {
    task_.reset();
    throw UsageError("start of " + describe() + " called on " + Thread::current().describe() +
                     ", which is not a presto thread: use Runtime::start(thread, f, ...)");
  }
  detail::RuntimeImpl::of(*rt).launch(*this);
}

void Thread::await_termination() {
  Thread& me = detail::current_thread();  // read once, before the join's sleep
  if (&me == this) throw UsageError(describe() + " tried to join itself");
  // A join may wait without sleeping (the child runs inline): wake the waiter we signalled now,
  // as a sleep would, so that it is seen waiting for the monitor it needs.
  if (me.deferred_wake_ != nullptr) [[unlikely]] me.wake_deferred();
  if ((end_.load(std::memory_order_acquire) & kEnded) != 0) [[likely]] {  // over: no lock needed
    if (const char* why = join_obstacle(state())) {
      spin_lock();
      join_failed(me, why);
    }
    return;
  }
  spin_lock();
  ThreadState s = state();
  if (const char* why = join_obstacle(s)) join_failed(me, why);
  if ((end_.load(std::memory_order_acquire) & kEnded) == 0) {  // acquire: else the result is read next
    if (has_waiters()) join_failed(me, "it is already being joined by another thread");
    if (s != ThreadState::ready || !detail::Dispatch::join_inline(me, *this)) {
      if ((end_.fetch_or(kJoinerWaits, std::memory_order_acq_rel) & kEnded) == 0) {
        block();
        spin_lock();
      }
    }
    s = state();
    if (s == ThreadState::abandoned) join_failed(me, "it was abandoned when its run ended");
  }
  spin_unlock();
}

void Thread::await_termination(const StopToken& token) {
  Thread& me = detail::current_thread();  // read once, before the join's sleep
  if (&me == this) throw UsageError(describe() + " tried to join itself");
  CancellableWait waiting{*this, token};  // never inline: a thread run inline cannot be left
  spin_lock();
  for (;;) {
    const ThreadState s = state();
    if (const char* why = join_obstacle(s)) join_failed(me, why);
    if ((end_.fetch_or(kJoinerWaits, std::memory_order_acq_rel) & kEnded) != 0) break;
    if (has_waiters()) join_failed(me, "it is already being joined by another thread");
    if (waiting.block() == WaitStatus::cancelled) waiting.throw_cancelled("join");
    spin_lock();
  }
  spin_unlock();
}

const char* Thread::join_obstacle(ThreadState s) const noexcept {
  if (joined_) return "it was already joined";
  if (s == ThreadState::created) return "it was never started";
  if (s == ThreadState::abandoned) return "it was abandoned when its run ended";
  return nullptr;
}

void Thread::join_failed(Thread& me, const char* why) {
  spin_unlock();
  throw UsageError(me.describe() + " cannot join " + describe() + ": " + why);
}

void Thread::throw_wrong_result_type() const {
  throw UsageError("join<R>() on " + describe() + ": its body did not return a value of that type");
}

void Thread::run_body() noexcept {
  try {
    run();
  } catch (...) {
    exception_ = std::current_exception();
  }
  end_body();
}

void Thread::end_body() noexcept {
  destroy_locals();
  if (deferred_wake_ != nullptr) [[unlikely]] detail::Dispatch::wake_deferred_now(*this);
}

void Thread::destroy_locals() noexcept {
  while (detail::LocalEntry* e = locals_) {
    locals_ = e->next;
    e->destroy(e->value);
    delete e;
  }
}

void Thread::sleep(SynchroObject& so) { sleep_on(so, nullptr); }

bool Thread::sleep_until(SynchroObject& so, Clock::time_point deadline) { return sleep_on(so, &deadline); }

bool Thread::sleep_on(SynchroObject& so, const Clock::time_point* deadline) {
  if (this != &Thread::current()) {
    so.spin_unlock();
    throw UsageError(Thread::current().describe() + " tried to put " + describe() +
                     " to sleep; a thread can only put itself to sleep");
  }
  return sleep_as_current(so, deadline);
}

bool Thread::sleep_as_current(SynchroObject& so, const Clock::time_point* deadline) {
  if (!so.waiting_.contains(*this)) {
    so.spin_unlock();
    throw UsageError(describe() + " went to sleep on " + so.describe() + " without being remembered by it");
  }
  if (deferred_wake_ != nullptr && !may_hand_off_to(*deferred_wake_)) [[unlikely]] {
    try {
      wake_deferred();
    } catch (...) {
      so.forget(*this);
      so.spin_unlock();
      throw;
    }
  }
  if (external_) return external_sleep(so, deadline);
  timed_out_ = false;
  if (deadline != nullptr) {
    if (*deadline <= Clock::now()) {
      so.forget(*this);
      so.spin_unlock();
      return false;
    }
    detail::RuntimeImpl::of(*runtime_).timers.add(*this, *deadline);
  }
  set_state(ThreadState::blocked);
  detail::Dispatch::block(*this, so);
  return !std::exchange(timed_out_, false);
}

bool Thread::external_sleep(SynchroObject& so, const Clock::time_point* deadline) {
  set_state(ThreadState::blocked);
  so.spin_unlock();
  const auto blocked = static_cast<std::uint32_t>(ThreadState::blocked);
  bool woken = true;
  while (state_.load(std::memory_order_acquire) == blocked) {
    if (deadline == nullptr || Clock::now() < *deadline) {
      detail::futex_wait(state_, blocked, deadline != nullptr ? std::optional(*deadline) : std::nullopt);
      continue;
    }
    so.spin_lock();
    const bool still_waiting = so.forget(*this);
    so.spin_unlock();
    if (still_waiting) {
      woken = false;
      break;
    }
    // A waker already recalled us; its wakeup is on the way.
    while (state_.load(std::memory_order_acquire) == blocked) detail::futex_wait(state_, blocked);
  }
  if (woken) {
    // The waker's last access to this object follows its state change: wait for it.
    detail::Backoff backoff;
    while (!wake_acknowledged_.load(std::memory_order_acquire)) backoff.pause();
    wake_acknowledged_.store(false, std::memory_order_relaxed);
  }
  set_state(ThreadState::running);
  return woken;
}

void Thread::wake_deferred() {
  Thread& t = *std::exchange(deferred_wake_, nullptr);
  heir_lingers_ = false;
  t.wakeup(*t.waiting_on_);  // recalled, so still waiting there
}

void Thread::release_deferred() {
  // A producer's and a consumer's turns (enter, signal, leave; enter, wait): the signaller's
  // next wait hands the waiter the processor and the monitor (Condition::wait, Dispatch::block)
  // instead of a wake-up through the ready queue now and a dispatch from it then. Only where
  // that is all it changes: no lock held any more (a lock still held may be the one the waiter
  // needs next), threads and scheduler of the built-in classes (a subclass sees every wake-up
  // when it happens), and one processor, so no other could have run the waiter meanwhile.
  if (detail::Dispatch::may_defer_past_release(*this, *deferred_wake_)) {
    heir_lingers_ = true;
    return;
  }
  wake_deferred();
}

void Thread::refuse_wakeup(const SynchroObject& so) const {
  if (waiting_on_ != &so || queue_hook_.list != nullptr) {
    throw UsageError(Thread::current().describe() + " tried to wake " + describe() + " from " + so.describe() +
                     ", but it is not asleep there (it is " + std::string(to_string(state())) +
                     (waiting_on_ != nullptr && waiting_on_ != &so ? ", waiting on " + waiting_on_->describe() : "") +
                     (queue_hook_.list != nullptr ? ", still queued" : "") + ")");
  }
  throw UsageError(Thread::current().describe() + " tried to wake " + describe() + ", which is not asleep (it is " +
                   std::string(to_string(state())) + ")");
}

void Thread::wakeup(SynchroObject& so) {
  // Only the waker that recalled this thread from `so` (under its spinlock, or seeing it free
  // as Condition::signal does, once the thread was switched out) gets past this, and nobody
  // else changes the state of a thread asleep: a plain store below, as Dispatch::heir_or_next
  // makes for the heir (a compare-exchange was a locked instruction on every wake-up).
  if (!recalled_asleep_on(so)) [[unlikely]] refuse_wakeup(so);
  // Everything the waker needs is read or written before the state changes: from then on an
  // external thread may run on (a presto thread only once make_ready has queued it).
  const bool external = external_;
  waiting_on_ = nullptr;
  set_state(ThreadState::ready);
  if (external) {
    detail::futex_wake_one(state_);
    wake_acknowledged_.store(true, std::memory_order_release);  // our last access
    return;
  }
  detail::Dispatch::make_ready(*this);
}

void Thread::yield() {
  if (Processor* p = detail::current_processor(); p != nullptr && p == processor_ && p->current_ == this) [[likely]] {
    detail::Dispatch::yield(*p, *this);
    return;
  }
  if (this != &Thread::current()) {
    throw UsageError(Thread::current().describe() + " tried to make " + describe() +
                     " yield; a thread can only yield itself");
  }
  if (external_) {
    std::this_thread::yield();
    return;
  }
  detail::Dispatch::yield(*processor_, *this);
}

}  // namespace presto
