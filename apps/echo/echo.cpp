// presto-echo: a TCP echo server with one presto thread per connection. Each thread reads
// what its client sends and writes it back with presto::io, which blocks only that thread:
// a few processors serve thousands of connections. `--self-test K` also runs K clients of
// the echo load (apps/echo/echo_load.hpp) against it in the same runtime, checks every echo
// and exits; benchmarks/echo runs the server against presto-echo-load, beside a Go server and
// a Boost.Fiber + Boost.Asio one.

#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <presto/io/io.hpp>
#include <presto/runtime.hpp>

#include "command_line.hpp"
#include "echo_load.hpp"

namespace {

struct Options {
  std::string bind = "127.0.0.1";
  unsigned port = 7007;
  std::size_t processors = 0;
  std::size_t connections = 0;  // stop after this many (0: serve forever)
  std::size_t self_test = 0;    // clients of a self-test (0: none)
};

constexpr const char* usage =
    "usage: %s [--bind ADDRESS] [--port P] [--processors N] [--connections C] [--self-test K]\n"
    "Serves TCP echo on ADDRESS:P (default 127.0.0.1:7007; P 0: any free port) with one presto\n"
    "thread per connection on N processors (default: all), until killed or, with --connections,\n"
    "until C connections have been served. Prints 'presto-echo: listening on ADDRESS:PORT' first.\n"
    "--self-test K: also runs K clients in the same program (100 round trips of 64 bytes each),\n"
    "checks every echo, prints the requests per second and exits (0: every echo matched).\n";

bool parse(int argc, char** argv, Options& o) {
  presto::apps::CommandLine cl{usage};
  cl.option("--bind", o.bind).option("--port", o.port).processors(o.processors);
  cl.option("--connections", o.connections).option("--self-test", o.self_test);
  if (!cl.parse(argc, argv)) return false;
  if (o.port > 65535) return cl.error("--port must be at most 65535");
  in_addr a{};
  if (::inet_pton(AF_INET, o.bind.c_str(), &a) != 1) return cl.error("--bind: '" + o.bind + "' is not an IPv4 address");
  return true;
}

// The listening socket, or a std::system_error saying what failed.
int listen_on(const Options& o, sockaddr_in& address) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  address = sockaddr_in{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(o.port));
  ::inet_pton(AF_INET, o.bind.c_str(), &address.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 4096) != 0) {
    const int e = errno;
    ::close(fd);
    throw std::system_error(e, std::generic_category(), "cannot listen on " + o.bind + ":" + std::to_string(o.port));
  }
  socklen_t len = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &len);
  return fd;
}

// One connection: echo until the client closes it (or it fails: a reset is the client's
// business, not the server's).
void serve(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  char buffer[16 * 1024];
  try {
    while (std::size_t n = presto::io::recv(fd, buffer, sizeof buffer)) presto::io::send_all(fd, buffer, n);
  } catch (const std::system_error&) {
  }
  presto::io::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  std::signal(SIGPIPE, SIG_IGN);
  try {
    sockaddr_in address{};
    const int listener = listen_on(o, address);
    char host[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &address.sin_addr, host, sizeof host);
    presto::Runtime rt{{.processors = o.processors, .name = "presto-echo"}};
    std::printf("presto-echo: listening on %s:%u (%zu processors)\n", host, ntohs(address.sin_port), rt.processors());
    std::fflush(stdout);
    const std::size_t limit = o.self_test != 0 ? o.self_test : o.connections;
    int status = rt.run([&] {
      auto server = presto::fork(presto::ThreadAttributes{.name = "acceptor"}, [&] {
        for (std::size_t served = 0; limit == 0 || served < limit; ++served) {
          const int fd = presto::io::accept(listener);
          presto::fork(presto::ThreadAttributes{.name = "connection"}, serve, fd).detach();
        }
        presto::io::close(listener);
      });
      if (o.self_test == 0) {
        server.join();
        return 0;
      }
      presto::apps::echo::LoadOptions load{.connections = o.self_test, .message = 64, .requests = 100};
      const auto r = presto::apps::echo::run_load(address, load);
      server.join();
      std::printf("presto-echo: self-test: %zu clients, %llu round trips in %.3f s (%.0f requests/s, p50 %.1f us, "
                  "p99 %.1f us), %llu mismatched echoes\n",
                  o.self_test, static_cast<unsigned long long>(r.requests), r.seconds, r.requests_per_second(),
                  r.percentile_us(0.5), r.percentile_us(0.99), static_cast<unsigned long long>(r.mismatches));
      if (r.mismatches != 0 || r.requests != o.self_test * load.requests) {
        std::fprintf(stderr, "presto-echo: self-test FAILED\n");
        return 1;
      }
      return 0;
    });
    return status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "presto-echo: %s\n", e.what());
    return 1;
  }
}
