// TaskSlot (presto/detail/task_slot.hpp), the body and result store of every Thread and lazy
// fork record, tested alone: each kind of callable and result it holds inline or on the heap,
// what it destroys and when, bodies that throw, and a callable moved to another slot (a record
// made a thread). Each object made is counted, so a leak or a double destruction fails here.

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include <catch2/catch.hpp>

#include <presto/detail/task_slot.hpp>

using presto::detail::TaskSlot;
using presto::detail::type_tag;

namespace {

// Counts the live objects of its kind; `Pad` bytes make it as large as a case needs.
template <std::size_t Pad>
struct Counted {
  static inline int live = 0;
  std::array<unsigned char, Pad> pad{};
  int value;
  explicit Counted(int v) : value(v) { ++live; }
  Counted(const Counted& o) : pad(o.pad), value(o.value) { ++live; }
  Counted(Counted&& o) noexcept : pad(o.pad), value(o.value) { ++live; }
  ~Counted() { --live; }
};
using Small = Counted<8>;   // fits inline
using Large = Counted<96>;  // does not

struct alignas(64) OverAligned {
  int value;
};

}  // namespace

TEST_CASE("a slot holds one cache line", "[core][task_slot]") {
  static_assert(sizeof(TaskSlot) == 64);
  static_assert(TaskSlot::kInlineSize == 56);
  SUCCEED();
}

TEST_CASE("void and value results, inline", "[core][task_slot]") {
  TaskSlot s;
  CHECK(s.empty());
  int ran = 0;
  s.emplace([&ran] { ++ran; });
  CHECK(s.has_callable());
  CHECK_FALSE(s.has_result());
  s.invoke();
  CHECK(ran == 1);
  CHECK(s.has_result());
  CHECK(s.result_tag() == &type_tag<void>);
  s.take_result<void>();
  CHECK(s.empty());

  s.emplace([](int a, int b) { return a * b; }, 6, 7);
  s.invoke();
  CHECK(s.result_tag() == &type_tag<int>);
  CHECK(s.take_result<int>() == 42);
  CHECK(s.empty());
}

TEST_CASE("callables and results too large for the slot go to the heap", "[core][task_slot]") {
  {
    TaskSlot s;
    s.emplace([big = Large(5)] { return Large(big.value * 2); });
    CHECK(Large::live == 1);
    s.invoke();  // the callable is destroyed, its result kept
    CHECK(Large::live == 1);
    CHECK(s.result_tag() == &type_tag<Large>);
    CHECK(s.take_result<Large>().value == 10);
    CHECK(Large::live == 0);

    s.emplace([] { return std::string(200, 'x'); });
    s.invoke();
    CHECK(s.take_result<std::string>() == std::string(200, 'x'));

    s.emplace([] { return OverAligned{3}; });
    s.invoke();
    CHECK(s.take_result<OverAligned>().value == 3);
  }
  CHECK(Large::live == 0);
}

TEST_CASE("what a slot holds is destroyed by reset and by the slot's end", "[core][task_slot]") {
  {
    TaskSlot callable_inline, callable_heap, result_inline, result_heap;
    callable_inline.emplace([s = Small(1)] { return s.value; });
    callable_heap.emplace([l = Large(2)] { return l.value; });
    result_inline.emplace([] { return Small(3); });
    result_inline.invoke();
    result_heap.emplace([] { return Large(4); });
    result_heap.invoke();
    CHECK(Small::live == 2);
    CHECK(Large::live == 2);
    callable_inline.reset();
    result_heap.reset();
    CHECK(Small::live == 1);
    CHECK(Large::live == 1);
    CHECK(callable_inline.empty());
    CHECK(result_heap.empty());
  }
  CHECK(Small::live == 0);
  CHECK(Large::live == 0);
}

TEST_CASE("a body that throws leaves the slot empty, its callable destroyed", "[core][task_slot]") {
  TaskSlot s;
  s.emplace([l = Large(1)]() -> int { throw std::runtime_error("body " + std::to_string(l.value)); });
  CHECK_THROWS_WITH(s.invoke(), "body 1");
  CHECK(s.empty());
  CHECK(Large::live == 0);
  s.emplace([sm = Small(2)] { throw std::runtime_error("small"); });
  CHECK_THROWS_WITH(s.invoke(), "small");
  CHECK(s.empty());
  CHECK(Small::live == 0);
}

TEST_CASE("a callable not yet run moves to another slot", "[core][task_slot]") {
  {
    TaskSlot from, to;
    from.emplace([s = Small(20)](int add) { return s.value + add; }, 1);
    from.relocate_to(to);
    CHECK(from.empty());
    CHECK(to.has_callable());
    CHECK(Small::live == 1);
    to.invoke();
    CHECK(to.take_result<int>() == 21);
    CHECK(Small::live == 0);

    auto owned = std::make_unique<int>(7);
    from.emplace([l = Large(30), p = std::move(owned)] { return l.value + *p; });
    from.relocate_to(to);  // the heap object itself moves: no copy, no destruction
    CHECK(from.empty());
    CHECK(Large::live == 1);
    to.invoke();
    CHECK(to.take_result<int>() == 37);
    CHECK(Large::live == 0);

    from.emplace([l = Large(40)] { return l.value; });
    from.relocate_to(to);
  }  // `to` still holds it: destroyed with the slot
  CHECK(Large::live == 0);
}

TEST_CASE("a slot keeps an exception in place of a result", "[core][task_slot]") {
  TaskSlot s;
  s.emplace([l = Large(1)]() -> int { throw std::runtime_error("kept"); });
  try {
    s.invoke();
  } catch (...) {
    s.store_exception(std::current_exception());
  }
  CHECK(s.has_exception());
  CHECK_FALSE(s.has_result());
  CHECK_FALSE(s.has_callable());
  CHECK(Large::live == 0);
  const std::exception_ptr e = s.take_exception();
  CHECK(s.empty());
  CHECK_THROWS_WITH(std::rethrow_exception(e), "kept");

  s.store_exception(std::make_exception_ptr(std::logic_error("dropped")));
  s.reset();  // the exception is released with the slot's contents
  CHECK(s.empty());
}
