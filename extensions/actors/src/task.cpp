#include <presto/actors/task.hpp>

#include <cstdio>

#include <spdlog/spdlog.h>

#include <presto/errors.hpp>

namespace presto::actors {

namespace {

Runtime& runtime_of_caller(const std::string& name) {
  Runtime* rt = Runtime::current();
  if (rt == nullptr) {
    throw UsageError(Thread::current().describe() + " made task '" + name +
                     "' outside a presto thread: use Task(runtime, name) there");
  }
  return *rt;
}
}  // namespace

Task::Task(std::string name, TaskOptions options) : Task(runtime_of_caller(name), std::move(name), options) {}

Task::Task(Runtime& runtime, std::string name, TaskOptions options)
    : Thread(ThreadAttributes{.name = name, .stack_size = options.stack_size}),
      home_(&runtime),
      handoff_(options.handoff),
      mailbox_(name + " mailbox") {}

Task::~Task() noexcept(false) {
  mailbox_.spin_lock();
  const bool running = started_ && !joined_;
  mailbox_.spin_unlock();
  if (!running) return;
  // Too late for a clean stop: the subclass is gone, and its thread may be inside a virtual
  // call on this object while the destructors rewrite its vtable pointer. Stop it anyway,
  // rejecting its queue, and say so.
  home_->logger().error("{} destroyed without stop(): a Task subclass must call stop() in its own destructor",
                        describe());
  try {
    stop(StopMode::reject);
  } catch (...) {
    home_->logger().error("{} was destroyed without stop(); its failure is lost: {}", describe(),
                          exception_text(std::current_exception()));
  }
}

std::string Task::describe() const {
  return "task '" + (name().empty() ? std::string("<unnamed>") : name()) + "' (id " + std::to_string(id()) + ")";
}

void Task::throw_wrong_class(const std::type_info& wanted) const {
  throw UsageError(Thread::current().describe() + " sent " + describe() + " an operation of another class (" +
                   wanted.name() + "); the task is a " + typeid(*this).name());
}

void Task::check_not_self(const char* operation) const {
  if (&Thread::current() == this) {
    throw UsageError(describe() + " used " + operation +
                     "() on itself from one of its operations: it would wait for itself (use send())");
  }
}

std::string Task::refusal(const char* operation) const {
  return Thread::current().describe() + " tried to " + operation + " " + describe() + ", which " + closed_by_;
}

detail::BlockCache::~BlockCache() {
  while (void* b = take()) ::operator delete(b);
}

void* Task::take_block() {
  mailbox_.spin_lock();
  void* block = blocks_.take();
  mailbox_.spin_unlock();
  return block != nullptr ? block : ::operator new(detail::BlockCache::kSize);
}

void Task::give_back_block(void* block) noexcept {
  mailbox_.spin_lock();
  const bool kept = blocks_.keep(block);
  mailbox_.spin_unlock();
  if (!kept) ::operator delete(block);
}

void Task::enqueue(detail::Message& m) {
  mailbox_.spin_lock();
  if (closed_) {
    std::string why = refusal("message");
    mailbox_.spin_unlock();
    throw TaskStopped(why);
  }
  if (tail_ != nullptr) {
    tail_->next = &m;
  } else {
    head_ = &m;
  }
  tail_ = &m;
  ++queued_;
  const bool start_now = !started_;
  started_ = true;
  Thread* sleeper = busy_ ? nullptr : mailbox_.recall();
  mailbox_.spin_unlock();
  if (start_now) {
    home_->start(*this, &Task::serve, this);
  } else if (sleeper != nullptr) {
    sleeper->wakeup(mailbox_);
  }
}

bool Task::try_enter() {
  Thread& me = Thread::current();
  mailbox_.spin_lock();
  const bool idle = !busy_ && head_ == nullptr && !closed_;
  if (idle) {
    busy_ = true;
    owner_ = &me;
  }
  mailbox_.spin_unlock();
  return idle;
}

void Task::leave() noexcept {
  mailbox_.spin_lock();
  busy_ = false;
  owner_ = nullptr;
  Thread* sleeper = head_ != nullptr || closed_ ? mailbox_.recall() : nullptr;
  mailbox_.spin_unlock();
  if (sleeper != nullptr) sleeper->wakeup(mailbox_);
}

void Task::serve() {
  mailbox_.spin_lock();
  for (;;) {  // spinlock held at the top: one acquisition per message
    while (busy_ || (head_ == nullptr && !closed_)) {
      mailbox_.block();
      mailbox_.spin_lock();
    }
    if (closed_ && (head_ == nullptr || mode_ == StopMode::reject)) {
      mailbox_.spin_unlock();
      break;
    }
    detail::Message* m = head_;
    head_ = m->next;
    if (head_ == nullptr) tail_ = nullptr;
    --queued_;
    busy_ = true;
    mailbox_.spin_unlock();
    void* block = nullptr;  // a send's, given back under the lock taken for the next message
    try {
      block = m->execute(*this);
    } catch (...) {
      fail(std::current_exception());
    }
    mailbox_.spin_lock();
    busy_ = false;
    if (block != nullptr && !blocks_.keep(block)) [[unlikely]] {
      mailbox_.spin_unlock();  // the heap, without the spinlock
      ::operator delete(block);
      mailbox_.spin_lock();
    }
  }
  reject_queue();
  if (failure_) std::rethrow_exception(failure_);
}

void Task::fail(std::exception_ptr error) {
  std::string why = "failed: " + exception_text(error);
  mailbox_.spin_lock();
  if (!failure_) failure_ = std::move(error);
  if (!closed_) closed_by_ = std::move(why);
  closed_ = true;
  mode_ = StopMode::reject;
  mailbox_.spin_unlock();
}

void Task::reject_queue() {
  mailbox_.spin_lock();
  detail::Message* m = std::exchange(head_, nullptr);
  tail_ = nullptr;
  queued_ = 0;
  const std::string why = describe() + " rejected a queued message: it " + closed_by_;
  mailbox_.spin_unlock();
  std::size_t rejected = 0, sends = 0;
  while (m != nullptr) {
    detail::Message* next = m->next;
    // One exception per waiter, made in its own statement: the temporary (which shares the
    // message's storage) is gone before the waiter is woken and owns the exception alone.
    std::exception_ptr error = std::make_exception_ptr(TaskStopped(why));
    if (m->reject(*this, std::move(error))) ++sends;
    ++rejected;
    m = next;
  }
  if (sends > 0) home_->logger().warn("{} rejected {} queued send() message(s): it {}", describe(), sends, closed_by_);
  mailbox_.spin_lock();
  rejected_ += rejected;
  mailbox_.spin_unlock();
}

std::size_t Task::stop(StopMode mode) {
  Thread& me = Thread::current();
  mailbox_.spin_lock();
  if (!closed_) {
    closed_ = true;
    mode_ = mode;
    closed_by_ = "was stopped by " + me.describe();
  } else if (mode == StopMode::reject) {
    mode_ = StopMode::reject;
  }
  const bool inside = &me == this || (busy_ && owner_ == &me);  // from one of its operations
  const bool join_now = started_ && !joined_ && !inside;
  if (join_now) joined_ = true;
  Thread* sleeper = busy_ ? nullptr : mailbox_.recall();
  mailbox_.spin_unlock();
  if (sleeper != nullptr) sleeper->wakeup(mailbox_);
  if (!join_now) return 0;
  join();  // rethrows the task's failure
  return rejected_;
}

bool Task::stopped() const noexcept {
  mailbox_.spin_lock();
  const bool closed = closed_;
  mailbox_.spin_unlock();
  return closed;
}

std::size_t Task::queued() const noexcept {
  mailbox_.spin_lock();
  const std::size_t n = queued_;
  mailbox_.spin_unlock();
  return n;
}

}  // namespace presto::actors
