#pragma once
// TaskSlot: the body of a thread and, after it ran, its result, stored in the thread control
// block without allocating when they fit in kInlineSize bytes (a lambda capturing a few
// references does). Larger ones go to the heap.

#include <cstddef>
#include <exception>
#include <functional>
#include <new>
#include <type_traits>
#include <utility>

namespace presto::detail {

// &type_tag<T> is an identity for T, used to check join<R>() against what the body returned.
template <class T>
inline constexpr char type_tag = 0;

template <class F, class... Args>
using task_result_t = std::decay_t<std::invoke_result_t<std::decay_t<F>, std::decay_t<Args>...>>;

class TaskSlot {
 public:
  // What fits here without allocating: 56 bytes, the slot being one cache line (a record of a
  // lazy fork and a control block are read and written whole on every fork and join).
  static constexpr std::size_t kInlineSize = 56;

  TaskSlot() = default;
  TaskSlot(const TaskSlot&) = delete;
  TaskSlot& operator=(const TaskSlot&) = delete;
  ~TaskSlot() { reset(); }

  // Stores `f` bound to `args` (decay-copied, like std::thread). Precondition: empty().
  template <class F, class... Args>
  void emplace(F&& f, Args&&... args) {
    auto body = [f = std::forward<F>(f), ... args = std::forward<Args>(args)]() mutable {
      return std::invoke(std::move(f), std::move(args)...);
    };
    using C = decltype(body);
    construct<C>(std::move(body));
    ops_ = &callable_ops<C>;
  }

  // Moves the callable stored here, not yet run, into `to` (empty), and empties this slot: a
  // lazy fork's record handing its body to the thread made from it.
  void relocate_to(TaskSlot& to) noexcept { ops_->relocate(*this, to); }

  bool empty() const noexcept { return ops_ == nullptr; }
  bool has_callable() const noexcept { return ops_ != nullptr && ops_->invoke != nullptr; }
  bool has_result() const noexcept { return ops_ != nullptr && ops_->invoke == nullptr && !has_exception(); }
  bool has_exception() const noexcept;
  const void* result_tag() const noexcept { return ops_ != nullptr ? ops_->result_tag : nullptr; }

  // Runs the stored callable and replaces it by its result (void results leave only the tag).
  // The callable is destroyed whether it returns or throws; exceptions propagate.
  void invoke() { ops_->invoke(*this); }

  // Moves the result out and empties the slot. Precondition: has_result() and the tag of R.
  template <class R>
  R take_result() {
    if constexpr (std::is_void_v<R>) {
      reset();
    } else {
      R value = std::move(*object<R>());
      reset();
      return value;
    }
  }

  // Keeps the exception the body threw in place of a result (a lazy fork's record, which has no
  // other room for it). Precondition: empty(), as invoke() leaves a slot whose body threw.
  void store_exception(std::exception_ptr e) noexcept;
  // Moves the exception out and empties the slot. Precondition: has_exception().
  std::exception_ptr take_exception() noexcept;

  void reset() noexcept {
    if (ops_ != nullptr && ops_->destroy != nullptr) ops_->destroy(*this);
    ops_ = nullptr;
  }

 private:
  // One table for each type a slot can hold: a callable (invoke and relocate set) or a result
  // (invoke nullptr; result_tag its type). destroy is nullptr where there is nothing to destroy.
  struct Ops {
    void (*invoke)(TaskSlot&);
    void (*relocate)(TaskSlot&, TaskSlot&) noexcept;
    void (*destroy)(TaskSlot&) noexcept;
    const void* result_tag;
  };

  struct Thrown {  // what store_exception keeps
    std::exception_ptr exception;
  };

  template <class T>
  static constexpr bool fits_inline =
      sizeof(T) <= kInlineSize && alignof(T) <= alignof(std::max_align_t) &&
      std::is_nothrow_move_constructible_v<T>;

  // The object of type T held here: in the storage, or on the heap with its address in the
  // storage.
  template <class T>
  T* object() noexcept {
    if constexpr (fits_inline<T>) {
      return std::launder(reinterpret_cast<T*>(storage_));
    } else {
      return *std::launder(reinterpret_cast<T**>(storage_));
    }
  }

  template <class T, class... A>
  void construct(A&&... a) {
    if constexpr (fits_inline<T>) {
      ::new (static_cast<void*>(storage_)) T(std::forward<A>(a)...);
    } else {
      T* heap = new T(std::forward<A>(a)...);
      ::new (static_cast<void*>(storage_)) T*(heap);
    }
  }

  template <class T>
  static void destroy_object(TaskSlot& s) noexcept {
    if constexpr (fits_inline<T>) {
      s.object<T>()->~T();
    } else {
      delete s.object<T>();
    }
  }

  using Destroy = void (*)(TaskSlot&) noexcept;
  template <class T>
  static constexpr Destroy destroyer() noexcept {
    if constexpr (std::is_void_v<T>) {
      return nullptr;
    } else if constexpr (fits_inline<T> && std::is_trivially_destructible_v<T>) {
      return nullptr;
    } else {
      return &destroy_object<T>;
    }
  }

  template <class C>
  static void relocate_callable(TaskSlot& from, TaskSlot& to) noexcept {
    if constexpr (fits_inline<C>) {
      ::new (static_cast<void*>(to.storage_)) C(std::move(*from.object<C>()));
      from.reset();
    } else {
      ::new (static_cast<void*>(to.storage_)) C*(from.object<C>());  // the heap object moves as it is
      from.ops_ = nullptr;
    }
    to.ops_ = &callable_ops<C>;
  }

  template <class C>
  static void invoke_callable(TaskSlot& s) {
    using R = std::invoke_result_t<C&>;
    C& callable = *s.object<C>();
    struct Cleanup {  // destroys the callable on return and on exception
      TaskSlot& slot;
      ~Cleanup() { slot.reset(); }
    };
    if constexpr (std::is_void_v<R>) {
      { Cleanup cleanup{s}; callable(); }
    } else if constexpr (fits_inline<R>) {
      alignas(R) unsigned char tmp[sizeof(R)];
      R* result = nullptr;
      {
        Cleanup cleanup{s};
        result = ::new (static_cast<void*>(tmp)) R(callable());
      }
      struct DestroyTmp {
        R* r;
        ~DestroyTmp() { r->~R(); }
      } destroy_tmp{result};
      s.construct<R>(std::move(*result));
    } else {
      R* result = nullptr;
      {
        Cleanup cleanup{s};
        result = new R(callable());
      }
      ::new (static_cast<void*>(s.storage_)) R*(result);
    }
    s.ops_ = &result_ops<R>;
  }

  template <class C>
  static constexpr Ops callable_ops{&invoke_callable<C>, &relocate_callable<C>, destroyer<C>(), nullptr};
  template <class R>
  static constexpr Ops result_ops{nullptr, nullptr, destroyer<R>(), &type_tag<R>};

  alignas(std::max_align_t) unsigned char storage_[kInlineSize];
  const Ops* ops_ = nullptr;
};

// Defined here, where the slot's tables can be: they need the whole class.
inline bool TaskSlot::has_exception() const noexcept { return ops_ == &result_ops<Thrown>; }

inline void TaskSlot::store_exception(std::exception_ptr e) noexcept {
  ::new (static_cast<void*>(storage_)) Thrown{std::move(e)};
  ops_ = &result_ops<Thrown>;
}

inline std::exception_ptr TaskSlot::take_exception() noexcept {
  std::exception_ptr e = std::move(object<Thrown>()->exception);
  reset();
  return e;
}

}  // namespace presto::detail
