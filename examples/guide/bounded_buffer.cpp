// Guide, chapter 3: a bounded buffer as a monitor with two conditions (Mesa semantics).
// Three producers and two consumers share a buffer of four slots.
#include <cstdio>
#include <deque>
#include <vector>

#include <presto/presto.hpp>

namespace {

class BoundedBuffer {
 public:
  explicit BoundedBuffer(std::size_t capacity) : capacity_(capacity) {}

  void put(int item) {
    presto::Monitor::Entry entry{monitor_};  // PRESTO's MONITOR ENTRY(m)
    not_full_.wait(entry, [&] { return items_.size() < capacity_; });
    items_.push_back(item);
    not_empty_.signal();  // a hint: a consumer rechecks when it owns the monitor again
  }

  int get() {
    presto::Monitor::Entry entry{monitor_};
    not_empty_.wait(entry, [&] { return !items_.empty(); });
    int item = items_.front();
    items_.pop_front();
    not_full_.signal();
    return item;
  }

 private:
  presto::Monitor monitor_{"buffer"};
  presto::Condition not_full_{monitor_, "not full"};
  presto::Condition not_empty_{monitor_, "not empty"};
  std::deque<int> items_;
  const std::size_t capacity_;
};

}  // namespace

int main() {
  const int producers = 3, consumers = 2, per_producer = 1000;
  presto::Runtime rt{{.processors = 2}};
  return rt.run([] {
    BoundedBuffer buffer{4};
    std::vector<presto::JoinHandle<void>> ps;
    for (int p = 0; p < producers; ++p) {
      ps.push_back(presto::fork([&buffer, p] {
        for (int i = 1; i <= per_producer; ++i) buffer.put(p * per_producer + i);
      }));
    }
    const int per_consumer = producers * per_producer / consumers;
    std::vector<presto::JoinHandle<long>> cs;
    for (int c = 0; c < consumers; ++c) {
      cs.push_back(presto::fork([&buffer] {
        long sum = 0;
        for (int i = 0; i < per_consumer; ++i) sum += buffer.get();
        return sum;
      }));
    }
    for (auto& p : ps) p.join();
    long total = 0;
    for (auto& c : cs) total += c.join();
    const long n = producers * per_producer;
    std::printf("%d items passed through a 4-slot buffer; sum %ld (expected %ld)\n", producers * per_producer, total,
                n * (n + 1) / 2);
    return total == n * (n + 1) / 2 ? 0 : 1;
  });
}
