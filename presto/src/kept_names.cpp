#include "kept_names.hpp"

#include <cstring>
#include <new>

namespace presto::detail {

KeptNames::Node* KeptNames::node_of(const char* kept) noexcept {
  return reinterpret_cast<Node*>(const_cast<char*>(kept)) - 1;
}

KeptNames::~KeptNames() {
  for (Node* n = first_; n != nullptr;) {
    Node* next = n->next;
    ::operator delete(n);
    n = next;
  }
}

const char* KeptNames::keep(std::string_view name) noexcept {
  static_assert(sizeof(Node) % 8 == 0, "the copies are aligned to 8: JoinHandle tags their addresses");
  void* memory = ::operator new(sizeof(Node) + name.size() + 1, std::nothrow);
  if (memory == nullptr) return nullptr;
  Node* n = ::new (memory) Node{this, nullptr, nullptr};
  char* text = reinterpret_cast<char*>(n + 1);
  std::memcpy(text, name.data(), name.size());
  text[name.size()] = '\0';
  std::lock_guard guard(lock_);
  n->next = first_;
  if (first_ != nullptr) first_->prev = n;
  first_ = n;
  return text;
}

void KeptNames::drop(const char* kept) noexcept {
  Node* n = node_of(kept);
  KeptNames& owner = *n->owner;
  {
    std::lock_guard guard(owner.lock_);
    if (n->prev != nullptr) {
      n->prev->next = n->next;
    } else {
      owner.first_ = n->next;
    }
    if (n->next != nullptr) n->next->prev = n->prev;
  }
  ::operator delete(n);
}

}  // namespace presto::detail
