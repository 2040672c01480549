#pragma once
// AtomicInt: PRESTO's atomic integer, usable anywhere an integer is: every read and update is
// atomic (`a++`, `a += c`, `c = a + b` reads each once). Updates are single hardware atomic
// instructions rather than PRESTO's spinlock-guarded reads and writes.
//
// It is also a SynchroObject: wait(old) sleeps, relinquishing the processor, until the value
// differs from `old` (std::atomic::wait, for presto threads and OS threads alike), and every
// update wakes the waiters. Updates cost one extra load while nobody waits.

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include <presto/synchro_object.hpp>

namespace presto {

class AtomicInt : public SynchroObject {
 public:
  using value_type = std::int64_t;

  AtomicInt(value_type initial = 0, std::string name = {})  // NOLINT: converts like an int
      : SynchroObject(std::move(name)), value_(initial) {}
  ~AtomicInt() noexcept(false) override;

  value_type load() const noexcept { return value_.load(std::memory_order_seq_cst); }
  operator value_type() const noexcept { return load(); }  // NOLINT: PRESTO's int semantics
  void store(value_type v) {
    value_.store(v, std::memory_order_seq_cst);
    notify();
  }
  AtomicInt& operator=(value_type v) {
    store(v);
    return *this;
  }

  value_type fetch_add(value_type d) { return updated(value_.fetch_add(d, std::memory_order_seq_cst)); }
  value_type fetch_sub(value_type d) { return updated(value_.fetch_sub(d, std::memory_order_seq_cst)); }
  value_type exchange(value_type v) { return updated(value_.exchange(v, std::memory_order_seq_cst)); }
  // On failure `expected` receives the current value.
  bool compare_exchange(value_type& expected, value_type desired) {
    if (!value_.compare_exchange_strong(expected, desired, std::memory_order_seq_cst)) return false;
    notify();
    return true;
  }

  value_type operator++() { return fetch_add(1) + 1; }
  value_type operator++(int) { return fetch_add(1); }
  value_type operator--() { return fetch_sub(1) - 1; }
  value_type operator--(int) { return fetch_sub(1); }
  value_type operator+=(value_type d) { return fetch_add(d) + d; }
  value_type operator-=(value_type d) { return fetch_sub(d) - d; }

  // Sleeps while the value equals `old`. Returns the value it saw differ.
  value_type wait(value_type old);

  std::string_view kind() const noexcept override { return "atomic integer"; }

 private:
  value_type updated(value_type previous) {
    notify();
    return previous;
  }
  void notify() {
    if (waiters_.load(std::memory_order_seq_cst) != 0) wake_all();
  }
  void wake_all();

  std::atomic<value_type> value_;
  std::atomic<std::uint32_t> waiters_{0};
};

}  // namespace presto
