// Guide, chapter 2: creating and starting threads.
// A Thread is a passive object (a name, an id, attributes) until it is started; start()
// binds what it runs, in std::invoke order, and makes it ready.
#include <cstdio>
#include <string>
#include <vector>

#include <presto/presto.hpp>

namespace {

// PRESTO's asynchronous invocation: a thread started in a member function of an object.
class Directory {
 public:
  int insert(const std::string& name, int size) {
    presto::Monitor::Entry entry{monitor_};
    entries_.push_back(name);
    total_ += size;
    return static_cast<int>(entries_.size());
  }
  int total() const { return total_; }

 private:
  presto::Monitor monitor_{"directory"};
  std::vector<std::string> entries_;
  int total_ = 0;
};

int square(int x) { return x * x; }

// A thread with a body of its own: override run() and call start() with no arguments.
class Countdown : public presto::Thread {
 public:
  explicit Countdown(int from) : Thread("countdown"), from_(from) {}
  std::string said;

 protected:
  void run() override {
    for (int i = from_; i > 0; --i) {
      said += std::to_string(i) + " ";
      presto::this_thread::yield();  // PRESTO's switch(): let other ready threads run
    }
    said += "go";
  }

 private:
  int from_;
};

}  // namespace

int main() {
  presto::Runtime rt{{.processors = 2}};
  return rt.run([] {
    Directory dir;

    // 1. A member function: object pointer first, then the arguments (copied into the thread).
    presto::Thread inserter{"dir_inserter"};
    inserter.start(&Directory::insert, &dir, std::string("notes.txt"), 1200);

    // 2. A free function with an argument, on a thread with a 256 KiB stack.
    presto::Thread squarer{presto::ThreadAttributes{.name = "squarer", .stack_size = 256 * 1024}};
    squarer.start(square, 12);

    // 3. A lambda; Thread::current() is PRESTO's `thisthread`.
    presto::Thread greeter{"greeter"};
    std::string greeting;
    greeter.start([&greeting] {
      const presto::Thread& me = presto::Thread::current();
      greeting = "hello from " + me.describe();
    });

    // 4. A subclass with its own run().
    Countdown countdown{3};
    countdown.start();

    // join() waits and rethrows; join<R>() also returns the body's result.
    int entries = inserter.join<int>();
    int squared = squarer.join<int>();
    greeter.join();
    countdown.join();

    std::printf("%s: %d entry, %d bytes\n", inserter.describe().c_str(), entries, dir.total());
    std::printf("%s with a %zu KiB stack: 12 * 12 = %d\n", squarer.describe().c_str(), squarer.stack_size() / 1024,
                squared);
    std::printf("%s\n", greeting.c_str());
    std::printf("%s said: %s\n", countdown.describe().c_str(), countdown.said.c_str());
    std::printf("the first thread is %s\n", presto::Thread::current().describe().c_str());
    return entries == 1 && squared == 144 && countdown.said == "3 2 1 go" ? 0 : 1;
  });  // every Thread above has finished before its destructor runs
}
