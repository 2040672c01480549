#include "registry.hpp"

#include <presto/thread.hpp>

namespace presto::detail {

void Registry::add(Thread& t) noexcept {
  lock_.lock();
  t.registry_hook_.owner = &t;
  list_.push_back(t.registry_hook_);
  t.registry_ = this;
  lock_.unlock();
}

void Registry::remove(Thread& t) noexcept {
  lock_.lock();
  if (t.registry_hook_.list == &list_) list_.unlink(t.registry_hook_);
  t.registry_ = nullptr;
  lock_.unlock();
}

std::size_t Registry::size() const noexcept {
  lock_.lock();
  std::size_t n = list_.size;
  lock_.unlock();
  return n;
}

}  // namespace presto::detail
