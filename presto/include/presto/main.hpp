#pragma once
// Main: PRESTO's 1988 program shape, kept for those who want it. Subclass it, override any of
//   init()  on the single-threaded program, before the runtime exists: set `config`;
//           a non-zero result is returned by run() at once
//   main()  the first thread, on the processors
//   done()  after the system halted, single-threaded again; its result is run()'s
// and run it with one call:
//
//   struct App : presto::Main {
//     using Main::Main;
//     int init() override { config.processors = 4; return 0; }
//     int main() override { ... }
//   };
//   int main(int argc, char** argv) { return App{argc, argv}.run(); }

#include <presto/runtime.hpp>

namespace presto {

class Main {
 public:
  Main(int argc = 0, char** argv = nullptr) noexcept : argc_(argc), argv_(argv) {}
  Main(const Main&) = delete;
  Main& operator=(const Main&) = delete;
  virtual ~Main() = default;

  // init(); then, if it returned 0, main() in a runtime made from `config`; then done().
  // Exceptions from the run (Deadlock, a thread's exception) propagate.
  int run();

 protected:
  virtual int init() { return 0; }
  virtual int main() { return 0; }
  // `status` is main()'s result.
  virtual int done(int status) { return status; }

  int argc() const noexcept { return argc_; }
  char** argv() const noexcept { return argv_; }
  // The running system, from main() and done(). UsageError elsewhere.
  Runtime& runtime() const;

  RuntimeConfig config;

 private:
  int argc_;
  char** argv_;
  Runtime* runtime_ = nullptr;
};

}  // namespace presto
