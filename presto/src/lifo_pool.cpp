#include <presto/lifo_pool.hpp>

#include <presto/runtime.hpp>
#include <presto/thread.hpp>

namespace presto {

void LifoPool::attach(const Runtime& rt) { pinned_.attach(rt.processors()); }

void LifoPool::put(Thread& t) {
  if (!pinned_.put(t)) queue_.push_front(t);
}

Thread* LifoPool::get(Processor& p) {
  if (Thread* t = pinned_.get(p)) return t;
  return queue_.pop_front();
}

bool LifoPool::withdraw(Thread& t) { return queue_.withdraw(t); }

}  // namespace presto
