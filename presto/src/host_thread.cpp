#include "host_thread.hpp"

#include <algorithm>

#include <pthread.h>

#include "futex.hpp"

namespace presto::detail {

HostThread::HostThread(std::string name, std::function<void()> loop)
    : name_(std::move(name)), loop_(std::move(loop)) {
  name_.resize(std::min<std::size_t>(name_.size(), 15));  // the kernel's limit, without the NUL
}

HostThread::~HostThread() {
  if (!thread_.joinable()) return;
  wait_idle();
  state_.store(kExiting, std::memory_order_release);
  futex_wake_all(state_);
  thread_.join();
}

void HostThread::start() {
  state_.store(kStarted, std::memory_order_release);
  if (thread_.joinable()) {
    futex_wake_all(state_);
    return;
  }
  try {
    thread_ = std::thread([this] { main(); });
  } catch (...) {
    state_.store(kIdle, std::memory_order_relaxed);
    throw;
  }
}

void HostThread::wait_idle() noexcept {
  for (std::uint32_t s = state_.load(std::memory_order_acquire); s != kIdle; s = state_.load(std::memory_order_acquire)) {
    futex_wait(state_, s);
  }
}

void HostThread::main() noexcept {
  pthread_setname_np(pthread_self(), name_.c_str());
  for (;;) {
    std::uint32_t s = state_.load(std::memory_order_acquire);
    for (; s == kIdle; s = state_.load(std::memory_order_acquire)) futex_wait(state_, kIdle);
    if (s == kExiting) return;
    loop_();
    state_.store(kIdle, std::memory_order_release);
    futex_wake_all(state_);
  }
}

}  // namespace presto::detail
