#pragma once
// KeptNames: the names of threads whose JoinHandles were emptied (joined or detached), kept for
// the error of a later use of such a handle, which can no longer ask its thread (it may have
// been reused). A JoinHandle has one word for what it holds; an emptied one holds the address
// of its name here. A name lives until its handle drops it or its runtime ends: a handle on a
// stack that the end of a run abandons is never destroyed, and must not leak.
//
// Only named threads' handles keep one (most forked threads have no name), so this is off the
// fork and join of the common case; keep and drop take a lock.

#include <cstddef>
#include <mutex>
#include <string_view>

namespace presto::detail {

class KeptNames {
 public:
  KeptNames() = default;
  KeptNames(const KeptNames&) = delete;
  KeptNames& operator=(const KeptNames&) = delete;
  ~KeptNames();  // frees the names still kept

  // A NUL-terminated copy of `name`, aligned to 8, or nullptr if there is no memory for it.
  const char* keep(std::string_view name) noexcept;
  // Frees a copy keep() made, of any runtime's KeptNames that is still alive.
  static void drop(const char* kept) noexcept;

 private:
  struct Node {  // the copy's characters follow it
    KeptNames* owner;
    Node* prev;
    Node* next;
  };
  static Node* node_of(const char* kept) noexcept;

  std::mutex lock_;
  Node* first_ = nullptr;  // guarded by lock_
};

}  // namespace presto::detail
