// presto-echo-load: the load client of the echo benchmark (benchmarks/echo): C connections to
// an echo server, each a presto thread sending B bytes and reading the echo back in a closed
// loop for S seconds, every echo checked. Prints requests per second and latency percentiles;
// with --json, one JSON line (name "echo", the given --system, param = connections).

#include <csignal>
#include <cstdio>
#include <string>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <presto/runtime.hpp>

#include "command_line.hpp"
#include "echo_load.hpp"

namespace {

struct Options {
  std::string host = "127.0.0.1";
  unsigned port = 7007;
  std::size_t processors = 0;
  std::size_t connections = 100;
  std::size_t message = 64;
  double seconds = 2.0;
  std::string system = "server";
  bool json = false;
};

constexpr const char* usage =
    "usage: %s [--host ADDRESS] [--port P] [--connections C] [--message B] [--seconds S]\n"
    "          [--processors N] [--system NAME] [--json]\n"
    "Opens C connections (default 100) to the echo server at ADDRESS:P (default 127.0.0.1:7007),\n"
    "then for S seconds (default 2) each sends B bytes (default 64) and waits for the echo, again\n"
    "and again, checking each. Prints requests per second and the latency p50 and p99; --json\n"
    "prints one JSON line instead, naming the server --system NAME. Exits 1 if an echo differs\n"
    "or a connection fails.\n";

bool parse(int argc, char** argv, Options& o) {
  presto::apps::CommandLine cl{usage};
  cl.option("--host", o.host).option("--port", o.port).option("--connections", o.connections);
  cl.option("--message", o.message).option("--seconds", o.seconds).processors(o.processors);
  cl.option("--system", o.system).flag("--json", o.json);
  if (!cl.parse(argc, argv)) return false;
  if (o.port == 0 || o.port > 65535) return cl.error("--port must be between 1 and 65535");
  if (o.connections == 0) return cl.error("--connections must be at least 1");
  if (o.message == 0) return cl.error("--message must be at least 1 byte");
  if (!(o.seconds > 0)) return cl.error("--seconds must be positive");
  in_addr a{};
  if (::inet_pton(AF_INET, o.host.c_str(), &a) != 1) return cl.error("--host: '" + o.host + "' is not an IPv4 address");
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  std::signal(SIGPIPE, SIG_IGN);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(o.port));
  ::inet_pton(AF_INET, o.host.c_str(), &address.sin_addr);
  try {
    presto::Runtime rt{{.processors = o.processors, .name = "presto-echo-load"}};
    const auto r = rt.run([&] {
      return presto::apps::echo::run_load(address, {.connections = o.connections, .message = o.message,
                                                    .seconds = o.seconds});
    });
    if (o.json) {
      std::printf("{\"name\": \"echo\", \"system\": \"%s\", \"processors\": %zu, \"param\": %zu, \"requests\": %llu, "
                  "\"seconds\": %.4f, \"requests_per_s\": %.1f, \"p50_us\": %.2f, \"p99_us\": %.2f, "
                  "\"ns_per_op\": %.1f}\n",
                  o.system.c_str(), rt.processors(), o.connections, static_cast<unsigned long long>(r.requests),
                  r.seconds, r.requests_per_second(), r.percentile_us(0.5), r.percentile_us(0.99),
                  r.requests != 0 ? r.seconds * 1e9 / static_cast<double>(r.requests) : 0.0);
    } else {
      std::printf("%s: %zu connections, %llu requests in %.3f s: %.0f requests/s, latency p50 %.1f us, p99 %.1f us\n",
                  o.system.c_str(), o.connections, static_cast<unsigned long long>(r.requests), r.seconds,
                  r.requests_per_second(), r.percentile_us(0.5), r.percentile_us(0.99));
    }
    if (r.mismatches != 0) {
      std::fprintf(stderr, "presto-echo-load: %llu echoes differed from what was sent\n",
                   static_cast<unsigned long long>(r.mismatches));
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "presto-echo-load: %s:%u: %s\n", o.host.c_str(), o.port, e.what());
    return 1;
  }
}
