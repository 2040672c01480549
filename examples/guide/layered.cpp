// Guide, chapter 4: layered extension. A new primitive composed from existing ones:
// parallel_reduce, on parallel_for (the loop) and a Lock (the combining step). Each member
// of the team accumulates a chunk privately and combines once per chunk, so the lock is
// taken a few times per thread, not once per index.
#include <cstdio>
#include <mutex>

#include <presto/presto.hpp>

template <class T, class Map, class Combine>
T parallel_reduce(long begin, long end, T zero, Map map, Combine combine, long grain = 256) {
  presto::Lock lock{"parallel_reduce"};
  T total = zero;
  const long chunks = (end - begin + grain - 1) / grain;
  presto::parallel_for(0L, chunks, [&](long c) {
    T partial = zero;
    for (long i = begin + c * grain; i < end && i < begin + (c + 1) * grain; ++i) partial = combine(partial, map(i));
    std::scoped_lock guard{lock};
    total = combine(total, partial);
  }, presto::Schedule::self());
  return total;
}

int main() {
  presto::Runtime rt{{.processors = 4}};
  long sum = rt.run([] {
    return parallel_reduce(1L, 100001L, 0L, [](long i) { return i * i % 1000; }, [](long x, long y) { return x + y; });
  });
  long expected = 0;
  for (long i = 1; i < 100001; ++i) expected += i * i % 1000;
  std::printf("sum of i*i %% 1000 for i in [1, 100000]: %ld (expected %ld)\n", sum, expected);
  return sum == expected ? 0 : 1;
}
