#include <presto/thread_local.hpp>

#include <atomic>

namespace presto {

namespace {
// Keys identify ThreadLocal objects for the life of the process; a counter, not policy state.
std::atomic<std::uint64_t> next_key{1};
}  // namespace

ThreadLocalBase::ThreadLocalBase() : key_(next_key.fetch_add(1, std::memory_order_relaxed)) {}

void* ThreadLocalBase::find(Thread& t) const noexcept {
  for (detail::LocalEntry* e = t.locals_; e != nullptr; e = e->next) {
    if (e->key == key_) return e->value;
  }
  return nullptr;
}

void* ThreadLocalBase::insert(Thread& t, void* value, void (*destroy)(void*) noexcept) {
  try {
    t.locals_ = new detail::LocalEntry{key_, value, destroy, t.locals_};
  } catch (...) {
    destroy(value);
    throw;
  }
  return value;
}

void ThreadLocalBase::erase(Thread& t) noexcept {
  for (detail::LocalEntry** link = &t.locals_; *link != nullptr; link = &(*link)->next) {
    if ((*link)->key == key_) {
      detail::LocalEntry* e = *link;
      *link = e->next;
      e->destroy(e->value);
      delete e;
      return;
    }
  }
}

}  // namespace presto
