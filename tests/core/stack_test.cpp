// Stacks: an overflow is reported with the thread's name, id and stack size, whichever way the
// stack is protected (guard page installed by madvise or mprotect, or a canary), stacks are
// accounted for while threads live and returned when they finish, and a thread that has never
// run starts on the stack of the thread that just ended, unless it asked for a size of its own.

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_support.hpp"

extern char** environ;

using namespace presto;

namespace {

struct Death {
  int signal = 0;
  int exit_code = -1;
  std::string stderr_text;
};

// Runs the stack_overflow helper with PRESTO_STACK_GUARD=mode and captures how it died.
Death run_overflow(const std::string& mode) {
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::string guard = "PRESTO_STACK_GUARD=" + mode;
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string(*e).rfind("PRESTO_STACK_GUARD=", 0) != 0) env.push_back(*e);
  }
  env.push_back(guard.data());
  env.push_back(nullptr);
  char program[] = PRESTO_STACK_OVERFLOW_PROGRAM;
  char* argv[] = {program, nullptr};
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, program, &actions, nullptr, argv, env.data()) == 0);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  Death death;
  std::array<char, 4096> buffer;
  ssize_t n = 0;
  while ((n = read(pipe_fds[0], buffer.data(), buffer.size())) > 0) death.stderr_text.append(buffer.data(), n);
  close(pipe_fds[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  if (WIFSIGNALED(status)) death.signal = WTERMSIG(status);
  if (WIFEXITED(status)) death.exit_code = WEXITSTATUS(status);
  return death;
}

}  // namespace

TEST_CASE("a stack overflow names the thread and its stack size", "[core][stack]") {
#if defined(__SANITIZE_ADDRESS__)
  WARN("not run under AddressSanitizer, which handles stack overflows itself");
  return;
#endif
  auto mode = GENERATE(std::string("madvise"), std::string("mprotect"), std::string("canary"));
  INFO("PRESTO_STACK_GUARD=" << mode);
  Death death = run_overflow(mode);
  INFO("stderr: " << death.stderr_text);
  CHECK(death.signal == SIGABRT);
  CHECK(death.stderr_text.find("thread 'deep-recursion' (id ") != std::string::npos);
  CHECK(death.stderr_text.find(") overflowed its 16 KiB stack") != std::string::npos);
}

TEST_CASE("stacks are in use while threads live and cached when they finish", "[core][stack]") {
  Runtime rt{{.processors = 2}};
  std::size_t in_use_while_blocked = 0;
  rt.run([&] {
    Semaphore release{0, "release"};
    Barrier started{11, "started"};
    std::vector<JoinHandle<void>> hs;
    for (int i = 0; i < 10; ++i) {
      hs.push_back(fork([&] {
        started.arrive_and_wait();
        release.acquire();
      }));
    }
    started.arrive_and_wait();
    in_use_while_blocked = this_thread::runtime()->stats().stacks_in_use;
    release.release(10);
    for (auto& h : hs) h.join();
  });
  CHECK(in_use_while_blocked == 11);  // ten workers and the main thread
  RuntimeStats s = rt.stats();
  CHECK(s.stacks_in_use == 0);
  CHECK(s.stacks_cached >= 10);
}

namespace {

// Where a thread's body runs: the address of one of its locals, and whether it saw itself as
// the current thread.
struct Where {
  std::uintptr_t local = 0;
  bool itself = false;
};

void note(Where& w, const JoinHandle<void>* self) {
  volatile char local = 0;
  w.local = reinterpret_cast<std::uintptr_t>(&local);
  w.itself = self == nullptr || &Thread::current() == &self->thread();
}

std::uintptr_t distance(std::uintptr_t a, std::uintptr_t b) { return a > b ? a - b : b - a; }

}  // namespace

TEST_CASE("a thread that has never run starts on the stack its predecessor ended on", "[core][stack]") {
  // Three threads that main lets run before it joins them, so that each runs on a stack (not
  // inline in the join): the second and third start where the first ended, as themselves.
  Runtime rt{{.processors = 1}};
  Where a, b, c;
  std::uint64_t dispatches = 0;
  rt.run([&] {
    std::vector<JoinHandle<void>> hs(3);
    hs[0] = fork([&] { note(a, &hs[0]); });
    hs[1] = fork([&] { note(b, &hs[1]); });
    hs[2] = fork([&] { note(c, &hs[2]); });
    const std::uint64_t before = this_thread::runtime()->stats().dispatches;
    this_thread::yield();
    dispatches = this_thread::runtime()->stats().dispatches - before;
    for (auto& h : hs) h.join();
  });
  CHECK((a.itself && b.itself && c.itself));
  CHECK(dispatches == 4);  // each thread, then main again
  INFO("locals at " << a.local << ", " << b.local << ", " << c.local);
  CHECK(b.local == a.local);  // the same frame of the same stack
  CHECK(c.local == a.local);
}

TEST_CASE("a thread that asked for its own stack size gets its own stack, and the next one a cached one",
          "[core][stack]") {
  // Between two default threads, one that needs more stack than a default one has: it must not
  // start on its predecessor's stack, and it can use what it asked for.
  Runtime rt{{.processors = 1}};
  constexpr std::size_t kUsed = 300 * 1024;  // more than a default stack holds (64 KiB, doubled)
  Where a, big, b;
  std::size_t touched = 0;
  rt.run([&] {
    auto ha = fork([&] { note(a, nullptr); });
    auto hbig = fork(ThreadAttributes{.name = "big", .stack_size = 512 * 1024}, [&] {
      note(big, nullptr);
      volatile char room[kUsed];
      for (std::size_t i = 0; i < kUsed; i += 4096) room[i] = 1;
      for (std::size_t i = 0; i < kUsed; i += 4096) touched += room[i];
    });
    auto hb = fork([&] { note(b, nullptr); });
    this_thread::yield();
    ha.join();
    hbig.join();
    hb.join();
  });
  INFO("locals at " << a.local << ", " << big.local << ", " << b.local);
  CHECK(distance(big.local, a.local) > 64 * 1024);
  CHECK(touched == kUsed / 4096 + (kUsed % 4096 != 0 ? 1 : 0));
  CHECK(b.local == a.local);  // a's stack, cached when big took the processor, at the same frame
}

TEST_CASE("a thread started on its predecessor's stack can block, and resumes there", "[core][stack]") {
  Runtime rt{{.processors = 2}};
  Where a, b, b_after;
  int result = 0;
  rt.run([&] {
    Semaphore go{0, "go"};
    auto ha = fork([&] { note(a, nullptr); });
    auto hb = fork([&] {
      note(b, nullptr);
      go.acquire();  // blocks: the stack it started on is now its own, saved with it
      note(b_after, nullptr);
      return 42;
    });
    this_thread::yield();
    go.release();
    ha.join();
    result = hb.join();
  });
  CHECK(result == 42);
  INFO("locals at " << a.local << ", " << b.local << ", " << b_after.local);
  CHECK(distance(b_after.local, b.local) < 4096);  // resumed on the stack it blocked on
}
