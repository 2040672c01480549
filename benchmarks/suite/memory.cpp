// Memory: N threads blocked at once (each waits on a semaphore), and the resident memory
// (VmRSS) the process gained per blocked thread, the control block, the stack pages the
// thread touched and the runtime's bookkeeping included. PRESTO runs with its default
// 64 KiB stacks and again with the smallest (16 KiB); Boost.Fiber with 64 KiB stacks.
// The forker keeps each thread's handle and joins them all at the end, as a user's program
// does (and as Boost.Fiber's does with its fiber objects): under lazy forks such a thread
// starts as a record run by a runner, and blocking makes it a thread of its own on the
// runner's stack, so it holds a record and the runner's control block besides its own. A
// detached thread is made a thread at its fork and holds neither: `blocked_memory_detached`.
// One repetition: the figure is a count, not a timing. Each measurement runs in a child
// process of its own, so that no heap left by another measurement hides what it costs; the
// suite runs this group first, while the process has a single thread and fork() is safe.

#include <sys/wait.h>
#include <unistd.h>

#include <boost/fiber/all.hpp>
#include <cstdio>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <presto/presto.hpp>

#include "suite.hpp"

namespace presto::bench {
namespace {

std::uint64_t resident_bytes() {
  std::ifstream status{"/proc/self/status"};
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      std::uint64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
  }
  return 0;
}

Result memory_result(std::string name, std::string system, std::uint64_t threads, std::uint64_t before,
                     std::uint64_t after) {
  double per = (static_cast<double>(after) - static_cast<double>(before)) / static_cast<double>(threads);
  return Result{std::move(name), std::move(system), 1, threads, per, per, per, 1, threads, "bytes"};
}

// Runs `measurement` in a child process and adds the Result it sends back as a JSON line.
void isolated(Suite& s, const std::function<Result()>& measurement) {
  std::fflush(stdout);
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("memory: pipe failed");
  pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("memory: fork failed");
  if (child == 0) {
    close(fds[0]);
    int status = 1;
    try {
      std::FILE* out = fdopen(fds[1], "w");
      print_json(measurement(), out);
      status = std::fclose(out) == 0 ? 0 : 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "presto_bench: memory: %s\n", e.what());
    }
    _exit(status);
  }
  close(fds[1]);
  std::string text;
  char buffer[512];
  for (ssize_t got; (got = read(fds[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(got));
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  auto result = parse_json(text);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !result) {
    throw std::runtime_error("memory: the measuring child process failed");
  }
  s.add(*result);
}

enum class Handles { joined, detached };

Result presto_blocked(const char* name, std::size_t stack_size, std::uint64_t n, Handles handles) {
  presto::Runtime rt{{.processors = 1, .stack_size = stack_size}};
  std::uint64_t before = 0, after = 0;
  rt.run([&] {
    presto::Semaphore gate{0, "gate"};
    std::uint64_t started = 0;  // one processor: no race
    std::vector<presto::JoinHandle<void>> all;
    if (handles == Handles::joined) all.reserve(n);  // the handles' storage is the program's, not a thread's
    before = resident_bytes();
    for (std::uint64_t i = 0; i < n; ++i) {
      auto h = presto::fork([&] {
        ++started;
        gate.acquire();
      });
      if (handles == Handles::joined) {
        all.push_back(std::move(h));
      } else {
        h.detach();
      }
    }
    while (started < n) presto::this_thread::yield();
    after = resident_bytes();
    gate.release(static_cast<std::ptrdiff_t>(n));
    for (auto& h : all) h.join();
  });
  return memory_result(name, "presto", n, before, after);
}

Result fiber_blocked(std::uint64_t n) {
  namespace fibers = boost::fibers;
  std::uint64_t before = 0, after = 0;
  with_fibers(1, [&] {
    fibers::mutex m;
    fibers::condition_variable cv;
    bool open = false;
    std::uint64_t started = 0;
    std::vector<fibers::fiber> all;
    all.reserve(n);
    before = resident_bytes();
    for (std::uint64_t i = 0; i < n; ++i) {
      all.emplace_back(std::allocator_arg, fibers::fixedsize_stack(64 * 1024), [&] {
        ++started;
        std::unique_lock lock{m};
        cv.wait(lock, [&] { return open; });
      });
    }
    while (started < n) boost::this_fiber::yield();
    after = resident_bytes();
    {
      std::unique_lock lock{m};
      open = true;
    }
    cv.notify_all();
    for (auto& f : all) f.join();
  });
  return memory_result("blocked_memory", "boost.fiber", n, before, after);
}

}  // namespace

void run_memory(Suite& s) {
  const Options& o = s.options();
  const std::uint64_t n = o.scaled(1'000'000, 20'000);
  const std::size_t default_stacks = presto::RuntimeConfig{}.stack_size;
  isolated(s, [=] { return presto_blocked("blocked_memory", default_stacks, n, Handles::joined); });
  isolated(s, [=] { return presto_blocked("blocked_memory_detached", default_stacks, n, Handles::detached); });
  isolated(s, [n] { return presto_blocked("blocked_memory_16k_stacks", 16 * 1024, n, Handles::joined); });
  // A million 64 KiB Boost.Fiber stacks would take ~10 GB; 100,000 give the same figure per fiber.
  const std::uint64_t fibers = o.scaled(100'000, 20'000);
  isolated(s, [fibers] { return fiber_blocked(fibers); });
}

}  // namespace presto::bench
