// Guide, chapter 3: the paper's SynchronizedStack, in modern form.
// A sequential Stack, and a subclass that makes every operation atomic with a private
// monitor and makes pop() wait while the stack is empty. Code written for a Stack works
// unchanged on a SynchronizedStack.
#include <cstdio>
#include <vector>

#include <presto/presto.hpp>

namespace {

class Stack {
 public:
  // noexcept(false): PRESTO's synchronization objects may throw from their destructors
  // (UsageError when destroyed with waiters), so a subclass holding a Monitor has a
  // potentially-throwing destructor, and a virtual base destructor must allow it.
  virtual ~Stack() noexcept(false) = default;
  std::size_t depth() const { return elements_.size(); }
  virtual void push(int element) { elements_.push_back(element); }
  virtual int pop() {
    int top = elements_.back();
    elements_.pop_back();
    return top;
  }

 private:
  std::vector<int> elements_;
};

class SynchronizedStack : public Stack {
 public:
  void push(int element) override {
    presto::Monitor::Entry entry{monitor_};
    Stack::push(element);  // qualify to the super-class operation
    // The 1988 code signalled only when depth() became 1. With several poppers waiting that
    // loses wake-ups: a signal wakes one popper, the next pushes find depth() > 1 and stay
    // silent, and the other poppers sleep on while items pile up. Signal on every push.
    nonempty_.signal();
  }
  int pop() override {
    presto::Monitor::Entry entry{monitor_};
    while (depth() == 0) {
      nonempty_.wait(entry);  // consider the signal only as a hint: check depth again
    }
    return Stack::pop();
  }

 private:
  presto::Monitor monitor_{"StackMonitor"};
  presto::Condition nonempty_{monitor_, "StackCondition"};
};

// Written for any Stack.
void push_range(Stack& s, int from, int to) {
  for (int i = from; i <= to; ++i) s.push(i);
}

}  // namespace

int main() {
  presto::Runtime rt{{.processors = 2}};
  return rt.run([] {
    SynchronizedStack stack;
    // Poppers start first and wait on the empty stack.
    std::vector<presto::JoinHandle<long>> poppers;
    for (int p = 0; p < 4; ++p) {
      poppers.push_back(presto::fork([&stack] {
        long sum = 0;
        for (int i = 0; i < 250; ++i) sum += stack.pop();
        return sum;
      }));
    }
    auto pusher_a = presto::fork(push_range, std::ref<Stack>(stack), 1, 500);
    auto pusher_b = presto::fork(push_range, std::ref<Stack>(stack), 501, 1000);
    pusher_a.join();
    pusher_b.join();
    long total = 0;
    for (auto& p : poppers) total += p.join();
    std::printf("4 poppers took 1000 items from 2 pushers; sum %ld (expected 500500); depth now %zu\n", total,
                stack.depth());
    return total == 500500 && stack.depth() == 0 ? 0 : 1;
  });
}
