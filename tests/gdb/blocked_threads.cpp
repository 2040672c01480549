// Stops itself, for the gdb test, with presto threads in known states. Runtime 'presto' (one
// processor): 'consumer' (started from the OS thread, before run) blocked on condition
// 'nonempty' (in wait_for_item), 'locker' blocked on lock 'table' (in take_table), 'enterer'
// blocked on monitor 'buffer' (in enter_buffer), 'yielder' ready (in keep_yielding) and 'main'
// running (in presto_test_stop_here, where the debugger breaks). Runtime 'idle', not running:
// 'pending', ready and never run. Then it releases them all, joins them and prints what it
// checked.
// Usage: blocked_threads   (exit status 0 when every thread was released and joined)

#include <cstdio>
#include <functional>
#include <initializer_list>

#include <presto/presto.hpp>

extern "C" __attribute__((noinline)) void presto_test_stop_here() {
  __asm__ volatile("" ::: "memory");  // the debugger's breakpoint: keep the call
}

namespace {

struct Shared {
  presto::Monitor buffer{"buffer"};
  presto::Condition nonempty{buffer, "nonempty"};
  presto::Lock table{"table"};
  bool item = false;       // guarded by buffer
  bool stop_yielding = false;  // read by 'yielder' between yields (one processor: no race)
};

__attribute__((noinline)) void wait_for_item(Shared& s) {
  presto::Monitor::Entry entry{s.buffer};
  s.nonempty.wait(entry, [&] { return s.item; });
}

__attribute__((noinline)) void take_table(Shared& s) {
  s.table.lock();
  s.table.unlock();
}

__attribute__((noinline)) void enter_buffer(Shared& s) { presto::Monitor::Entry entry{s.buffer}; }

__attribute__((noinline)) void keep_yielding(Shared& s) {
  while (!s.stop_yielding) presto::this_thread::yield();
}

// Yields until every thread of `ts` is blocked; false if that takes more than 1000 yields.
bool until_blocked(std::initializer_list<const presto::Thread*> ts) {
  for (int i = 0; i < 1000; ++i) {
    bool all = true;
    for (const presto::Thread* t : ts) all = all && t->state() == presto::ThreadState::blocked;
    if (all) return true;
    presto::this_thread::yield();
  }
  return false;
}

}  // namespace

int main() {
  Shared s;
  presto::Thread consumer{"consumer"}, pending{"pending"};
  presto::Runtime idle{{.processors = 1, .name = "idle"}};
  idle.start(pending, [] {});
  presto::Runtime rt{{.processors = 1}};
  rt.start(consumer, wait_for_item, std::ref(s));
  const int status = rt.run([&] {
    presto::Thread locker{"locker"}, enterer{"enterer"}, yielder{"yielder"};
    if (!until_blocked({&consumer})) return std::puts("blocked_threads: consumer never blocked"), 1;
    {
      presto::Monitor::Entry entry{s.buffer};
      s.table.lock();
      locker.start(take_table, std::ref(s));
      enterer.start(enter_buffer, std::ref(s));
      yielder.start(keep_yielding, std::ref(s));
      if (!until_blocked({&locker, &enterer})) return std::puts("blocked_threads: locker/enterer never blocked"), 1;
      presto_test_stop_here();
      s.item = true;
      s.nonempty.signal();
      s.table.unlock();
    }
    s.stop_yielding = true;
    for (presto::Thread* t : {&consumer, &locker, &enterer, &yielder}) t->join();
    return 0;
  });
  idle.run([&] { pending.join(); });
  if (status == 0) std::puts("blocked_threads: released and joined 5 threads");
  return status;
}
