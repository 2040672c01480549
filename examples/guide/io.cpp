// The guide's I/O chapter (docs/guide/io.md): an echo over a socket pair, one presto thread
// per end, a deadline that passes, and a descriptor closed while a thread waits on it.
#include <cstdio>
#include <string>
#include <system_error>

#include <sys/socket.h>

#include <presto/io/io.hpp>
#include <presto/presto.hpp>

using namespace std::chrono_literals;

int main() {
  presto::Runtime rt{{.processors = 2}};
  return rt.run([] {
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) return 1;

    // The server: echo until the client closes its end (read returns 0).
    auto server = presto::fork([fd = ends[0]] {
      char buffer[256];
      while (std::size_t n = presto::io::read(fd, buffer, sizeof buffer)) presto::io::write_all(fd, buffer, n);
      presto::io::close(fd);
    });

    const std::string hello = "hello, PRESTO";
    presto::io::write_all(ends[1], hello.data(), hello.size());
    std::string echo(hello.size(), '\0');
    std::size_t got = 0;
    while (got < echo.size()) got += presto::io::read(ends[1], echo.data() + got, echo.size() - got, 1s);
    std::printf("echoed: %s\n", echo.c_str());

    // Nothing more comes: the deadline passes.
    try {
      char c;
      presto::io::read(ends[1], &c, 1, 10ms);
    } catch (const presto::io::TimedOut& e) {
      std::printf("%s\n", e.what());
    }

    presto::io::close(ends[1]);  // the server reads end of file and ends
    server.join();
    return echo == hello ? 0 : 1;
  });
}
