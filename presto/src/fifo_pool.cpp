#include <presto/fifo_pool.hpp>

#include <presto/thread.hpp>

namespace presto {

void FifoPool::put(Thread& t) { queue_.push_back(t); }

Thread* FifoPool::get(Processor&) { return queue_.pop_front(); }

}  // namespace presto
