#include <presto/fifo_pool.hpp>

#include <presto/runtime.hpp>
#include <presto/thread.hpp>

namespace presto {

void FifoPool::attach(const Runtime& rt) { pinned_.attach(rt.processors()); }

void FifoPool::put(Thread& t) {
  if (!pinned_.put(t)) queue_.push_back(t);
}

Thread* FifoPool::get(Processor& p) {
  if (Thread* t = pinned_.get(p)) return t;
  return queue_.pop_front();
}

bool FifoPool::withdraw(Thread& t) { return queue_.withdraw(t); }

}  // namespace presto
