// presto::io: descriptors that block only the calling presto thread. Pipes, socketpairs and
// TCP over 1, 2 and 4 processors with the per-processor and the seeded shuffle pools; many
// threads on many descriptors; deadlines; a descriptor closed while threads wait; end of file;
// partial writes; idle processors waiting in epoll use no CPU; a program whose threads all
// wait on I/O is not a deadlock; set_processors and preemption while threads wait.

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <presto/io/io.hpp>

#include "test_support.hpp"

using namespace presto;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    r = fds[0];
    w = fds[1];
  }
};

std::array<int, 2> socket_pair() {
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  return {fds[0], fds[1]};
}

// The matrix of the I/O tests: 1, 2, 4 processors x the default and the seeded shuffle pool.
auto io_configs() {
  std::vector<test::Config> all;
  for (std::size_t p : {1, 2, 4}) {
    for (test::PoolKind k : {test::PoolKind::local_queue, test::PoolKind::shuffle}) all.push_back({p, k});
  }
  return Catch::Generators::from_range(all);
}

// A scheduler that lets the test read what Scheduler::halt() would report.
class ListingScheduler : public Scheduler {
 public:
  using Scheduler::Scheduler;
  using Scheduler::blocked_threads;
};

RuntimeConfig listing_config(const test::Config& c) {
  RuntimeConfig rc = test::runtime_config(c);
  rc.scheduler = std::make_unique<ListingScheduler>(std::move(rc.pool));
  return rc;
}

std::vector<BlockedThread> blocked_threads(Runtime& rt) {
  return static_cast<ListingScheduler&>(rt.scheduler()).blocked_threads();
}

// blocked_threads() reads the waiters' state while the run goes on; the reactor's wake-up
// writes it later, after data that the pipe orders after the read, out of ThreadSanitizer's
// sight. A zero-deadline wait on the same descriptor passes through the waiters' lock, which
// the wake-up takes too: the order, made visible.
void order_before_wakeup(int fd) { io::wait(fd, io::Interest::readable, Clock::now()); }

double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

const bool sigpipe_ignored = [] {
  ::signal(SIGPIPE, SIG_IGN);
  return true;
}();

}  // namespace

TEST_CASE("a token passed around a ring of pipes", "[io]") {
  auto cfg = GENERATE(io_configs());
  INFO(cfg);
  const int kThreads = 8;
  const int kRounds = static_cast<int>(test::scaled(500));
  std::vector<Pipe> ring(kThreads);
  test::Record record;
  test::run(cfg, [&] {
    std::vector<JoinHandle<void>> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.push_back(fork([&, i] {
        const int in = ring[i].r, out = ring[(i + 1) % kThreads].w;
        for (int round = 0; round < kRounds; ++round) {
          int token = 0;
          if (i == 0) {
            token = round;
            io::write_all(out, &token, sizeof token);
            io::read(in, &token, sizeof token);
            record.expect(token == round + kThreads - 1, "token came back wrong");
          } else {
            if (io::read(in, &token, sizeof token) != sizeof token) record.fail("short read");
            ++token;
            io::write_all(out, &token, sizeof token);
          }
        }
      }));
    }
    for (auto& t : threads) t.join();
  });
  PRESTO_CHECK_RECORD(record);
  for (auto& p : ring) {
    ::close(p.r);
    ::close(p.w);
  }
}

TEST_CASE("many threads blocked on many socketpairs", "[io]") {
  auto cfg = GENERATE(io_configs());
  INFO(cfg);
  const std::size_t kPairs = test::scaled(200);
  const int kMessages = 20;
  std::vector<std::array<int, 2>> pairs;
  for (std::size_t i = 0; i < kPairs; ++i) pairs.push_back(socket_pair());
  test::Record record;
  std::atomic<std::size_t> echoed{0};
  test::run(cfg, [&] {
    std::vector<JoinHandle<void>> threads;
    // Every server blocks in recv before any client sends: kPairs threads on kPairs descriptors.
    for (auto& p : pairs) {
      threads.push_back(fork([&, fd = p[0]] {
        char buf[64];
        while (std::size_t n = io::recv(fd, buf, sizeof buf)) {
          io::send_all(fd, buf, n);
          echoed.fetch_add(1, std::memory_order_relaxed);
        }
        io::close(fd);
      }));
    }
    for (std::size_t i = 0; i < kPairs; ++i) {
      threads.push_back(fork([&, i, fd = pairs[i][1]] {
        for (int m = 0; m < kMessages; ++m) {
          const std::string msg = std::to_string(i) + ":" + std::to_string(m);
          io::send_all(fd, msg.data(), msg.size());
          std::string got(msg.size(), '\0');
          std::size_t have = 0;
          while (have < got.size()) have += io::recv(fd, got.data() + have, got.size() - have);
          record.expect(got == msg, "pair " + std::to_string(i) + " got '" + got + "' for '" + msg + "'");
        }
        io::close(fd);  // the server sees end of file
      }));
    }
    for (auto& t : threads) t.join();
  });
  PRESTO_CHECK_RECORD(record);
  CHECK(echoed >= kPairs);  // at least one recv per message; several messages may come as one
}

TEST_CASE("TCP: accept and connect over loopback", "[io]") {
  auto cfg = GENERATE(io_configs());
  INFO(cfg);
  const int kClients = static_cast<int>(test::scaled(50));
  test::Record record;
  test::run(cfg, [&] {
    int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener, 128) != 0) {
      record.fail("bind/listen failed");
      return;
    }
    socklen_t len = sizeof addr;
    ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
    auto server = fork([&] {
      std::vector<JoinHandle<void>> conns;
      for (int i = 0; i < kClients; ++i) {
        int fd = io::accept(listener);
        conns.push_back(fork([&, fd] {
          char c;
          while (io::read(fd, &c, 1) == 1) io::write_all(fd, &c, 1);
          io::close(fd);
        }));
      }
      for (auto& c : conns) c.join();
    });
    std::vector<JoinHandle<void>> clients;
    for (int i = 0; i < kClients; ++i) {
      clients.push_back(fork([&, i] {
        int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        io::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr, 10s);
        const char c = static_cast<char>('a' + i % 26);
        io::write_all(fd, &c, 1);
        char back = 0;
        record.expect(io::read(fd, &back, 1, 10s) == 1 && back == c, "client " + std::to_string(i) + " echo");
        io::close(fd);
      }));
    }
    for (auto& c : clients) c.join();
    server.join();
    io::close(listener);
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("connect to a port nobody listens on fails with the connection's error", "[io]") {
  std::string error;
  test::run({}, [&] {
    int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr);  // a free port, not listened on
    socklen_t len = sizeof addr;
    ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    try {
      io::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr, 5s);
    } catch (const std::system_error& e) {
      error = e.what();
      if (e.code() != std::errc::connection_refused) error += " (not ECONNREFUSED)";
    }
    io::close(fd);
    ::close(listener);
  });
  CHECK_THAT(error, Contains("presto::io::connect on fd") && Contains("refused"));
  CHECK_THAT(error, !Contains("not ECONNREFUSED"));
}

TEST_CASE("deadlines: an operation gives up with TimedOut, wait() with false", "[io]") {
  auto cfg = GENERATE(io_configs());
  INFO(cfg);
  Pipe p;
  std::string message;
  bool waited = true;
  std::chrono::nanoseconds took{};
  std::size_t done = 0;
  test::run(cfg, [&] {
    const auto start = Clock::now();
    try {
      char c;
      io::read(p.r, &c, 1, 20ms);
    } catch (const io::TimedOut& e) {
      message = e.what();
      if (e.code() != std::errc::timed_out) message += " (wrong code)";
    }
    took = Clock::now() - start;
    waited = io::wait(p.r, io::Interest::readable, Clock::now() + 5ms);
    // A write that fills the pipe and then times out says how much it wrote.
    std::vector<char> big(1 << 20, 'x');
    try {
      io::write_all(p.w, big.data(), big.size(), 20ms);
    } catch (const io::TimedOut& e) {
      done = e.done();
    }
  });
  CHECK_THAT(message, Contains("presto::io::read on fd " + std::to_string(p.r)) && Contains("deadline passed"));
  CHECK_THAT(message, !Contains("wrong code"));
  CHECK(took >= 20ms);
  CHECK_FALSE(waited);
  CHECK(done > 0);
  CHECK(done < (1u << 20));
  ::close(p.r);
  ::close(p.w);
}

TEST_CASE("a stop token cancels a wait on a descriptor, which stays usable", "[io]") {
  auto cfg = GENERATE(io_configs());
  INFO(cfg);
  Pipe p;
  std::string early, late;
  char got = 0;
  test::run(cfg, [&] {
    // A stop requested before the call: Cancelled at once, nothing read.
    StopSource stopped;
    stopped.request_stop();
    try {
      char c;
      io::read(p.r, &c, 1, {stopped.get_token()});
    } catch (const Cancelled& e) {
      early = e.what();
    }
    // A stop requested while the reader sleeps on the empty pipe wakes it with Cancelled.
    StopSource stop;
    auto reader = fork([&] {
      try {
        char c;
        io::read(p.r, &c, 1, {10s, stop.get_token()});
      } catch (const Cancelled& e) {
        late = e.what();
      }
    });
    while (reader.thread().state() != ThreadState::blocked) this_thread::yield();
    stop.request_stop();
    reader.join();
    // The descriptor still works for the next reader.
    io::write(p.w, "x", 1);
    io::read(p.r, &got, 1, 1s);
  });
  CHECK_THAT(early, Contains("waiting on read on fd " + std::to_string(p.r) + " by thread") && Contains("was cancelled"));
  CHECK_THAT(late, Contains("waiting on read on fd " + std::to_string(p.r) + " by thread") && Contains("was cancelled"));
  CHECK(got == 'x');
  ::close(p.r);
  ::close(p.w);
}

TEST_CASE("a descriptor closed with io::close wakes its waiters with EBADF", "[io]") {
  auto cfg = GENERATE(io_configs());
  INFO(cfg);
  Pipe p;
  const int kWaiters = 5;
  std::atomic<int> closed_errors{0};
  test::Record record;
  Runtime rt{listing_config(cfg)};
  rt.run([&] {
    std::vector<JoinHandle<void>> waiters;
    for (int i = 0; i < kWaiters; ++i) {
      waiters.push_back(fork([&] {
        try {
          char c;
          io::read(p.r, &c, 1);
          record.fail("read returned");
        } catch (const std::system_error& e) {
          if (e.code() == std::errc::bad_file_descriptor && std::string(e.what()).find("closed while waiting") != std::string::npos) {
            ++closed_errors;
          } else {
            record.fail(e.what());
          }
        }
      }));
    }
    // Wait until all are asleep on the descriptor (bounded by the count, not by time).
    while (true) {
      std::size_t on_fd = 0;
      for (const auto& b : blocked_threads(rt)) {
        if (b.waiting_on == "read on fd " + std::to_string(p.r)) ++on_fd;
      }
      if (on_fd == kWaiters) break;
      this_thread::yield();
    }
    io::close(p.r);
    for (auto& w : waiters) w.join();
  });
  PRESTO_CHECK_RECORD(record);
  CHECK(closed_errors == kWaiters);
  ::close(p.w);
}

TEST_CASE("end of file: a reader gets 0 when the writer closes", "[io]") {
  auto cfg = GENERATE(io_configs());
  INFO(cfg);
  Pipe p;
  auto sp = socket_pair();
  std::size_t pipe_eof = 99, socket_eof = 99;
  test::run(cfg, [&] {
    auto reader = fork([&] {
      char c;
      pipe_eof = io::read(p.r, &c, 1);
      socket_eof = io::recv(sp[0], &c, 1);
    });
    this_thread::yield();
    io::close(p.w);
    io::close(sp[1]);
    reader.join();
  });
  CHECK(pipe_eof == 0);
  CHECK(socket_eof == 0);
  ::close(p.r);
  ::close(sp[0]);
}

TEST_CASE("partial writes: write() takes what fits, write_all() all of it", "[io]") {
  auto cfg = GENERATE(io_configs());
  INFO(cfg);
  Pipe p;
  const std::size_t kBytes = 1 << 20;  // 16 pipe buffers
  std::vector<unsigned char> out(kBytes), in;
  std::iota(out.begin(), out.end(), 0);
  std::size_t first = 0;
  test::run(cfg, [&] {
    first = io::write(p.w, out.data(), out.size());  // the pipe's capacity at most
    auto reader = fork([&] {
      unsigned char buf[1000];  // odd sizes: the writer is woken mid-buffer
      while (std::size_t n = io::read(p.r, buf, sizeof buf)) in.insert(in.end(), buf, buf + n);
    });
    io::write_all(p.w, out.data() + first, out.size() - first);
    io::close(p.w);
    reader.join();
  });
  CHECK(first > 0);
  CHECK(first < kBytes);
  REQUIRE(in.size() == kBytes);
  CHECK(in == out);
  ::close(p.r);
}

TEST_CASE("threads all blocked on I/O are not a deadlock, are listed, and idle processors use no CPU", "[io]") {
  Pipe p;
  std::vector<BlockedThread> blocked;
  double cpu_ms = 0;
  std::size_t got = 0;
  Runtime rt{listing_config({.processors = 4})};
  std::thread writer;
  rt.run([&] {
    auto reader = fork(ThreadAttributes{.name = "reader"}, [&] {
      char c;
      got = io::read(p.r, &c, 1);
    });
    while (blocked.empty()) {
      blocked = blocked_threads(rt);
      this_thread::yield();
    }
    order_before_wakeup(p.r);
    // Every presto thread now waits (the reader on the pipe, main on the reader): only the
    // OS thread below can end this, after 200 ms.
    writer = std::thread([&] {
      const double before = process_cpu_ms();
      std::this_thread::sleep_for(200ms);
      cpu_ms = process_cpu_ms() - before;
      const char c = 'x';
      io::write_all(p.w, &c, 1);  // from an OS thread: plain system calls
    });
    reader.join();
  });
  writer.join();
  REQUIRE(blocked.size() == 1);
  CHECK(blocked[0].thread == "thread 'reader' (id " + std::to_string(blocked[0].id) + ")");
  CHECK(blocked[0].waiting_on == "read on fd " + std::to_string(p.r));
  CHECK(got == 1);
  INFO("process CPU time during a 200 ms wait on I/O, 4 processors: " << cpu_ms << " ms");
  CHECK(cpu_ms < 40.0);  // one processor in epoll_wait, three parked; busy ones would burn 800 ms
  ::close(p.r);
  ::close(p.w);
}

TEST_CASE("from a plain OS thread each operation blocks the OS thread, deadlines included", "[io]") {
  Pipe p;
  bool timed_out = false;
  try {
    char c;
    io::read(p.r, &c, 1, 10ms);
  } catch (const io::TimedOut&) {
    timed_out = true;
  }
  CHECK(timed_out);
  std::thread writer([&] {
    std::this_thread::sleep_for(10ms);
    io::write_all(p.w, "ok", 2);
  });
  char buf[2];
  std::size_t n = 0;
  while (n < 2) n += io::read(p.r, buf + n, 2 - n, 10s);
  writer.join();
  CHECK(std::string(buf, 2) == "ok");
  CHECK_FALSE(io::wait(p.r, io::Interest::readable, 1ms));
  CHECK(io::wait(p.w, io::Interest::writable, 1ms));
  ::close(p.r);
  ::close(p.w);
}

namespace {

// Whether OS thread `tid` of this process sleeps in the kernel (state S in its stat), or false
// if that cannot be read.
bool os_thread_sleeps(pid_t tid) {
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/stat";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  const char* paren = std::strrchr(buf, ')');  // the name may hold spaces; the state follows it
  return paren != nullptr && paren[1] == ' ' && paren[2] == 'S';
}

}  // namespace

TEST_CASE("from a plain OS thread a stop token cancels the wait; a ready descriptor wins over a stop", "[io]") {
  Pipe p;
  // A stop requested before the call: Cancelled, naming the operation, the descriptor and the
  // external thread.
  StopSource stopped;
  stopped.request_stop();
  std::string early;
  try {
    char c;
    io::read(p.r, &c, 1, {stopped.get_token()});
  } catch (const Cancelled& e) {
    early = e.what();
  }
  CHECK_THAT(early, Contains("waiting on read on fd " + std::to_string(p.r) + " by external thread") &&
                        Contains("was cancelled"));
  CHECK_FALSE(io::wait(p.r, io::Interest::readable, 0ms));  // nothing was consumed or left
  std::string waited;
  try {
    (void)io::wait(p.r, io::Interest::readable, {1h, stopped.get_token()});
  } catch (const Cancelled& e) {
    waited = e.what();
  }
  CHECK_THAT(waited, Contains("waiting on wait on fd " + std::to_string(p.r)));

  // A stop requested while the OS thread sleeps in poll(2) (seen in /proc, bounded by a count).
  StopSource during;
  std::atomic<pid_t> reader_tid{0};
  std::string late;
  std::thread reader([&] {
    reader_tid = static_cast<pid_t>(::gettid());
    try {
      char c;
      io::read(p.r, &c, 1, {1h, during.get_token()});
    } catch (const Cancelled& e) {
      late = e.what();
    }
  });
  while (reader_tid.load() == 0) std::this_thread::yield();
  bool saw_sleep = false;
  for (int i = 0; i < 200000 && !saw_sleep; ++i) saw_sleep = os_thread_sleeps(reader_tid.load());
  during.request_stop();
  reader.join();
  CHECK(saw_sleep);
  CHECK_THAT(late, Contains("waiting on read on fd " + std::to_string(p.r) + " by external thread"));

  // Ready data wins over a stop requested already (the token counts only where it would sleep).
  io::write_all(p.w, "r", 1);
  char r = 0;
  CHECK(io::read(p.r, &r, 1, {stopped.get_token()}) == 1);
  CHECK(r == 'r');

  // A stop racing the data: each byte is read once, or left in the pipe for the next read.
  std::mt19937_64 random(test::seed());
  std::size_t got = 0, cancelled = 0, left = 0;
  const std::size_t rounds = test::scaled(300);
  for (std::size_t i = 0; i < rounds; ++i) {
    StopSource race;
    const bool stop_first = (random() & 1) != 0;
    const unsigned gap = static_cast<unsigned>(random() % 50000);  // spins between the two, at most
    std::thread other([&] {
      if (stop_first) race.request_stop();
      std::atomic<unsigned> k{0};
      while (k.fetch_add(1, std::memory_order_relaxed) < gap) {
      }
      io::write_all(p.w, "x", 1);
      if (!stop_first) race.request_stop();
    });
    char c = 0;
    bool was_cancelled = false;
    try {
      got += io::read(p.r, &c, 1, {race.get_token()});
      CHECK(c == 'x');
    } catch (const Cancelled&) {
      was_cancelled = true;
      ++cancelled;
    }
    other.join();
    if (was_cancelled) {  // the byte was left for the next read
      c = 0;
      left += io::read(p.r, &c, 1, 1s);
      CHECK(c == 'x');
    }
  }
  INFO("seed " << test::seed() << ": " << got << " read, " << cancelled << " cancelled");
  CHECK(got + cancelled == rounds);
  CHECK(left == cancelled);
  CHECK_FALSE(io::wait(p.r, io::Interest::readable, 0ms));  // nothing read twice or left over
  ::close(p.r);
  ::close(p.w);
}

TEST_CASE("set_processors while threads wait on I/O", "[io]") {
  const int kPairs = static_cast<int>(test::scaled(40));
  const int kRounds = 20;
  std::vector<std::array<int, 2>> pairs;
  for (int i = 0; i < kPairs; ++i) pairs.push_back(socket_pair());
  test::Record record;
  Runtime rt{RuntimeConfig{.processors = 1, .seed = test::seed()}};
  rt.run([&] {
    std::vector<JoinHandle<void>> threads;
    for (auto& sp : pairs) {
      threads.push_back(fork([&, fd = sp[0]] {
        int v;
        while (io::read(fd, &v, sizeof v) == sizeof v) io::write_all(fd, &v, sizeof v);
        io::close(fd);
      }));
      threads.push_back(fork([&, fd = sp[1]] {
        for (int r = 0; r < kRounds; ++r) {
          if (r == kRounds / 2) rt.set_processors(static_cast<std::size_t>(1 + fd % 4));
          int v = r, back = -1;
          io::write_all(fd, &v, sizeof v);
          io::read(fd, &back, sizeof back);
          record.expect(back == r, "round trip");
        }
        io::close(fd);
      }));
    }
    for (auto& t : threads) t.join();
    rt.set_processors(1);
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("busy processors: a thread whose data came runs, with preemption or at a yield", "[io]") {
  // The reader waits on the pipe before the data comes; the only processor never idles (its
  // other thread computes), so only the reactor's backstop can see the data, and the reader
  // gets the processor when the computing thread is preempted (or, without preemption: under
  // the sanitizers, yields).
  Pipe p;
  std::atomic<bool> stop{false};
  std::size_t got = 0;
  RuntimeConfig rc = listing_config({.processors = 1});
  rc.quantum = 1ms;
  Runtime rt{std::move(rc)};
  rt.run([&] {
    const bool preempts = rt.quantum() != 0us;
    auto reader = fork(ThreadAttributes{.name = "reader"}, [&] {
      char c;
      got = io::read(p.r, &c, 1, 30s);
      stop = true;
    });
    while (blocked_threads(rt).empty()) this_thread::yield();  // the reader waits on the pipe
    order_before_wakeup(p.r);
    std::thread writer([&] { io::write_all(p.w, "x", 1); });   // the outside world answers
    while (!stop.load(std::memory_order_relaxed)) {            // compute, never idle
      if (!preempts) this_thread::yield();
    }
    writer.join();
    reader.join();
  });
  CHECK(got == 1);
  ::close(p.r);
  ::close(p.w);
}

TEST_CASE("a thread abandoned while it waits on I/O does not keep the next run from halting", "[io]") {
  Pipe p;
  Runtime rt{RuntimeConfig{.processors = 2, .seed = test::seed()}};
  CHECK_THROWS_AS(rt.run([&] {
                    auto reader = fork([&] {
                      char c;
                      io::read(p.r, &c, 1);
                    });
                    reader.detach();
                    this_thread::yield();
                    throw std::runtime_error("the first thread fails: the waiting reader is abandoned");
                  }),
                  std::runtime_error);
  // Were the abandoned reader still counted, this run would never halt.
  CHECK(rt.run([] { return 7; }) == 7);
  ::close(p.r);
  ::close(p.w);
}
