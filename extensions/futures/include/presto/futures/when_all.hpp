#pragma once
// when_all: a future of several results. It is itself a Future (a thread that gets each
// argument in turn), so it composes like any other: wait on it, poll ready(), pass it on.
//
//   Future a{[] { return 6; }};
//   Future b{[] { return std::string("x"); }};
//   auto both = when_all(a, b);               // Future<std::tuple<int, std::string>>
//   auto [n, s] = both.get();
//
//   std::deque<Future<double>> rows;           // ... emplace_back(...) each
//   std::vector<double> all = when_all(rows).get();
//
// - Arguments are Futures or Promises (anything with get() and ready()), held by reference:
//   they must outlive the returned future. Values are copied out of them.
// - Variadic form: Future<std::tuple<V...>>, where a void result contributes std::monostate.
//   Range form: Future<std::vector<V>>, or Future<void> for a range of void futures.
// - Exceptions: arguments are awaited in order; the first one that throws ends the combined
//   future with that exception (later arguments are not awaited by it).
// - when_all(...) starts in the calling presto thread's runtime; when_all(runtime, ...) from
//   anywhere, like Future's constructors.

#include <concepts>
#include <ranges>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include <presto/futures/future.hpp>
#include <presto/runtime.hpp>

namespace presto::futures {

template <class W>
concept Awaitable = requires(W& w) {
  w.get();
  { w.ready() } -> std::convertible_to<bool>;
};

namespace detail {
template <class W>
using got_t = std::decay_t<decltype(std::declval<W&>().get())>;
template <class W>
using awaited_t = std::conditional_t<std::is_void_v<got_t<W>>, std::monostate, got_t<W>>;

template <class W>
awaited_t<W> value_of(W& w) {
  if constexpr (std::is_void_v<got_t<W>>) {
    w.get();
    return {};
  } else {
    return w.get();
  }
}

template <Awaitable... Ws>
auto all_of(Ws&... ws) {
  return [&ws...] { return std::tuple<awaited_t<Ws>...>{value_of(ws)...}; };  // braces: in order
}

template <std::ranges::input_range R>
auto all_in(R& range) {
  using W = std::remove_reference_t<std::ranges::range_reference_t<R>>;
  if constexpr (std::is_void_v<got_t<W>>) {
    return [&range] {
      for (auto& w : range) w.get();
    };
  } else {
    return [&range] {
      std::vector<got_t<W>> values;
      for (auto& w : range) values.push_back(w.get());
      return values;
    };
  }
}
}  // namespace detail

template <Awaitable... Ws>
  requires(sizeof...(Ws) > 0)
auto when_all(Ws&... ws) {
  return Future(detail::all_of(ws...));
}
template <Awaitable... Ws>
  requires(sizeof...(Ws) > 0)
auto when_all(Runtime& runtime, Ws&... ws) {
  return Future(runtime, detail::all_of(ws...));
}

template <std::ranges::input_range R>
  requires Awaitable<std::remove_reference_t<std::ranges::range_reference_t<R>>>
auto when_all(R& range) {
  return Future(detail::all_in(range));
}
template <std::ranges::input_range R>
  requires Awaitable<std::remove_reference_t<std::ranges::range_reference_t<R>>>
auto when_all(Runtime& runtime, R& range) {
  return Future(runtime, detail::all_in(range));
}

}  // namespace presto::futures
