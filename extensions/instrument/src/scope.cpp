#include <presto/instrument/scope.hpp>

#include <presto/instrument/instrumented_thread.hpp>

namespace presto::instrument {

Scope::Scope(std::string_view name) : thread_(InstrumentedThread::current()) {
  if (thread_ == nullptr) return;
  entry_ = thread_->recorder().entry(name);
  pushed_ = thread_->push_entry(entry_);
}

Scope::~Scope() {
  if (pushed_) thread_->pop_entry(entry_);
}

}  // namespace presto::instrument
