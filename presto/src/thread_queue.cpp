#include <presto/thread_queue.hpp>

#include <presto/errors.hpp>
#include <presto/thread.hpp>

namespace presto {

void ThreadQueue::throw_already_queued(const Thread& t) {
  throw UsageError(t.describe() + " is already on a queue (a ready pool or a wait queue)");
}

}  // namespace presto
