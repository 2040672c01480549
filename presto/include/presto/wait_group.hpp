#pragma once
// WaitGroup: Go's sync.WaitGroup. add(n) before starting n pieces of work, done() as each
// ends, wait() until all have: the counter is back at zero. Unlike a Latch it can be reused:
// once wait() has returned, add() may start the next round.
//
//   presto::WaitGroup group{"downloads"};
//   for (auto& url : urls) {
//     group.add(1);
//     presto::fork([&, url] { fetch(url); group.done(); }).detach();
//   }
//   group.wait();
//
// A counter that would go negative (more done() than add()) raises UsageError naming the
// group and the thread (Go panics). wait() has the Latch's timed and cancellable forms.

#include <cstddef>
#include <string>
#include <string_view>

#include <presto/latch.hpp>

namespace presto {

class WaitGroup : public Latch {
 public:
  explicit WaitGroup(std::string name = {}) : Latch(0, std::move(name)) {}
  ~WaitGroup() noexcept(false) override = default;

  // Adds n (which may be negative, as in Go) to the counter; at zero, wakes every waiter.
  void add(std::ptrdiff_t n) { Latch::add(n, "add"); }
  // add(-1): one piece of work has ended.
  void done() { Latch::add(-1, "done"); }

  std::string_view kind() const noexcept override { return "wait group"; }
};

}  // namespace presto
