#pragma once
// ThreadLocal<T>: storage with one value per presto thread (fiber-local storage), which C++
// `thread_local` cannot give because a presto thread may move between processors. Each
// thread's value is made on its first access (a copy of the initial value, or T{}) and
// destroyed when the thread finishes. On an OS thread outside the runtime the value belongs to
// that OS thread.
//
//   presto::ThreadLocal<int> calls;
//   ++*calls;          // this thread's counter
//
// Lookup walks the current thread's short list of locals: a few nanoseconds for the handful
// most threads use. Destroying the ThreadLocal does not destroy values threads still hold;
// they are destroyed with their threads.

#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

#include <presto/thread.hpp>

namespace presto {

namespace detail {
struct LocalEntry {
  std::uint64_t key;
  void* value;
  void (*destroy)(void*) noexcept;
  LocalEntry* next;
};
}  // namespace detail

class ThreadLocalBase {
 public:
  ThreadLocalBase(const ThreadLocalBase&) = delete;
  ThreadLocalBase& operator=(const ThreadLocalBase&) = delete;

 protected:
  ThreadLocalBase();
  ~ThreadLocalBase() = default;

  void* find(Thread& t) const noexcept;
  void* insert(Thread& t, void* value, void (*destroy)(void*) noexcept);
  void erase(Thread& t) noexcept;

 private:
  std::uint64_t key_;  // unique for the life of the process, so a recycled address never matches
};

template <class T>
class ThreadLocal : private ThreadLocalBase {
 public:
  ThreadLocal()
    requires std::is_default_constructible_v<T>
      : initial_() {}
  explicit ThreadLocal(T initial) : initial_(std::move(initial)) {}

  T& get() {
    Thread& me = Thread::current();
    if (void* v = find(me)) return *static_cast<T*>(v);
    auto value = std::make_unique<T>(initial_);
    T& ref = *value;
    insert(me, value.release(), [](void* p) noexcept { delete static_cast<T*>(p); });
    return ref;
  }
  T& operator*() { return get(); }
  T* operator->() { return &get(); }
  // Destroys the calling thread's value; its next access makes a new one.
  void reset() noexcept { erase(Thread::current()); }

 private:
  T initial_;
};

}  // namespace presto
