// Guide chapter 6 (channels): agents that talk over channels. Two producers send on their own
// rendezvous channels; a merger polls both (with a guard that turns a channel off once it is
// closed) and forwards into a buffered channel that main drains.

#include <cstdio>
#include <optional>
#include <string>

#include <presto/channels/channels.hpp>
#include <presto/presto.hpp>

using namespace presto::channels;

int main() {
  presto::Runtime rt{{.processors = 2}};
  long total = rt.run([] {
    Channel<int> odd{"odd"}, even{"even"};
    BufferedChannel<int> merged{4, "merged"};

    auto producer = [](Channel<int>& out, int first) {
      for (int i = first; i < 20; i += 2) out.send(i);
      out.close();  // the receiver sees an empty optional from now on
    };
    auto a = presto::fork(producer, std::ref(odd), 1);
    auto b = presto::fork(producer, std::ref(even), 0);

    auto merger = presto::fork([&] {
      bool odd_open = true, even_open = true;
      while (odd_open || even_open) {
        poll(on_recv(odd, [&](std::optional<int> v) { v ? merged.send(*v) : void(odd_open = false); }).when(odd_open),
             on_recv(even, [&](std::optional<int> v) { v ? merged.send(*v) : void(even_open = false); })
                 .when(even_open));
      }
      merged.close();
    });

    long sum = 0;
    while (std::optional<int> v = merged.recv()) sum += *v;
    a.join(), b.join(), merger.join();

    try {
      odd.send(99);
    } catch (const ChannelClosed& e) {
      std::printf("%s\n", e.what());
    }
    return sum;
  });
  std::printf("sum of 0..19 through the merger: %ld\n", total);
  return total == 190 ? 0 : 1;
}
