#pragma once
// The echo load: C connections, each a presto thread that sends a message of B bytes and reads
// its echo back, again and again (a closed loop), checking every echo. Shared by presto-echo's
// --self-test and presto-echo-load, the client of benchmarks/echo (the same client for every
// server). Header-only; presto and presto::io.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <presto/barrier.hpp>
#include <presto/io/io.hpp>
#include <presto/runtime.hpp>
#include <presto/semaphore.hpp>
#include <presto/this_thread.hpp>

namespace presto::apps::echo {

struct LoadOptions {
  std::size_t connections = 100;
  std::size_t message = 64;       // bytes per request
  double seconds = 2.0;           // of measuring, after every connection is open
  std::size_t requests = 0;       // per connection, instead of `seconds` (0: use seconds)
  std::size_t connecting = 256;   // connections being opened at once
};

struct LoadResult {
  std::uint64_t requests = 0;
  double seconds = 0;
  std::uint64_t mismatches = 0;
  std::vector<std::uint32_t> latency_ns;  // one per request, sorted
  double requests_per_second() const { return seconds > 0 ? static_cast<double>(requests) / seconds : 0; }
  double percentile_us(double q) const {
    if (latency_ns.empty()) return 0;
    const auto i = static_cast<std::size_t>(q * static_cast<double>(latency_ns.size() - 1));
    return latency_ns[i] / 1e3;
  }
};

// Opens a TCP connection to `address`; throws std::system_error naming what failed.
inline int connect_to(const sockaddr_in& address) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // Reset, not TIME_WAIT, on close: runs of 10,000 connections would exhaust the local ports.
  const linger reset{.l_onoff = 1, .l_linger = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  try {
    presto::io::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address, std::chrono::seconds(30));
  } catch (...) {
    presto::io::close(fd);
    throw;
  }
  return fd;
}

// Runs the load from the calling presto thread against `address`; returns what it measured.
// Throws std::system_error if a connection cannot be opened or fails.
inline LoadResult run_load(const sockaddr_in& address, const LoadOptions& o) {
  const std::size_t c = o.connections;
  std::vector<std::vector<std::uint32_t>> samples(c);
  std::vector<std::uint64_t> mismatches(c, 0);
  std::vector<std::exception_ptr> errors(c);
  presto::Barrier opened{c + 1, "connections open"};
  presto::Semaphore connecting{static_cast<std::ptrdiff_t>(std::max<std::size_t>(1, o.connecting)), "connecting"};
  std::atomic<bool> stop{false};
  Clock::time_point start;
  std::vector<presto::JoinHandle<void>> threads;
  threads.reserve(c);
  for (std::size_t i = 0; i < c; ++i) {
    threads.push_back(presto::fork([&, i] {
      int fd = -1;
      try {
        connecting.acquire();
        try {
          fd = connect_to(address);
        } catch (...) {
          connecting.release();
          throw;
        }
        connecting.release();
      } catch (...) {
        errors[i] = std::current_exception();
      }
      opened.arrive_and_wait();
      if (fd < 0) return;
      std::string out(o.message, '\0'), in(o.message, '\0');
      try {
        for (std::uint64_t n = 0; o.requests != 0 ? n < o.requests : !stop.load(std::memory_order_relaxed); ++n) {
          for (std::size_t k = 0; k < out.size(); ++k) out[k] = static_cast<char>('a' + (i + n + k) % 26);
          const auto t0 = Clock::now();
          presto::io::send_all(fd, out.data(), out.size());
          std::size_t have = 0;
          while (have < in.size()) {
            const std::size_t got = presto::io::recv(fd, in.data() + have, in.size() - have);
            if (got == 0) throw std::runtime_error("the server closed connection " + std::to_string(i));
            have += got;
          }
          samples[i].push_back(static_cast<std::uint32_t>(
              std::min<std::int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count(),
                                     UINT32_MAX)));
          if (in != out) ++mismatches[i];
        }
      } catch (...) {
        errors[i] = std::current_exception();
      }
      presto::io::close(fd);
    }));
  }
  opened.arrive_and_wait();
  start = Clock::now();
  if (o.requests == 0) {
    presto::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
    stop = true;
  }
  for (auto& t : threads) t.join();
  LoadResult r;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (std::size_t i = 0; i < c; ++i) {
    if (errors[i]) std::rethrow_exception(errors[i]);
    r.requests += samples[i].size();
    r.mismatches += mismatches[i];
    r.latency_ns.insert(r.latency_ns.end(), samples[i].begin(), samples[i].end());
  }
  std::sort(r.latency_ns.begin(), r.latency_ns.end());
  return r;
}

}  // namespace presto::apps::echo
