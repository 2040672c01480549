#include "kept_names.hpp"

#include <cstring>
#include <new>

namespace presto::detail {

KeptNames& KeptNames::instance() noexcept {
  static KeptNames* const names = new KeptNames;  // never destroyed: handles may outlive main()
  return *names;
}

const char* KeptNames::keep(std::string_view name) noexcept {
  static_assert(sizeof(Node) % 8 == 0, "the copies are aligned to 8: JoinHandle tags their addresses");
  void* memory = ::operator new(sizeof(Node) + name.size() + 1, std::nothrow);
  if (memory == nullptr) return nullptr;
  Node* n = ::new (memory) Node{nullptr, nullptr};
  char* text = reinterpret_cast<char*>(n + 1);
  std::memcpy(text, name.data(), name.size());
  text[name.size()] = '\0';
  KeptNames& names = instance();
  std::lock_guard guard(names.lock_);
  n->next = names.first_;
  if (names.first_ != nullptr) names.first_->prev = n;
  names.first_ = n;
  return text;
}

void KeptNames::drop(const char* kept) noexcept {
  Node* n = reinterpret_cast<Node*>(const_cast<char*>(kept)) - 1;
  KeptNames& names = instance();
  {
    std::lock_guard guard(names.lock_);
    if (n->prev != nullptr) {
      n->prev->next = n->next;
    } else {
      names.first_ = n->next;
    }
    if (n->next != nullptr) n->next->prev = n->prev;
  }
  ::operator delete(n);
}

}  // namespace presto::detail
