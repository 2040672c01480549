// The Boost.Fiber + Boost.Asio peer of benchmarks/echo: a TCP echo server with one fiber per
// connection, the program a Boost user would write. Boost ships no Fiber/Asio integration as a
// library (only as an example), so this file has the usual small one: each OS thread runs a
// fiber scheduler and an io_context; a connection fiber starts an asynchronous operation whose
// completion handler schedules the fiber again, and suspends; a poller fiber runs the
// io_context's ready handlers, and blocks in it (epoll) when no other fiber is ready.
// --processors N runs N such threads, each with its own acceptor on the same port
// (SO_REUSEPORT): the kernel spreads connections over them, the usual way to scale Asio.
// Prints "fiber-asio-echo: listening on ADDRESS:PORT".

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <utility>  // before Asio 1.74, whose awaitable.hpp uses std::exchange without it
#include <string>
#include <thread>
#include <vector>

#include <sys/socket.h>

#include <boost/asio.hpp>
#include <boost/fiber/all.hpp>

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// round_robin that lets the poller fiber ask whether other fibers are ready.
class Algorithm : public boost::fibers::algo::round_robin {
 public:
  explicit Algorithm(Algorithm** self) { *self = this; }
};

// Starts `start(handler)` and suspends the calling fiber until the handler ran; returns what
// it was given. The handler runs in the poller fiber of the same thread, so the fiber has
// suspended by then.
template <class Start>
std::pair<boost::system::error_code, std::size_t> await(Start&& start) {
  boost::fibers::context* self = boost::fibers::context::active();
  boost::system::error_code ec;
  std::size_t n = 0;
  start([&ec, &n, self](boost::system::error_code e, std::size_t k) {
    ec = e;
    n = k;
    boost::fibers::context::active()->schedule(self);
  });
  self->suspend();
  return {ec, n};
}

void serve(tcp::socket socket) {
  socket.set_option(tcp::no_delay(true));
  char buffer[16 * 1024];
  for (;;) {
    auto [ec, n] = await([&](auto handler) { socket.async_read_some(asio::buffer(buffer), handler); });
    if (ec || n == 0) return;
    auto [wec, written] = await([&](auto handler) { asio::async_write(socket, asio::buffer(buffer, n), handler); });
    if (wec) return;
  }
}

// One OS thread: its acceptor on `port` (0: any free one), reported through `bound`
// (the port, or an exception), then its fibers forever.
void run_thread(unsigned short port, std::promise<unsigned short>& bound) {
  Algorithm* algorithm = nullptr;
  boost::fibers::use_scheduling_algorithm<Algorithm>(&algorithm);
  asio::io_context io{1};
  // Without outstanding work, poll() would stop the io_context and run_one() return at once.
  auto work = asio::make_work_guard(io);
  tcp::acceptor acceptor{io};
  try {
    acceptor.open(tcp::v4());
    const int one = 1;
    ::setsockopt(acceptor.native_handle(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    acceptor.set_option(tcp::acceptor::reuse_address(true));
    acceptor.bind(tcp::endpoint(asio::ip::make_address_v4("127.0.0.1"), port));
    acceptor.listen(4096);
    bound.set_value(acceptor.local_endpoint().port());
  } catch (...) {
    bound.set_exception(std::current_exception());
    return;
  }
  boost::fibers::fiber accepting([&] {
    for (;;) {
      tcp::socket socket{io};
      auto [ec, unused] = await([&](auto handler) {
        acceptor.async_accept(socket, [handler](boost::system::error_code e) mutable { handler(e, 0); });
      });
      if (ec) continue;
      boost::fibers::fiber(serve, std::move(socket)).detach();
    }
  });
  // The poller: this thread's fibers run while some are ready; otherwise wait in epoll.
  for (;;) {
    io.poll();
    if (algorithm->has_ready_fibers()) {
      boost::this_fiber::yield();
    } else {
      io.run_one();
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  unsigned processors = 1;
  unsigned port = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--processors" && i + 1 < argc) {
      processors = static_cast<unsigned>(std::atoi(argv[++i]));
    } else if (a == "--port" && i + 1 < argc) {
      port = static_cast<unsigned>(std::atoi(argv[++i]));
    } else {
      std::fprintf(a == "--help" ? stdout : stderr, "usage: %s [--port P] [--processors N]\n", argv[0]);
      return a == "--help" ? 0 : 2;
    }
  }
  if (processors == 0) processors = std::thread::hardware_concurrency();
  std::vector<std::thread> threads;
  try {
    // The first thread binds (port 0: any free one); the others share its port.
    for (unsigned i = 0; i < processors; ++i) {
      std::promise<unsigned short> bound;
      std::future<unsigned short> result = bound.get_future();
      threads.emplace_back([p = static_cast<unsigned short>(port), &bound] { run_thread(p, bound); });
      port = result.get();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fiber-asio-echo: cannot listen: %s\n", e.what());
    std::_Exit(1);
  }
  std::printf("fiber-asio-echo: listening on 127.0.0.1:%u (%u processors)\n", port, processors);
  std::fflush(stdout);
  for (auto& t : threads) t.join();
}
