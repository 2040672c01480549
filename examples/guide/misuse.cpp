// Guide, chapters 3 and 5: misuse is a presto::UsageError naming the object and the thread,
// raised in the offending thread before any state changed. This program commits each
// mistake on purpose, catches the error and prints its message.
#include <cstdio>
#include <functional>
#include <string>

#include <presto/presto.hpp>

namespace {
int caught = 0;

void expect_usage_error(const char* what, const std::function<void()>& f) {
  try {
    f();
    std::printf("%-34s no error?!\n", what);
  } catch (const presto::UsageError& e) {
    ++caught;
    std::printf("%-34s %s\n", what, e.what());
  }
}
}  // namespace

int main() {
  // Outside any presto thread.
  expect_usage_error("fork outside a presto thread:", [] { (void)presto::fork([] {}); });

  presto::Runtime rt{{.processors = 2}};
  rt.run([] {
    presto::Monitor m{"buffer"};
    presto::Monitor other{"other"};
    presto::Condition nonempty{m, "nonempty"};

    expect_usage_error("exit a monitor one does not hold:", [&] { m.exit(); });
    expect_usage_error("enter a monitor twice:", [&] {
      presto::Monitor::Entry entry{m};
      m.entry();
    });
    expect_usage_error("signal without the monitor:", [&] { nonempty.signal(); });
    expect_usage_error("wait with another monitor's entry:", [&] {
      presto::Monitor::Entry entry{other};
      nonempty.wait(entry);
    });

    presto::Lock lock{"table"};
    presto::Semaphore held{0}, done{0};
    auto holder = presto::fork(presto::ThreadAttributes{.name = "holder"}, [&] {
      std::scoped_lock guard{lock};
      held.release();
      done.acquire();  // keeps the lock until main has tried to unlock it
    });
    held.acquire();
    expect_usage_error("unlock a lock another thread holds:", [&] { lock.unlock(); });
    done.release();
    holder.join();

    presto::Thread worker{"worker"};
    worker.start([] { return 1; });
    expect_usage_error("start a thread twice:", [&] { worker.start([] { return 2; }); });
    expect_usage_error("join<R> with the wrong R:", [&] { (void)worker.join<long>(); });
    expect_usage_error("join a thread twice:", [&] { worker.join(); });
    expect_usage_error("join oneself:", [] { presto::Thread::current().join(); });

    expect_usage_error("release a negative count:", [] {
      presto::Semaphore s{0, "tokens"};
      s.release(-1);
    });
    expect_usage_error("a barrier for no one:", [] { presto::Barrier b{0, "empty"}; });
  });
  std::printf("%d usage errors caught\n", caught);
  return caught == 12 ? 0 : 1;
}
