// The example of README.md, compiled and run by the test suite.
#include <deque>

#include <presto/presto.hpp>

int main() {
  presto::Runtime rt{{.processors = 2}};
  return rt.run([] {
    presto::Monitor m{"buffer"};
    presto::Condition nonempty{m, "nonempty"};
    std::deque<int> items;
    auto consumer = presto::fork([&] {
      presto::Monitor::Entry entry{m};  // PRESTO's MONITOR ENTRY(m)
      nonempty.wait(entry, [&] { return !items.empty(); });
      return items.front();
    });
    {
      presto::Monitor::Entry entry{m};
      items.push_back(42);
      nonempty.signal();
    }
    return consumer.join() == 42 ? 0 : 1;  // join returns the value or rethrows
  });
}
