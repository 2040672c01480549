#include <presto/io/io.hpp>

#include <cerrno>
#include <cmath>
#include <string>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <presto/runtime.hpp>

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

// An OS thread outside any runtime: poll(2) until ready or the deadline. False: timed out.
bool poll_os(int fd, Direction d, Clock::time_point deadline, const char* operation) {
  pollfd p{.fd = fd, .events = static_cast<short>(d == Direction::read ? POLLIN : POLLOUT), .revents = 0};
  for (;;) {
    int timeout = -1;
    if (deadline != Clock::time_point::max()) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
      timeout = left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
    }
    const int r = ::poll(&p, 1, timeout);
    if (r > 0) {
      if ((p.revents & POLLNVAL) != 0) fail(EBADF, operation, fd);
      return true;
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
    for (;;) {
      if (!deadline.never() && !poll_os(fd, d, deadline.at(), operation)) throw TimedOut(operation, fd, done);
      const long r = call();
      if (r >= 0) return r;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) fail(errno, operation, fd);
      if (deadline.never()) poll_os(fd, d, deadline.at(), operation);
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
  if (rt == nullptr) return poll_os(fd, d, deadline.at(), "wait");
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
