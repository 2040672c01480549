#include <presto/locks/queue_node.hpp>

namespace presto::locks {

namespace {

// The calling OS thread's spare nodes; freed when the OS thread ends.
struct FreeNodes {
  QueueNode* head = nullptr;
  FreeNodes() = default;
  FreeNodes(const FreeNodes&) = delete;
  FreeNodes& operator=(const FreeNodes&) = delete;
  ~FreeNodes() {
    while (QueueNode* n = head) {
      head = n->free_next;
      delete n;
    }
  }
};

thread_local FreeNodes tl_free;

}  // namespace

QueueNode* take_queue_node() {
  QueueNode* n = tl_free.head;
  if (n == nullptr) [[unlikely]] return new QueueNode;
  tl_free.head = n->free_next;
  return n;
}

void give_queue_node(QueueNode* n) noexcept {
  n->free_next = tl_free.head;
  tl_free.head = n;
}

}  // namespace presto::locks
