#pragma once
// presto::io: I/O on file descriptors that blocks only the calling presto thread.
//
//   int fd = presto::io::accept(listener);
//   char buf[4096];
//   while (std::size_t n = presto::io::read(fd, buf, sizeof buf, 5s))   // 0: end of file
//     presto::io::write_all(fd, buf, n);
//   presto::io::close(fd);
//
// Each operation first tries the system call; if the descriptor is not ready (EAGAIN), the
// calling presto thread sleeps until the runtime's reactor (epoll; see presto/idle_poller.hpp)
// sees it ready, and its processor runs other threads meanwhile. Idle processors wait in
// epoll_wait instead of parking, so a program whose threads all wait on I/O uses no CPU, and it
// is not a deadlock: the run goes on until the descriptors become ready. The reactor is made in
// the calling thread's runtime on first use. A thread blocked here is listed by
// Scheduler::blocked_threads() and by gdb's `info presto-threads` as waiting on
// "read on fd 7" (the operation and the descriptor).
//
// Called from a plain OS thread (no presto runtime), each operation waits with poll(2) and
// blocks that OS thread: the same code works in both places, deadlines and stop tokens
// included. There the descriptor is left as it is: on a blocking socket, connect blocks in
// the kernel and neither its deadline nor its token is kept.
//
// Descriptors: presto::io makes a descriptor non-blocking (O_NONBLOCK) the first time a presto
// thread uses it, and remembers that it did until presto::io::close(fd). Close descriptors
// used here with presto::io::close: it wakes the threads waiting on them (they get an error)
// and forgets what the reactor knew, so a reused descriptor number starts afresh. A descriptor
// closed with ::close while threads wait on it leaves them waiting until their deadline (or
// forever): the kernel tells epoll nothing about a closed descriptor. Regular files are
// always ready (epoll does not support them); their reads block the processor as usual.
//
// Errors: std::system_error with the errno and a message naming the operation and the
// descriptor ("presto::io::read on fd 7: Connection reset by peer"); a deadline that passes
// throws presto::io::TimedOut; a descriptor closed by presto::io::close while the thread waits
// throws std::system_error with EBADF. Writes and sends never raise SIGPIPE on sockets
// (MSG_NOSIGNAL); ::write on a pipe whose reader closed still does, as in any program:
// ignore SIGPIPE (signal(SIGPIPE, SIG_IGN)) to get EPIPE instead.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <system_error>

#include <sys/socket.h>

#include <presto/stop_token.hpp>
#include <presto/synchro_object.hpp>

namespace presto::io {

// When an operation gives up: never (the default), at a time point, or after a duration
// counted from the call:
//   presto::io::read(fd, buf, n);                          // waits as long as it takes
//   presto::io::read(fd, buf, n, 100ms);                   // gives up 100 ms from now
//   presto::io::read(fd, buf, n, presto::Clock::now() + 1s);
// A duration counts once per call: write_all's deadline covers all of its writes.
//
// A Deadline may also carry a StopToken (presto/stop_token.hpp): a stop requested before or
// while a presto thread waits makes the operation throw presto::Cancelled, naming the
// operation, the descriptor and the thread ("waiting on read on fd 7 by thread 'reader' (id 4)
// was cancelled: ..."); bytes already moved by write_all or send_all stay moved. A wake-up
// racing the stop is not lost, and the descriptor stays usable.
//   presto::io::read(fd, buf, n, {token});                 // until data, EOF or a stop
//   presto::io::read(fd, buf, n, {100ms, token});          // ... or 100 ms
// On a plain OS thread outside any runtime the same holds: the thread polls the descriptor and
// an eventfd that the stop signals, and throws Cancelled naming "external thread '...'"; a
// descriptor that is ready wins over a stop requested meanwhile (the token counts only where
// the thread would sleep). This costs an eventfd per operation, only with a token that can
// be stopped.
class Deadline {
 public:
  Deadline() noexcept = default;
  Deadline(Clock::time_point at) noexcept : at_(at) {}  // NOLINT: implicit by design
  template <class Rep, class Period>
  Deadline(std::chrono::duration<Rep, Period> timeout)  // NOLINT: implicit by design
      : at_(after(std::chrono::duration<double>(timeout))) {}
  Deadline(StopToken token) noexcept : token_(std::move(token)) {}  // NOLINT: implicit by design
  Deadline(Clock::time_point at, StopToken token) noexcept : at_(at), token_(std::move(token)) {}
  template <class Rep, class Period>
  Deadline(std::chrono::duration<Rep, Period> timeout, StopToken token)
      : at_(after(std::chrono::duration<double>(timeout))), token_(std::move(token)) {}

  Clock::time_point at() const noexcept { return at_; }
  bool never() const noexcept { return at_ == Clock::time_point::max(); }
  const StopToken& token() const noexcept { return token_; }

 private:
  // now + timeout; now if it is negative, never if it is beyond a century.
  static Clock::time_point after(std::chrono::duration<double> timeout) noexcept;

  Clock::time_point at_ = Clock::time_point::max();
  StopToken token_;
};

// A deadline passed. `done()`: the bytes written before it did (write_all, send_all), else 0.
class TimedOut : public std::system_error {
 public:
  TimedOut(const char* operation, int fd, std::size_t done = 0);
  std::size_t done() const noexcept { return done_; }

 private:
  std::size_t done_;
};

// What wait() waits for.
enum class Interest : unsigned char { readable = 1, writable = 2 };

// Reads up to n bytes (at least one, unless n is 0); 0 means end of file.
std::size_t read(int fd, void* buffer, std::size_t n, Deadline deadline = {});
// Writes at least one byte (unless n is 0) and returns how many: a pipe or socket may take
// fewer than n (a partial write).
std::size_t write(int fd, const void* buffer, std::size_t n, Deadline deadline = {});
// Writes all n bytes, as many write()s as it takes. TimedOut::done() says how many went.
void write_all(int fd, const void* buffer, std::size_t n, Deadline deadline = {});
// recv(2) and send(2) on a socket, with their flags (send adds MSG_NOSIGNAL).
std::size_t recv(int fd, void* buffer, std::size_t n, int flags = 0, Deadline deadline = {});
std::size_t send(int fd, const void* buffer, std::size_t n, int flags = 0, Deadline deadline = {});
void send_all(int fd, const void* buffer, std::size_t n, int flags = 0, Deadline deadline = {});
// Accepts a connection on a listening socket: the new socket, non-blocking and close-on-exec.
// `address`/`length` as for accept(2) (both may be null).
int accept(int listener, sockaddr* address = nullptr, socklen_t* length = nullptr, Deadline deadline = {});
// Connects a socket; on failure throws std::system_error with the connection's error
// (ECONNREFUSED, ...). A socket whose connect timed out must be closed (POSIX leaves it unusable).
void connect(int fd, const sockaddr* address, socklen_t length, Deadline deadline = {});
// Waits until fd is readable (or at end of file, or in error) or writable. Returns false if
// the deadline passed first (the only call here that does not throw TimedOut).
bool wait(int fd, Interest interest, Deadline deadline = {});
// Wakes the threads waiting on fd (their operation throws std::system_error, EBADF: "closed
// while waiting"), forgets fd, then closes it. Throws std::system_error if ::close fails.
void close(int fd);

}  // namespace presto::io
