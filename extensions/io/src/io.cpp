#include <presto/io/io.hpp>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <presto/errors.hpp>
#include <presto/runtime.hpp>
#include <presto/thread.hpp>

#include "reactor.hpp"

namespace presto::io {

using detail::Direction;
using detail::FdState;
using detail::Reactor;

Clock::time_point Deadline::after(std::chrono::duration<double> timeout) noexcept {
  if (!(timeout.count() < 100.0 * 365 * 24 * 3600)) return Clock::time_point::max();  // NaN too
  const Clock::time_point now = Clock::now();
  if (timeout.count() <= 0) return now;
  return now + std::chrono::ceil<Clock::duration>(timeout);
}

namespace {
std::string what(const char* operation, int fd) {
  return std::string("presto::io::") + operation + " on fd " + std::to_string(fd);
}
}  // namespace

namespace {

[[noreturn]] void fail(int error, const char* operation, int fd) {
  throw std::system_error(error, std::generic_category(), what(operation, fd));
}

[[noreturn]] void closed_while_waiting(const char* operation, int fd) {
  throw std::system_error(EBADF, std::generic_category(), what(operation, fd) + ": closed while waiting");
}

void make_nonblocking(FdState& s, int fd, const char* operation) {
  if (s.nonblocking.load(std::memory_order_relaxed)) [[likely]] return;
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) fail(errno, operation, fd);
  if ((flags & O_NONBLOCK) == 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) fail(errno, operation, fd);
  s.nonblocking.store(true, std::memory_order_relaxed);
}

// A StopToken's stop, seen by poll(2) on a plain OS thread: an eventfd that a stop_callback
// makes readable. Made once per operation, only for a token whose stop is possible. The
// callback is unregistered (waiting for one running on another thread) before the eventfd is
// closed, so a stop never writes to a closed or reused descriptor.
class OsStop {
 public:
  OsStop(const StopToken& token, int fd, const char* operation) : event_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (event_ < 0) fail(errno, operation, fd);
    callback_.emplace(token, Signal{event_});  // runs at once if the stop was requested already
  }
  OsStop(const OsStop&) = delete;
  OsStop& operator=(const OsStop&) = delete;
  ~OsStop() {
    callback_.reset();
    ::close(event_);
  }
  int event() const noexcept { return event_; }

 private:
  struct Signal {
    int event;
    void operator()() const noexcept {
      const std::uint64_t one = 1;
      [[maybe_unused]] const ssize_t r = ::write(event, &one, sizeof one);  // cannot fail but by overflow
    }
  };
  int event_;
  std::optional<std::stop_callback<Signal>> callback_;
};

// An OS thread outside any runtime: poll(2) until ready, the deadline or a stop (`stop`, may be
// null). False: timed out. A stop throws Cancelled unless the descriptor is ready: as on a presto
// thread, the token counts only where the thread would sleep.
bool poll_os(int fd, Direction d, Clock::time_point deadline, const char* operation, const OsStop* stop) {
  pollfd p[2] = {{.fd = fd, .events = static_cast<short>(d == Direction::read ? POLLIN : POLLOUT), .revents = 0},
                 {.fd = stop != nullptr ? stop->event() : -1, .events = POLLIN, .revents = 0}};
  const nfds_t n = stop != nullptr ? 2 : 1;
  for (;;) {
    int timeout = -1;
    if (deadline != Clock::time_point::max()) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
      timeout = left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
    }
    const int r = ::poll(p, n, timeout);
    if (r > 0) {
      if ((p[0].revents & POLLNVAL) != 0) fail(EBADF, operation, fd);
      if (p[0].revents != 0) return true;
      // Only the stop: "waiting on read on fd 7 by external thread 'main'", as on a presto thread.
      throw Cancelled(std::string(operation) + " on fd " + std::to_string(fd), Thread::current().describe(), "waiting");
    }
    if (r == 0) return false;
    if (errno != EINTR) fail(errno, operation, fd);
  }
}

// Runs `call` (a system call returning -1 and errno on failure) until it succeeds or fails
// with something other than EAGAIN/EINTR, waiting for `d` between tries. Returns its result.
template <class Call>
long perform(int fd, Direction d, Deadline deadline, const char* operation, std::size_t done, Call&& call) {
  Runtime* rt = Runtime::current();
  if (rt == nullptr) {  // a plain OS thread: wait with poll(2), then try
    // With a deadline or a token, poll before each try: the descriptor may be blocking (it is
    // left as it is here), and a blocking call would keep neither.
    std::optional<OsStop> stop;
    if (deadline.token().stop_possible()) stop.emplace(deadline.token(), fd, operation);
    const OsStop* s = stop ? &*stop : nullptr;
    const bool poll_first = !deadline.never() || s != nullptr;
    for (;;) {
      if (poll_first && !poll_os(fd, d, deadline.at(), operation, s)) throw TimedOut(operation, fd, done);
      const long r = call();
      if (r >= 0) return r;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) fail(errno, operation, fd);
      if (!poll_first) poll_os(fd, d, deadline.at(), operation, nullptr);
    }
  }
  Reactor& reactor = Reactor::of(*rt);
  FdState& s = reactor.state(fd);
  make_nonblocking(s, fd, operation);
  for (;;) {
    const std::uint32_t generation = s.generation.load(std::memory_order_acquire);
    const long r = call();
    if (r >= 0) return r;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) fail(errno, operation, fd);
    switch (reactor.wait(fd, s, d, generation, deadline.at(), deadline.token(), operation)) {
      case Reactor::Outcome::ready: break;
      case Reactor::Outcome::timed_out: throw TimedOut(operation, fd, done);
      case Reactor::Outcome::closed: closed_while_waiting(operation, fd);
    }
  }
}

template <class Once>
void all(const void* buffer, std::size_t n, Once&& once) {
  const auto* p = static_cast<const char*>(buffer);
  std::size_t done = 0;
  while (done < n) done += once(p + done, n - done, done);
}

}  // namespace

namespace {
// ETIMEDOUT, said as "deadline passed" (strerror says "Connection timed out", wrong for a pipe);
// it still compares equal to std::errc::timed_out.
class DeadlineCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "presto::io"; }
  std::string message(int) const override { return "deadline passed"; }
  std::error_condition default_error_condition(int e) const noexcept override {
    return std::generic_category().default_error_condition(e);
  }
};
const DeadlineCategory deadline_category;
}  // namespace

TimedOut::TimedOut(const char* operation, int fd, std::size_t done)
    : std::system_error(std::error_code(ETIMEDOUT, deadline_category), io::what(operation, fd)), done_(done) {}

std::size_t read(int fd, void* buffer, std::size_t n, Deadline deadline) {
  return static_cast<std::size_t>(
      perform(fd, Direction::read, deadline, "read", 0, [&] { return static_cast<long>(::read(fd, buffer, n)); }));
}

std::size_t write(int fd, const void* buffer, std::size_t n, Deadline deadline) {
  return static_cast<std::size_t>(
      perform(fd, Direction::write, deadline, "write", 0, [&] { return static_cast<long>(::write(fd, buffer, n)); }));
}

void write_all(int fd, const void* buffer, std::size_t n, Deadline deadline) {
  all(buffer, n, [&](const char* p, std::size_t left, std::size_t done) {
    return static_cast<std::size_t>(perform(fd, Direction::write, deadline, "write_all", done,
                                            [&] { return static_cast<long>(::write(fd, p, left)); }));
  });
}

std::size_t recv(int fd, void* buffer, std::size_t n, int flags, Deadline deadline) {
  return static_cast<std::size_t>(perform(fd, Direction::read, deadline, "recv", 0, [&] {
    return static_cast<long>(::recv(fd, buffer, n, flags));
  }));
}

std::size_t send(int fd, const void* buffer, std::size_t n, int flags, Deadline deadline) {
  return static_cast<std::size_t>(perform(fd, Direction::write, deadline, "send", 0, [&] {
    return static_cast<long>(::send(fd, buffer, n, flags | MSG_NOSIGNAL));
  }));
}

void send_all(int fd, const void* buffer, std::size_t n, int flags, Deadline deadline) {
  all(buffer, n, [&](const char* p, std::size_t left, std::size_t done) {
    return static_cast<std::size_t>(perform(fd, Direction::write, deadline, "send_all", done, [&] {
      return static_cast<long>(::send(fd, p, left, flags | MSG_NOSIGNAL));
    }));
  });
}

int accept(int listener, sockaddr* address, socklen_t* length, Deadline deadline) {
  const int fd = static_cast<int>(perform(listener, Direction::read, deadline, "accept", 0, [&] {
    const int r = ::accept4(listener, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
    // The connection was reset before it was taken: wait for the next (as Go does).
    if (r < 0 && errno == ECONNABORTED) errno = EAGAIN;
    return static_cast<long>(r);
  }));
  if (Runtime* rt = Runtime::current(); rt != nullptr && fd <= Reactor::kMaxFd) {
    Reactor::of(*rt).state(fd).nonblocking.store(true, std::memory_order_relaxed);
  }
  return fd;
}

void connect(int fd, const sockaddr* address, socklen_t length, Deadline deadline) {
  Runtime* rt = Runtime::current();
  if (rt != nullptr) make_nonblocking(Reactor::of(*rt).state(fd), fd, "connect");
  if (::connect(fd, address, length) == 0) return;
  if (errno != EINPROGRESS && errno != EINTR) fail(errno, "connect", fd);
  // In progress: writable once it is done, then SO_ERROR says how.
  if (!wait(fd, Interest::writable, deadline)) throw TimedOut("connect", fd);
  int error = 0;
  socklen_t size = sizeof error;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0) fail(errno, "connect", fd);
  if (error != 0) fail(error, "connect", fd);
}

bool wait(int fd, Interest interest, Deadline deadline) {
  const Direction d = interest == Interest::readable ? Direction::read : Direction::write;
  Runtime* rt = Runtime::current();
  if (rt == nullptr) {
    std::optional<OsStop> stop;
    if (deadline.token().stop_possible()) stop.emplace(deadline.token(), fd, "wait");
    return poll_os(fd, d, deadline.at(), "wait", stop ? &*stop : nullptr);
  }
  Reactor& reactor = Reactor::of(*rt);
  FdState& s = reactor.state(fd);
  // Readiness now, without sleeping: poll(2) with a zero timeout.
  pollfd p{.fd = fd, .events = static_cast<short>(d == Direction::read ? POLLIN : POLLOUT), .revents = 0};
  for (;;) {
    const std::uint32_t generation = s.generation.load(std::memory_order_acquire);
    const int r = ::poll(&p, 1, 0);
    if (r > 0) {
      if ((p.revents & POLLNVAL) != 0) fail(EBADF, "wait", fd);
      return true;
    }
    if (r < 0 && errno != EINTR) fail(errno, "wait", fd);
    if (r < 0) continue;
    switch (reactor.wait(fd, s, d, generation, deadline.at(), deadline.token(), "wait")) {
      case Reactor::Outcome::ready: break;
      case Reactor::Outcome::timed_out: return false;
      case Reactor::Outcome::closed: closed_while_waiting("wait", fd);
    }
  }
}

void close(int fd) {
  // Only a runtime whose reactor exists can have threads waiting on fd.
  if (Runtime* rt = Runtime::current(); rt != nullptr && rt->idle_poller() != nullptr && fd >= 0 &&
                                        fd <= Reactor::kMaxFd) {
    Reactor& reactor = Reactor::of(*rt);
    reactor.close(fd, reactor.state(fd));
  }
  if (::close(fd) != 0 && errno != EINTR) fail(errno, "close", fd);
}

}  // namespace presto::io
