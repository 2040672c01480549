// channel_pingpong: channel rendezvous cost, beside its peers in the same run. Two threads
// ping-pong an int over a pair of channels; one operation = one message (a round trip is two).
//   presto::channels  Channel (rendezvous) and BufferedChannel(2), on 1 and 2 processors,
//                     and a poll over {pong, an idle channel} in place of the plain receive
//   Boost.Fiber       unbuffered_channel and buffered_channel(2), two fibers on one thread
//   Go                unbuffered and buffered (cap 2) channels, GOMAXPROCS 1 and 2, through
//                     `go run` (skipped, with a message, when `go` is not on the PATH)
// Prints one JSON line per measurement and the ratios presto / peer (lower is better for
// presto). Usage: channel_pingpong [--quick]

#include <boost/fiber/all.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <presto/channels/channels.hpp>
#include <presto/presto.hpp>

#include "../support/harness.hpp"

using presto::bench::measure;
using presto::bench::Result;

namespace {

namespace ch = presto::channels;

Result presto_pingpong(const std::string& name, std::size_t processors, std::size_t capacity, bool poll,
                       std::uint64_t messages, int reps) {
  presto::Runtime rt{{.processors = processors}};
  return measure(name, "presto", processors, messages, reps, [&] {
    rt.run([&] {
      auto make = [capacity](const char* n) -> std::unique_ptr<ch::Channel<int>> {
        if (capacity == 0) return std::make_unique<ch::Channel<int>>(n);
        return std::make_unique<ch::BufferedChannel<int>>(capacity, n);
      };
      auto ping = make("ping"), pong = make("pong");
      ch::Channel<int> idle{"idle"};
      auto other = presto::fork([&] {
        while (std::optional<int> v = ping->recv()) pong->send(*v + 1);
      });
      for (std::uint64_t i = 0; i < messages / 2; ++i) {
        ping->send(static_cast<int>(i));
        if (poll) {
          ch::poll(ch::on_recv(*pong, [](std::optional<int>) {}), ch::on_recv(idle, [](std::optional<int>) {}));
        } else {
          (void)pong->recv();
        }
      }
      ping->close();
      other.join();
    });
  });
}

template <class Channel>
Result fiber_pingpong(const std::string& name, std::uint64_t messages, int reps, std::size_t capacity) {
  return measure(name, "boost.fiber", 1, messages, reps, [&] {
    auto make = [capacity] {
      if constexpr (std::is_same_v<Channel, boost::fibers::unbuffered_channel<int>>) {
        (void)capacity;
        return std::make_unique<Channel>();
      } else {
        return std::make_unique<Channel>(capacity);
      }
    };
    auto ping = make(), pong = make();
    boost::fibers::fiber other([&] {
      int v = 0;
      while (ping->pop(v) == boost::fibers::channel_op_status::success) pong->push(v + 1);
    });
    for (std::uint64_t i = 0; i < messages / 2; ++i) {
      ping->push(static_cast<int>(i));
      int v = 0;
      pong->pop(v);
    }
    ping->close();
    other.join();
  });
}

// Runs the Go peer and reads back its JSON lines; empty if Go is missing or fails.
std::vector<Result> go_pingpong(std::uint64_t messages, int reps) {
  std::vector<Result> out;
  if (std::system("command -v go >/dev/null 2>&1") != 0) {
    std::printf("go not found on the PATH: the Go baselines are skipped\n");
    return out;
  }
  std::string command = "go run '" PRESTO_GO_PINGPONG "' -n " + std::to_string(messages) + " -reps " +
                        std::to_string(reps) + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char line[512];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    std::fputs(line, stdout);
    char name[64] = {}, system[64] = {};
    Result r;
    unsigned long long ops = 0;
    if (std::sscanf(line,
                    "{\"name\":\"%63[^\"]\",\"system\":\"%63[^\"]\",\"processors\":%zu,\"ns_per_op\":%lf,\"min_ns\":%lf,"
                    "\"max_ns\":%lf,\"operations\":%llu,\"repetitions\":%d}",
                    name, system, &r.processors, &r.median_ns, &r.min_ns, &r.max_ns, &ops, &r.repetitions) == 8) {
      r.name = name;
      r.system = system;
      r.operations = ops;
      out.push_back(r);
    }
  }
  if (pclose(pipe) != 0 || out.empty()) {
    std::printf("go run failed: the Go baselines are skipped\n");
    out.clear();
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const std::uint64_t n = quick ? 20'000 : 1'000'000;
  const int reps = quick ? 3 : 5;

  std::vector<Result> presto_results{
      presto_pingpong("rendezvous", 1, 0, false, n, reps),
      presto_pingpong("buffered2", 1, 2, false, n, reps),
      presto_pingpong("rendezvous_poll", 1, 0, true, n, reps),
      presto_pingpong("rendezvous", 2, 0, false, n, reps),
      presto_pingpong("buffered2", 2, 2, false, n, reps),
  };
  const Result fiber_unbuffered = fiber_pingpong<boost::fibers::unbuffered_channel<int>>("rendezvous", n, reps, 0);
  const Result fiber_buffered = fiber_pingpong<boost::fibers::buffered_channel<int>>("buffered2", n, reps, 2);
  const std::vector<Result> go = go_pingpong(n, reps);

  std::printf("\n%-40s %12s %12s %10s\n", "ratio (presto / peer; < 1: presto faster)", "presto ns", "peer ns", "ratio");
  auto ratio = [](const std::string& what, const Result& p, const Result& peer) {
    std::printf("%-40s %12.2f %12.2f %9.2fx\n", what.c_str(), p.median_ns, peer.median_ns, p.median_ns / peer.median_ns);
  };
  ratio("rendezvous, 1 proc / Boost.Fiber", presto_results[0], fiber_unbuffered);
  ratio("buffered(2), 1 proc / Boost.Fiber", presto_results[1], fiber_buffered);
  for (const Result& g : go) {
    for (const Result& p : presto_results) {
      if (p.name == g.name && p.processors == g.processors) {
        ratio(g.name + ", " + std::to_string(g.processors) + " proc / Go", p, g);
      }
    }
  }
  ratio("poll of 2 / plain receive, 1 proc", presto_results[2], presto_results[0]);
  return 0;
}
