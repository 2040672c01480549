// io_uring against epoll for presto::io's reactor (#20: "Linux epoll, or io_uring where the
// kernel and liburing allow it, chosen by measurement").
//
// What a reactor does per wait, on pipes (or a socketpair with --socketpair), in four ways:
//   epoll-oneshot  presto::io's: try read(); EAGAIN: epoll_ctl(MOD, EPOLLIN|EPOLLONESHOT) to
//                  arm, epoll_wait, read() again
//   epoll-et       registered once, edge-triggered: try read(); EAGAIN: epoll_wait, read()
//   uring-poll     try read(); EAGAIN: one io_uring_enter submits IORING_OP_POLL_ADD and waits
//                  for it, read() again (the readiness model on io_uring)
//   uring-read     one io_uring_enter submits IORING_OP_READ and waits for its completion (the
//                  completion model: the kernel reads; a reactor built on it owns the buffer
//                  while the read is pending)
// Two scenarios:
//   ping-pong  two OS threads bounce a byte over two pipes; each side waits for real (its
//              read finds nothing, it sleeps in the kernel, the other side's write wakes it).
//              Per round trip: two waits, two wake-ups, two writes.
//   ready      one thread writes a byte into its own pipe and then waits and reads it through
//              the mechanism (no sleep): the mechanism's system calls alone.
// Each (scenario, way) runs --reps times, interleaved with the others so that the machine's
// load falls on all alike; the medians are printed, one JSON line each, then a table with each
// way's median over presto::io's (epoll-oneshot). If io_uring cannot be set up
// (io_uring_queue_init fails: a sandbox, kernel.io_uring_disabled), it prints why and measures
// epoll alone.
//
//   io_uring_vs_epoll [--quick] [--reps N] [--pingpong N] [--ready N] [--socketpair]

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace {

enum class Way { epoll_oneshot, epoll_et, uring_poll, uring_read };
constexpr std::array kWays = {Way::epoll_oneshot, Way::epoll_et, Way::uring_poll, Way::uring_read};

const char* name(Way w) {
  switch (w) {
    case Way::epoll_oneshot: return "epoll-oneshot";
    case Way::epoll_et: return "epoll-et";
    case Way::uring_poll: return "uring-poll";
    case Way::uring_read: return "uring-read";
  }
  return "?";
}

bool uses_uring(Way w) { return w == Way::uring_poll || w == Way::uring_read; }

[[noreturn]] void die(const char* what, int error) {
  throw std::runtime_error(std::string(what) + ": " + std::strerror(error));
}

// A one-way byte channel: a non-blocking pipe, or one direction of a socketpair.
struct Channel {
  int r = -1, w = -1;
  explicit Channel(bool socketpair) {
    int fds[2];
    if (socketpair) {
      if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) die("socketpair", errno);
    } else if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) {
      die("pipe2", errno);
    }
    r = fds[0];
    w = fds[1];
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel() {
    ::close(r);
    ::close(w);
  }
};

void put(int fd) {
  const char c = 'x';
  while (::write(fd, &c, 1) != 1) {
    if (errno != EINTR && errno != EAGAIN) die("write", errno);
  }
}

// One thread's reactor: what it waits with, for one descriptor it reads.
class Waiter {
 public:
  Waiter(Way way, int fd) : way_(way), fd_(fd) {
    if (uses_uring(way_)) {
      const int r = io_uring_queue_init(8, &ring_, 0);
      if (r < 0) die("io_uring_queue_init", -r);
      return;
    }
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_ < 0) die("epoll_create1", errno);
    if (way_ == Way::epoll_et) {
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLET;
      ev.data.fd = fd_;
      if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd_, &ev) != 0) die("epoll_ctl", errno);
    }
  }
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;
  ~Waiter() {
    if (uses_uring(way_)) {
      io_uring_queue_exit(&ring_);
    } else {
      ::close(epoll_);
    }
  }

  // Reads one byte, waiting for it the way this waiter does. `try_first`: read before waiting
  // (a reactor's path: the byte may be there); false forces a pass through the mechanism.
  void read_one(bool try_first) {
    char c;
    if (way_ == Way::uring_read) {
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
      io_uring_prep_read(sqe, fd_, &c, 1, 0);
      if (complete() != 1) die("uring read", EIO);
      return;
    }
    for (bool first = true;; first = false) {
      if (!first || try_first) {
        const ssize_t n = ::read(fd_, &c, 1);
        if (n == 1) return;
        if (n < 0 && errno != EAGAIN && errno != EINTR) die("read", errno);
      }
      wait_readable();
    }
  }

 private:
  void wait_readable() {
    switch (way_) {
      case Way::epoll_oneshot: {
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLONESHOT;
        ev.data.fd = fd_;
        if (::epoll_ctl(epoll_, armed_ ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd_, &ev) != 0) die("epoll_ctl", errno);
        armed_ = true;
        epoll_wait_one();
        return;
      }
      case Way::epoll_et: epoll_wait_one(); return;
      case Way::uring_poll: {
        io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
        io_uring_prep_poll_add(sqe, fd_, POLLIN);
        if (complete() < 0) die("uring poll", EIO);
        return;
      }
      case Way::uring_read: return;
    }
  }
  void epoll_wait_one() {
    epoll_event ev;
    while (::epoll_wait(epoll_, &ev, 1, -1) < 0) {
      if (errno != EINTR) die("epoll_wait", errno);
    }
  }
  // Submits the prepared entry and waits for its completion in one io_uring_enter; its result.
  int complete() {
    int r;
    while ((r = io_uring_submit_and_wait(&ring_, 1)) < 0) {
      if (r != -EINTR) die("io_uring_submit_and_wait", -r);
    }
    io_uring_cqe* cqe = nullptr;
    if ((r = io_uring_peek_cqe(&ring_, &cqe)) < 0) die("io_uring_peek_cqe", -r);
    const int res = cqe->res;
    io_uring_cqe_seen(&ring_, cqe);
    return res;
  }

  Way way_;
  int fd_;
  int epoll_ = -1;
  bool armed_ = false;
  io_uring ring_{};
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ns per round trip: two threads bounce a byte over two channels.
double pingpong(Way way, long rounds, bool socketpair) {
  Channel there(socketpair), back(socketpair);
  std::atomic<bool> ready{false};
  std::thread echo([&] {
    Waiter w(way, there.r);
    ready = true;
    for (long i = 0; i < rounds; ++i) {
      w.read_one(true);
      put(back.w);
    }
  });
  Waiter w(way, back.r);
  while (!ready) std::this_thread::yield();
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < rounds; ++i) {
    put(there.w);
    w.read_one(true);
  }
  const double s = seconds_since(t0);
  echo.join();
  return s * 1e9 / static_cast<double>(rounds);
}

// ns per write + wait + read of a byte already there, forced through the mechanism.
double ready_loop(Way way, long rounds, bool socketpair) {
  Channel c(socketpair);
  Waiter w(way, c.r);
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < rounds; ++i) {
    put(c.w);
    w.read_one(false);
  }
  return seconds_since(t0) * 1e9 / static_cast<double>(rounds);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 7;
  long pingpong_rounds = 20000, ready_rounds = 200000;
  bool socketpair = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return std::atol(argv[++i]);
    };
    if (a == "--quick") {
      reps = 3;
      pingpong_rounds = 2000;
      ready_rounds = 20000;
    } else if (a == "--reps") {
      reps = static_cast<int>(next());
    } else if (a == "--pingpong") {
      pingpong_rounds = next();
    } else if (a == "--ready") {
      ready_rounds = next();
    } else if (a == "--socketpair") {
      socketpair = true;
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--reps N] [--pingpong N] [--ready N] [--socketpair]\n", argv[0]);
      return a == "--help" ? 0 : 2;
    }
  }
  if (reps < 1 || pingpong_rounds < 1 || ready_rounds < 1) {
    std::fprintf(stderr, "counts must be positive\n");
    return 2;
  }

  std::vector<Way> ways(kWays.begin(), kWays.end());
  {
    io_uring probe;
    const int r = io_uring_queue_init(8, &probe, 0);
    if (r < 0) {
      std::printf("io_uring unavailable: io_uring_queue_init: %s (errno %d); measuring epoll only\n",
                  std::strerror(-r), -r);
      std::erase_if(ways, uses_uring);
    } else {
      io_uring_queue_exit(&probe);
    }
  }
  const char* channel = socketpair ? "socketpair" : "pipe";
  struct Scenario {
    const char* name;
    long rounds;
    double (*run)(Way, long, bool);
    const char* unit;
  };
  const Scenario scenarios[] = {{"ping-pong", pingpong_rounds, pingpong, "ns per round trip (2 waits, 2 wake-ups)"},
                                {"ready", ready_rounds, ready_loop, "ns per write + wait + read, no sleep"}};
  std::vector<std::vector<std::vector<double>>> samples(std::size(scenarios),
                                                        std::vector<std::vector<double>>(ways.size()));
  try {
    for (int rep = 0; rep < reps; ++rep) {
      for (std::size_t s = 0; s < std::size(scenarios); ++s) {
        for (std::size_t w = 0; w < ways.size(); ++w) {
          samples[s][w].push_back(scenarios[s].run(ways[w], scenarios[s].rounds, socketpair));
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "io_uring_vs_epoll: %s\n", e.what());
    return 1;
  }
  for (std::size_t s = 0; s < std::size(scenarios); ++s) {
    for (std::size_t w = 0; w < ways.size(); ++w) {
      const auto& v = samples[s][w];
      std::printf("{\"benchmark\":\"io_uring_vs_epoll\",\"scenario\":\"%s\",\"channel\":\"%s\",\"way\":\"%s\","
                  "\"ns\":%.1f,\"min_ns\":%.1f,\"max_ns\":%.1f,\"reps\":%d,\"rounds\":%ld}\n",
                  scenarios[s].name, channel, name(ways[w]), median(v), *std::min_element(v.begin(), v.end()),
                  *std::max_element(v.begin(), v.end()), reps, scenarios[s].rounds);
    }
  }
  std::printf("\n%-10s %-14s %12s %12s %12s   %s\n", "scenario", "way", "median ns", "min ns", "max ns",
              "over epoll-oneshot (presto::io's)");
  for (std::size_t s = 0; s < std::size(scenarios); ++s) {
    const double base = median(samples[s][0]);
    for (std::size_t w = 0; w < ways.size(); ++w) {
      const auto& v = samples[s][w];
      std::printf("%-10s %-14s %12.0f %12.0f %12.0f   %.2fx\n", scenarios[s].name, name(ways[w]), median(v),
                  *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()), median(v) / base);
    }
    std::printf("%-10s (%s; %s; medians of %d)\n", "", channel, scenarios[s].unit, reps);
  }
  return 0;
}
