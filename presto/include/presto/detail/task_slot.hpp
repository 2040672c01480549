#pragma once
// TaskSlot: the body of a thread and, after it ran, its result, stored in the thread control
// block without allocating when they fit in kInlineSize bytes (a lambda capturing a few
// references does). Larger ones go to the heap.

#include <cstddef>
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
  static constexpr std::size_t kInlineSize = 48;

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
    invoke_ = &invoke_callable<C>;
    destroy_ = &destroy_object<C>;
    relocate_ = &relocate_callable<C>;
    state_ = State::callable;
  }

  // Moves the callable stored here, not yet run, into `to` (empty), and empties this slot: a
  // lazy fork's record handing its body to the thread made from it.
  void relocate_to(TaskSlot& to) noexcept { relocate_(*this, to); }

  bool empty() const noexcept { return state_ == State::empty; }
  bool has_callable() const noexcept { return state_ == State::callable; }
  bool has_result() const noexcept { return state_ == State::result; }
  const void* result_tag() const noexcept { return result_tag_; }

  // Runs the stored callable and replaces it by its result (void results leave only the tag).
  // The callable is destroyed whether it returns or throws; exceptions propagate.
  void invoke() { invoke_(*this); }

  // Moves the result out and empties the slot. Precondition: has_result() and the tag of R.
  template <class R>
  R take_result() {
    if constexpr (std::is_void_v<R>) {
      reset();
    } else {
      R value = std::move(*static_cast<R*>(object()));
      reset();
      return value;
    }
  }

  void reset() noexcept {
    if (destroy_ != nullptr) destroy_(*this);
    destroy_ = nullptr;
    invoke_ = nullptr;
    relocate_ = nullptr;
    result_tag_ = nullptr;
    state_ = State::empty;
  }

 private:
  enum class State : unsigned char { empty, callable, result };

  template <class T>
  static constexpr bool fits_inline =
      sizeof(T) <= kInlineSize && alignof(T) <= alignof(std::max_align_t) &&
      std::is_nothrow_move_constructible_v<T>;

  void* object() noexcept { return heap_ != nullptr ? heap_ : static_cast<void*>(storage_); }

  template <class T, class... A>
  void construct(A&&... a) {
    if constexpr (fits_inline<T>) {
      ::new (static_cast<void*>(storage_)) T(std::forward<A>(a)...);
    } else {
      heap_ = new T(std::forward<A>(a)...);
    }
  }

  template <class T>
  static void destroy_object(TaskSlot& s) noexcept {
    if constexpr (fits_inline<T>) {
      static_cast<T*>(s.object())->~T();
    } else {
      delete static_cast<T*>(s.heap_);
      s.heap_ = nullptr;
    }
  }

  template <class C>
  static void relocate_callable(TaskSlot& from, TaskSlot& to) noexcept {
    if constexpr (fits_inline<C>) {
      ::new (static_cast<void*>(to.storage_)) C(std::move(*static_cast<C*>(from.object())));
    } else {
      to.heap_ = std::exchange(from.heap_, nullptr);
    }
    to.invoke_ = from.invoke_;
    to.destroy_ = from.destroy_;
    to.relocate_ = from.relocate_;
    to.state_ = State::callable;
    from.reset();
  }

  template <class C>
  static void invoke_callable(TaskSlot& s) {
    using R = std::invoke_result_t<C&>;
    C& callable = *static_cast<C*>(s.object());
    struct Cleanup {  // destroys the callable on return and on exception
      TaskSlot& slot;
      ~Cleanup() { slot.reset(); }
    };
    if constexpr (std::is_void_v<R>) {
      { Cleanup cleanup{s}; callable(); }
      s.result_tag_ = &type_tag<void>;
      s.state_ = State::result;
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
      s.finish_result<R>();
    } else {
      R* result = nullptr;
      {
        Cleanup cleanup{s};
        result = new R(callable());
      }
      s.heap_ = result;
      s.finish_result<R>();
    }
  }

  template <class R>
  void finish_result() noexcept {
    destroy_ = &destroy_object<R>;
    result_tag_ = &type_tag<R>;
    state_ = State::result;
  }

  alignas(std::max_align_t) unsigned char storage_[kInlineSize];
  void* heap_ = nullptr;
  void (*invoke_)(TaskSlot&) = nullptr;
  void (*destroy_)(TaskSlot&) noexcept = nullptr;
  void (*relocate_)(TaskSlot&, TaskSlot&) noexcept = nullptr;  // while it holds a callable
  const void* result_tag_ = nullptr;
  State state_ = State::empty;
};

}  // namespace presto::detail
