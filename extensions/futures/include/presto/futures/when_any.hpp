#pragma once
// wait_any and when_any: the first of several futures (or promises) to be ready.
//
//   Future a{[] { return fetch("mirror-1"); }};
//   Future b{[] { return fetch("mirror-2"); }};
//   std::size_t first = wait_any(a, b);            // blocks; 0 or 1
//   auto winner = when_any(a, b);                  // Future<std::size_t>, composes like when_all
//
// - Arguments are Futures or Promises (anything with promise() or itself a Promise), held by
//   reference: they must outlive the wait (and the returned future). A range form takes a
//   range of them (a std::deque<Future<T>>, a std::vector<Promise<T>*> is not: references).
// - The result is the index of one that is ready: if several already are when the wait
//   begins, the lowest; otherwise the first to become ready. An exception counts as ready:
//   get() on the winner rethrows it. Nothing is consumed: get() the winner afterwards.
// - wait_any_until(deadline, ...) returns an empty optional if none is ready by `deadline`;
//   wait_any(token, ...) throws presto::Cancelled if a stop is requested on `token` first.
// - The waiting thread sleeps on one object (a gate named "when_any") and each argument
//   wakes it through a watcher: no thread per argument, nothing polled.

#include <array>
#include <cstddef>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <presto/futures/future.hpp>
#include <presto/futures/promise.hpp>
#include <presto/runtime.hpp>
#include <presto/stop_token.hpp>
#include <presto/synchro_object.hpp>

namespace presto::futures {

namespace detail {

template <class W>
concept HasPromise = requires(W& w) { w.promise().watch(std::declval<Watcher&>()); };
template <class W>
concept IsPromise = requires(W& w) { w.watch(std::declval<Watcher&>()); };

template <class W>
auto& promise_of(W& w) {
  if constexpr (HasPromise<W>) {
    return w.promise();
  } else {
    return w;
  }
}

// One argument of a wait_any, type-erased: its promise and this wait's watcher on it.
struct AnyEntry final : Watcher {
  void* promise = nullptr;
  bool (*ready)(void*) noexcept = nullptr;
  bool (*watch)(void*, Watcher&) = nullptr;
  void (*unwatch)(void*, Watcher&) noexcept = nullptr;
  class AnyGate* gate = nullptr;
  std::size_t index = 0;
  void notify() noexcept override;
};

template <class W>
AnyEntry entry_for(W& w) {
  using P = std::remove_reference_t<decltype(promise_of(w))>;
  AnyEntry e;
  e.promise = &promise_of(w);
  e.ready = [](void* p) noexcept { return static_cast<P*>(p)->ready(); };
  e.watch = [](void* p, Watcher& x) { return static_cast<P*>(p)->watch(x); };
  e.unwatch = [](void* p, Watcher& x) noexcept { static_cast<P*>(p)->unwatch(x); };
  return e;
}

// The wait itself: the index of a ready entry, or empty if the deadline passed first.
std::optional<std::size_t> wait_any(std::span<AnyEntry> entries, const Clock::time_point* deadline,
                                    const StopToken& token);

template <class... Ws>
std::optional<std::size_t> wait_any_of(const Clock::time_point* deadline, const StopToken& token, Ws&... ws) {
  std::array<AnyEntry, sizeof...(Ws)> entries{entry_for(ws)...};
  return wait_any(entries, deadline, token);
}

template <class R>
std::optional<std::size_t> wait_any_in(const Clock::time_point* deadline, const StopToken& token, R& range) {
  std::vector<AnyEntry> entries;
  for (auto& w : range) entries.push_back(entry_for(w));
  return wait_any(entries, deadline, token);
}

}  // namespace detail

template <class W>
concept Watchable = detail::HasPromise<W> || detail::IsPromise<W>;

template <Watchable... Ws>
  requires(sizeof...(Ws) > 0)
std::size_t wait_any(Ws&... ws) {
  return *detail::wait_any_of(nullptr, StopToken{}, ws...);
}
template <Watchable... Ws>
  requires(sizeof...(Ws) > 0)
std::size_t wait_any(const StopToken& token, Ws&... ws) {
  return *detail::wait_any_of(nullptr, token, ws...);
}
template <Watchable... Ws>
  requires(sizeof...(Ws) > 0)
std::optional<std::size_t> wait_any_until(Clock::time_point deadline, Ws&... ws) {
  return detail::wait_any_of(&deadline, StopToken{}, ws...);
}

// Range forms. UsageError for an empty range (nothing could ever be ready).
template <std::ranges::input_range R>
  requires Watchable<std::remove_reference_t<std::ranges::range_reference_t<R>>>
std::size_t wait_any(R& range) {
  return *detail::wait_any_in(nullptr, StopToken{}, range);
}
template <std::ranges::input_range R>
  requires Watchable<std::remove_reference_t<std::ranges::range_reference_t<R>>>
std::size_t wait_any(const StopToken& token, R& range) {
  return *detail::wait_any_in(nullptr, token, range);
}
template <std::ranges::input_range R>
  requires Watchable<std::remove_reference_t<std::ranges::range_reference_t<R>>>
std::optional<std::size_t> wait_any_until(Clock::time_point deadline, R& range) {
  return detail::wait_any_in(&deadline, StopToken{}, range);
}

// when_any: a Future<std::size_t> of wait_any, started like when_all (in the calling presto
// thread's runtime, or in `runtime`).
template <Watchable... Ws>
  requires(sizeof...(Ws) > 0)
auto when_any(Ws&... ws) {
  return Future([&ws...] { return wait_any(ws...); });
}
template <Watchable... Ws>
  requires(sizeof...(Ws) > 0)
auto when_any(Runtime& runtime, Ws&... ws) {
  return Future(runtime, [&ws...] { return wait_any(ws...); });
}
template <std::ranges::input_range R>
  requires Watchable<std::remove_reference_t<std::ranges::range_reference_t<R>>>
auto when_any(R& range) {
  return Future([&range] { return wait_any(range); });
}

}  // namespace presto::futures
