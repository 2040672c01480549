#include <presto/locks/queue_node.hpp>

#include <mutex>

namespace presto::locks {

namespace {

// A list of spare nodes, linked through free_next.
struct NodeList {
  QueueNode* head = nullptr;

  void push(QueueNode* n) noexcept {
    n->free_next = head;
    head = n;
  }
  QueueNode* pop() noexcept {
    QueueNode* n = head;
    if (n != nullptr) head = n->free_next;
    return n;
  }
};

// The spares of OS threads that have ended. Never destroyed (trivially destructible), so an OS
// thread that ends during or after static destruction still has somewhere to put its nodes.
struct SharedSpares {
  std::mutex mutex;
  NodeList nodes;
};
constinit SharedSpares shared_spares;

// The calling OS thread's spare nodes; handed to shared_spares when the OS thread ends.
struct LocalSpares {
  NodeList nodes;
  LocalSpares() = default;
  LocalSpares(const LocalSpares&) = delete;
  LocalSpares& operator=(const LocalSpares&) = delete;
  ~LocalSpares() {
    if (nodes.head == nullptr) return;
    std::lock_guard g{shared_spares.mutex};
    while (QueueNode* n = nodes.pop()) shared_spares.nodes.push(n);
  }
};

thread_local LocalSpares tl_spares;

}  // namespace

QueueNode* take_queue_node() {
  if (QueueNode* n = tl_spares.nodes.pop()) [[likely]] return n;
  {
    std::lock_guard g{shared_spares.mutex};
    if (QueueNode* n = shared_spares.nodes.pop()) return n;
  }
  return new QueueNode;
}

void give_queue_node(QueueNode* n) noexcept { tl_spares.nodes.push(n); }

}  // namespace presto::locks
