#include "dispatch.hpp"

#include <spdlog/spdlog.h>

#include <presto/runtime.hpp>
#include <presto/scheduler.hpp>

#include "runtime_impl.hpp"
#include "stack_allocator.hpp"
#include "stack_guard.hpp"

namespace presto::detail {

namespace {
RuntimeImpl& impl_of(const Processor& p) noexcept { return RuntimeImpl::of(p.runtime()); }
}  // namespace

Thread* Dispatch::next_for(Processor& p) {
  RuntimeImpl& r = impl_of(p);
  if (r.stopping()) return nullptr;
  return r.scheduler.load(std::memory_order_acquire)->next(p);
}

std::size_t Dispatch::ready_count(Processor& p) noexcept {
  enter(p);
  std::size_t n = impl_of(p).scheduler.load(std::memory_order_acquire)->pool().size();
  leave(p);
  return n;
}

void Dispatch::yield(Thread& self) {
  Processor& p = *self.processor_;
  enter(p);
  Thread* next = next_for(p);
  if (next == nullptr && !impl_of(p).stopping()) {
    leave(p);  // nothing else is ready: keep running
    return;
  }
  p.after_ = Processor::After::requeue;
  switch_to(p, &self, next);
}

void Dispatch::block(Thread& self, SynchroObject& so) {
  Processor& p = *self.processor_;
  enter(p);
  Thread* next = nullptr;
  try {
    next = next_for(p);
  } catch (...) {
    // A pool that throws here has broken its contract; run nothing else on this processor
    // rather than lose the sleeper, and let the native context report it.
    impl_of(p).request_stop(std::current_exception());
  }
  p.after_ = Processor::After::unlock;
  p.unlock_ = &so;
  switch_to(p, &self, next);
}

void Dispatch::finish(Thread& self) noexcept {
  Processor& p = *self.processor_;
  enter(p);
  Thread* next = nullptr;
  try {
    next = next_for(p);
  } catch (...) {
    impl_of(p).request_stop(std::current_exception());
  }
  p.after_ = Processor::After::finish;
  switch_to(p, &self, next);
  __builtin_unreachable();
}

bool Dispatch::dispatch_from_native(Processor& p) {
  enter(p);
  Thread* next = nullptr;
  try {
    next = next_for(p);
  } catch (...) {
    leave(p);
    throw;
  }
  if (next == nullptr) {
    leave(p);
    return false;
  }
  p.after_ = Processor::After::nothing;
  switch_to(p, nullptr, next);
  return true;
}

void Dispatch::bind_stack(Processor& p, Thread& t) {
  RuntimeImpl& r = impl_of(p);
  ProcessorState& ps = *p.state_;
  std::size_t size = t.stack_size_ != 0 ? StackAllocator::round_size(t.stack_size_) : r.stack_size;
  Stack s;
  if (size == r.stack_size && !ps.stacks.empty()) {
    s = ps.stacks.back();
    ps.stacks.pop_back();
    ps.cached_stacks.fetch_sub(1, std::memory_order_relaxed);
  } else {
    s = r.stacks.allocate(size);
  }
  t.stack_ = s;
  make_context(t.context_, s.base, s.size, &thread_entry);
}

void Dispatch::switch_to(Processor& p, Thread* from, Thread* to) {
  // Precondition: inside p's gate; p.after_ (and p.unlock_) say what the next context does.
  if (from != nullptr && !StackAllocator::canary_intact(from->stack_)) report_overflow(*from);
  if (to != nullptr && to->context_.fctx == nullptr) {
    try {
      bind_stack(p, *to);
    } catch (...) {
      // No memory for a stack: the thread cannot run. Stop the run with the error rather
      // than lose it; it stays in the pool and is abandoned with the others.
      RuntimeImpl& r = impl_of(p);
      r.scheduler.load(std::memory_order_acquire)->ready(*to);
      r.request_stop(std::current_exception());
      to = nullptr;
    }
  }
  p.from_ = from;
  ExecutionContext& here = from != nullptr ? from->context_ : p.native_;
  ExecutionContext* there = &p.native_;
  if (to != nullptr) {
    to->processor_ = &p;
    to->set_state(ThreadState::running);
    p.current_ = to;
    p.dispatches_.fetch_add(1, std::memory_order_relaxed);
    RuntimeImpl& r = impl_of(p);
    if (r.logger->should_log(spdlog::level::debug)) {
      r.logger->debug("processor {} runs {}{}", p.index_, to->describe(),
                      from != nullptr ? " after " + from->describe() : std::string(" (from idle)"));
    }
    there = &to->context_;
  } else {
    p.current_ = nullptr;
  }
  Transfer t = switch_context(here, *there, &p, p.after_ == Processor::After::finish);
  // Resumed, perhaps on another processor: finish the switch that brought us here.
  complete(*static_cast<Processor*>(t.data), t.from);
}

void Dispatch::complete(Processor& p, void* from_context) noexcept {
  Thread* from = p.from_;
  Processor::After after = p.after_;
  p.after_ = Processor::After::nothing;
  if (after != Processor::After::finish) (from != nullptr ? from->context_ : p.native_).fctx = from_context;
  switch (after) {
    case Processor::After::nothing:
      break;
    case Processor::After::requeue:
      from->set_state(ThreadState::ready);
      try {
        impl_of(p).scheduler.load(std::memory_order_acquire)->ready(*from);
      } catch (...) {
        impl_of(p).request_stop(std::current_exception());
      }
      break;
    case Processor::After::unlock:
      p.unlock_->spin_unlock();
      p.unlock_ = nullptr;
      break;
    case Processor::After::finish:
      finished(p, *from);
      break;
  }
  leave(p);
}

void Dispatch::thread_entry(Transfer transfer) {
  context_started();
  Processor& p = *static_cast<Processor*>(transfer.data);
  complete(p, transfer.from);
  Thread& self = *p.current_;  // nothing ran on p since it switched to us
  self.run_body();
  finish(self);
}

void Dispatch::finished(Processor& p, Thread& t) noexcept {
  // t's stack is no longer in use: we run on the next context.
  RuntimeImpl& r = impl_of(p);
  ProcessorState& ps = *p.state_;
  if (!StackAllocator::canary_intact(t.stack_)) report_overflow(t);
  destroy_context(t.context_);
  if (t.stack_.size == r.stack_size && ps.stacks.size() < ProcessorState::kStackCache) {
    ps.stacks.push_back(t.stack_);
    ps.cached_stacks.fetch_add(1, std::memory_order_relaxed);
  } else {
    r.stacks.deallocate(t.stack_);
  }
  t.stack_ = Stack{};
  t.registry_->remove(t);
  const bool is_main = &t == r.main_thread;

  t.spin_lock();
  t.set_state(ThreadState::terminated);
  Thread* joiner = t.recall();
  const bool unjoinable = t.forked_ && !t.handle_attached_;
  std::exception_ptr orphan = unjoinable ? t.exception_ : nullptr;
  const bool failed_main = is_main && t.exception_ != nullptr;
  t.spin_unlock();
  // From here on a joiner (or the owner of a user thread) may reuse or destroy t.

  if (joiner != nullptr) joiner->wakeup(t);
  if (failed_main) r.request_stop(nullptr);
  if (orphan) r.note_orphan_exception(t, orphan);
  if (unjoinable) r.recycle(t);
}

void Dispatch::make_ready(Thread& t) {
  RuntimeImpl& r = RuntimeImpl::of(*t.runtime_);
  Processor* p = Processor::current();
  if (p != nullptr && &p->runtime() == t.runtime_) {
    enter(*p);
    try {
      r.scheduler.load(std::memory_order_acquire)->ready(t);
    } catch (...) {
      leave(*p);
      throw;
    }
    leave(*p);
  } else {
    std::lock_guard gate(r.external_gate);
    r.scheduler.load(std::memory_order_acquire)->ready(t);
  }
  r.wake_if_needed();
}

bool Dispatch::in_guard_page(const Thread& t, const void* address) noexcept {
  const auto* base = static_cast<const char*>(t.stack_.base);
  const auto* a = static_cast<const char*>(address);
  return t.stack_.guarded && base != nullptr && a < base && a >= base - StackAllocator::page_size();
}

}  // namespace presto::detail
