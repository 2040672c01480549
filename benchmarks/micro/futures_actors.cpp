// futures_actors: ping-pong costs of the futures and actors extensions, each measured beside
// Boost.Fiber's promise/future and buffered_channel, and Go's goroutines and channels
// (benchmarks/peers/futures_actors.go, run when the build found `go`), in the same run, on
// one processor (GOMAXPROCS=1 for Go):
//   future_get        start a computation that returns a value, wait for the value
//   promise_pingpong  two threads answer each other through one-shot promises (one op = a round trip)
//   actor_call        synchronous request + reply to a server (PRESTO: with and without hand-off)
//   actor_send        asynchronous request, no reply (throughput; a call after every 1000 sends
//                     waits for them, so no mailbox holds more than 1000)
// PRESTO's actor_call is also measured on 2 processors, where a call without hand-off crosses
// processors. Prints one JSON line per measurement, then ratios (PRESTO over baseline).
// Usage: futures_actors [--quick] [--go PATH]

#include <boost/fiber/all.hpp>
#include <cstdio>
#include <cstring>
#include <deque>
#include <optional>
#include <string>

#include <presto/actors/task.hpp>
#include <presto/futures/future.hpp>
#include <presto/futures/promise.hpp>
#include <presto/runtime.hpp>

#include "../support/harness.hpp"

using presto::bench::measure;
using presto::bench::Result;

namespace {

// actor_send: a call after every kBatch sends waits for them, so that no mailbox holds more
// than a batch (PRESTO's is unbounded; Boost.Fiber's and Go's channels hold 1024).
constexpr std::uint64_t kBatch = 1000;

Result presto_future_get(std::uint64_t n, int reps) {
  presto::Runtime rt{{.processors = 1}};
  return measure("future_get", "presto", 1, n, reps, [&] {
    rt.run([n] {
      long sum = 0;
      for (std::uint64_t i = 0; i < n; ++i) {
        presto::futures::Future<long> f{[i] { return static_cast<long>(i); }};
        sum += f.get();
      }
      asm volatile("" ::"r"(sum));
    });
  });
}

Result fiber_future_get(std::uint64_t n, int reps) {
  return measure("future_get", "boost.fiber", 1, n, reps, [n] {
    long sum = 0;
    for (std::uint64_t i = 0; i < n; ++i) sum += boost::fibers::async([i] { return static_cast<long>(i); }).get();
    asm volatile("" ::"r"(sum));
  });
}

Result presto_promise_pingpong(std::uint64_t n, int reps) {
  presto::Runtime rt{{.processors = 1}};
  return measure("promise_pingpong", "presto", 1, n, reps, [&] {
    rt.run([n] {
      std::deque<presto::futures::Promise<std::uint64_t>> pings(n), pongs(n);
      auto other = presto::fork([&] {
        for (std::uint64_t i = 0; i < n; ++i) pongs[i].set_value(pings[i].get());
      });
      for (std::uint64_t i = 0; i < n; ++i) {
        pings[i].set_value(i);
        pongs[i].get();
      }
      other.join();
    });
  });
}

Result fiber_promise_pingpong(std::uint64_t n, int reps) {
  return measure("promise_pingpong", "boost.fiber", 1, n, reps, [n] {
    std::deque<boost::fibers::promise<std::uint64_t>> pings(n), pongs(n);
    std::deque<boost::fibers::future<std::uint64_t>> ping_f, pong_f;
    for (std::uint64_t i = 0; i < n; ++i) {
      ping_f.push_back(pings[i].get_future());
      pong_f.push_back(pongs[i].get_future());
    }
    boost::fibers::fiber other{[&] {
      for (std::uint64_t i = 0; i < n; ++i) pongs[i].set_value(ping_f[i].get());
    }};
    for (std::uint64_t i = 0; i < n; ++i) {
      pings[i].set_value(i);
      pong_f[i].get();
    }
    other.join();
  });
}

class Counter final : public presto::actors::Task {
 public:
  explicit Counter(bool handoff) : Task("counter", {.handoff = handoff}) {}
  ~Counter() override { stop(); }
  long add(long v) { return total_ += v; }
  void bump(long v) { total_ += v; }

 private:
  long total_ = 0;
};

Result presto_actor_call(std::uint64_t n, int reps, bool handoff, std::size_t processors) {
  presto::Runtime rt{{.processors = processors}};
  return measure(handoff ? "actor_call_handoff" : "actor_call_message", "presto", processors, n, reps, [&] {
    rt.run([n, handoff] {
      Counter c{handoff};
      for (std::uint64_t i = 0; i < n; ++i) c.call(&Counter::add, 1L);
    });
  });
}

Result presto_actor_send(std::uint64_t n, int reps) {
  presto::Runtime rt{{.processors = 1}};
  return measure("actor_send", "presto", 1, n, reps, [&] {
    rt.run([n] {
      Counter c{true};
      for (std::uint64_t i = 0; i < n; ++i) {
        c.send(&Counter::bump, 1L);
        if (i % kBatch == kBatch - 1) c.call(&Counter::add, 0L);  // waits for the batch
      }
      c.call(&Counter::add, 0L);
    });
  });
}

// Boost.Fiber's actor: a fiber serving a buffered_channel of requests; a call waits on a promise.
struct FiberRequest {
  long value = 0;
  boost::fibers::promise<long>* reply = nullptr;
};

Result fiber_actor(const char* name, std::uint64_t n, int reps, bool with_reply) {
  return measure(name, "boost.fiber", 1, n, reps, [n, with_reply] {
    boost::fibers::buffered_channel<FiberRequest> requests{1024};
    boost::fibers::fiber server{[&] {
      long total = 0;
      FiberRequest r;
      while (requests.pop(r) == boost::fibers::channel_op_status::success) {
        total += r.value;
        if (r.reply != nullptr) r.reply->set_value(total);
      }
    }};
    auto call = [&](long v) {
      boost::fibers::promise<long> reply;
      auto f = reply.get_future();
      requests.push(FiberRequest{v, &reply});
      f.get();
    };
    for (std::uint64_t i = 0; i < n; ++i) {
      if (with_reply) {
        call(1);
      } else {
        requests.push(FiberRequest{1, nullptr});
        if (i % kBatch == kBatch - 1) call(0);  // waits for the batch
      }
    }
    boost::fibers::promise<long> last;
    auto f = last.get_future();
    requests.push(FiberRequest{0, &last});
    f.get();
    requests.close();
    server.join();
  });
}

// Runs the Go peer and reads back its JSON lines.
std::optional<Result> go_result(const std::string& output, const std::string& name) {
  const std::string key = "{\"name\":\"" + name + "\"";
  const std::size_t at = output.find(key);
  if (at == std::string::npos) return std::nullopt;
  const std::size_t ns = output.find("\"ns_per_op\":", at);
  Result r{name, "go", 1, 0, std::stod(output.substr(ns + 12)), 0, 0, 0};
  return r;
}

std::string run_go(const std::string& path, std::uint64_t n, int reps) {
  const std::string command = path + " -n " + std::to_string(n) + " -reps " + std::to_string(reps) + " -procs 1";
  std::string output;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p) != nullptr) {
      output += buf;
      std::fputs(buf, stdout);
    }
    pclose(p);
  }
  return output;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string go_path =
#ifdef PRESTO_GO_PEER
      PRESTO_GO_PEER;
#else
      "";
#endif
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--go") == 0 && i + 1 < argc) {
      go_path = argv[++i];
    } else {
      std::printf("usage: %s [--quick] [--go PATH-TO-GO-PEER]\n", argv[0]);
      return std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  const std::uint64_t scale = quick ? 10 : 1;
  const int reps = quick ? 3 : 7;
  const std::uint64_t n = 200'000 / scale;

  Result p_future = presto_future_get(n, reps);
  Result f_future = fiber_future_get(n, reps);
  Result p_ping = presto_promise_pingpong(n, reps);
  Result f_ping = fiber_promise_pingpong(n, reps);
  Result p_call = presto_actor_call(n, reps, true, 1);
  Result p_call_msg = presto_actor_call(n, reps, false, 1);
  Result f_call = fiber_actor("actor_call", n, reps, true);
  Result p_send = presto_actor_send(n * 5, reps);
  Result f_send = fiber_actor("actor_send", n * 5, reps, false);
  Result p_call2 = presto_actor_call(n, reps, true, 2);
  Result p_call2_msg = presto_actor_call(n, reps, false, 2);

  std::vector<presto::bench::Ratio> ratios{
      {"future get / Boost.Fiber async+get", p_future, f_future, 1.0, true},
      {"promise ping-pong / Boost.Fiber promise", p_ping, f_ping, 1.0, true},
      {"actor call (hand-off) / Boost.Fiber chan+promise", p_call, f_call, 1.0, true},
      {"actor call (message) / Boost.Fiber chan+promise", p_call_msg, f_call, 1.0, true},
      {"actor send / Boost.Fiber buffered_channel push", p_send, f_send, 1.0, true},
      {"actor call: hand-off / message, 1 processor", p_call, p_call_msg, 0.5, true},
      {"actor call: hand-off / message, 2 processors", p_call2, p_call2_msg, 0.5, true},
  };
  std::optional<Result> g_future, g_ping, g_call, g_send;
  if (!go_path.empty()) {
    const std::string out = run_go(go_path, n, reps);
    g_future = go_result(out, "future_get");
    g_ping = go_result(out, "promise_pingpong");
    g_call = go_result(out, "actor_call");
    g_send = go_result(out, "actor_send");
  }
  if (g_future && g_ping && g_call && g_send) {
    ratios.push_back({"future get / Go goroutine+chan", p_future, *g_future, 1.0, true});
    ratios.push_back({"promise ping-pong / Go one-shot chans", p_ping, *g_ping, 1.0, true});
    ratios.push_back({"actor call (hand-off) / Go chan round trip", p_call, *g_call, 1.0, true});
    ratios.push_back({"actor call (message) / Go chan round trip", p_call_msg, *g_call, 1.0, true});
    ratios.push_back({"actor send / Go buffered chan send", p_send, *g_send, 1.0, true});
  } else {
    std::printf("Go peer %s: the Go baselines are skipped\n",
                go_path.empty() ? "not built (no `go` found when configuring)" : ("at " + go_path + " failed").c_str());
  }
  presto::bench::print_ratios(ratios);
  return 0;
}
