#pragma once
// KeptNames: the names of threads whose JoinHandles were emptied (joined or detached), kept for
// the error of a later use of such a handle, which can no longer ask its thread (it may have
// been reused). A JoinHandle has one word for what it holds; an emptied one holds the address
// of its name here, and frees it when it is destroyed.
//
// One list for the process, never destroyed: an emptied handle may outlive its runtime (a
// vector of handles declared before the Runtime), and one left on a stack that the end of a
// run abandons is never destroyed; its name then stays listed (reachable, a few bytes), where a
// copy of its own would be lost.
//
// Only named threads' handles keep one (most forked threads have no name), so this is off the
// fork and join of the common case; keep and drop take a lock.

#include <mutex>
#include <string_view>

namespace presto::detail {

class KeptNames {
 public:
  // A NUL-terminated copy of `name`, aligned to 8, or nullptr if there is no memory for it.
  static const char* keep(std::string_view name) noexcept;
  // Frees a copy keep() made.
  static void drop(const char* kept) noexcept;

 private:
  struct Node {  // the copy's characters follow it
    Node* prev;
    Node* next;
  };
  static KeptNames& instance() noexcept;

  std::mutex lock_;
  Node* first_ = nullptr;  // guarded by lock_
};

}  // namespace presto::detail
