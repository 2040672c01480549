// Guide, chapter 1: the smallest PRESTO program.
// A Runtime with two processors runs a first thread, which forks one thread per word and
// joins them in order. run() returns the first thread's result once the system halts.
#include <cstdio>
#include <string>
#include <vector>

#include <presto/presto.hpp>

int main() {
  presto::Runtime rt{{.processors = 2, .name = "hello"}};
  int status = rt.run([] {
    const std::vector<std::string> words{"PRESTO", "runs", "threads", "on", "processors"};
    std::vector<presto::JoinHandle<std::size_t>> handles;
    for (const std::string& w : words) {
      handles.push_back(presto::fork([w] { return w.size(); }));  // the lambda owns a copy of w
    }
    std::size_t letters = 0;
    for (auto& h : handles) letters += h.join();
    std::printf("%zu words, %zu letters, counted by %zu threads on %zu processors\n", words.size(), letters,
                handles.size(), presto::this_thread::runtime()->processors());
    return letters == 29 ? 0 : 1;
  });
  std::printf("run() returned %d\n", status);
  return status;
}
