#include <presto/lifo_pool.hpp>

#include <presto/thread.hpp>

namespace presto {

void LifoPool::put(Thread& t) { queue_.push_front(t); }

Thread* LifoPool::get(Processor&) { return queue_.pop_front(); }

}  // namespace presto
