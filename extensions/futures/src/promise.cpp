#include <presto/futures/promise.hpp>

#include <presto/errors.hpp>

namespace presto::futures::detail {

void throw_already_settled(const SynchroObject& promise, const char* operation) {
  throw UsageError(Thread::current().describe() + " called " + operation + " on " + promise.describe() +
                   ", which is already settled");
}

void throw_taken(const SynchroObject& promise) {
  throw UsageError(Thread::current().describe() + " read " + promise.describe() +
                   " after its value was moved out by take()");
}

}  // namespace presto::futures::detail
