// Stacks: an overflow is reported with the thread's name, id and stack size, whichever way the
// stack is protected (guard page installed by madvise or mprotect, or a canary), and stacks are
// accounted for while threads live and returned when they finish.

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
