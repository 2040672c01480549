// Overflows a presto thread's stack on purpose: the stack tests expect it to die with
// "thread 'deep-recursion' (id N) overflowed its 16 KiB stack" on stderr.
// Usage: stack_overflow [guard|canary]  (canary: force canary-checked stacks)

#include <cstring>

#include <presto/presto.hpp>

namespace {
int recurse(int depth) {
  volatile char frame[512];
  frame[0] = static_cast<char>(depth);
  if (depth > 1'000'000) return frame[0];
  return recurse(depth + 1) + frame[0];
}
}  // namespace

int main(int argc, char** argv) {
  presto::Runtime rt{{.processors = 1}};
  return rt.run([] {
    auto h = presto::fork(presto::ThreadAttributes{.name = "deep-recursion", .stack_size = 16 * 1024},
                          [] { return recurse(0); });
    return h.join();
  });
  (void)argc;
  (void)argv;
}
