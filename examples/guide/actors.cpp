// docs/guide/actors.md: tasks, send and call, stop.
#include <cstdio>
#include <stdexcept>

#include <presto/actors/task.hpp>
#include <presto/runtime.hpp>

using presto::actors::StopMode;
using presto::actors::Task;
using presto::actors::TaskStopped;

class Account : public Task {
 public:
  explicit Account(long balance) : Task("account"), balance_(balance) {}
  ~Account() override { stop(); }  // before balance_ goes

  void deposit(long amount) { balance_ += amount; }
  bool withdraw(long amount) {
    if (amount > balance_) return false;
    balance_ -= amount;
    return true;
  }
  long balance() const { return balance_; }
  void audit() const { throw std::runtime_error("the books do not balance"); }

 private:
  long balance_;
};

int main() {
  presto::Runtime rt{{.processors = 2}};
  return rt.run([] {
    Account a{100};
    a.send(&Account::deposit, 50);                          // asynchronous
    bool ok = a.call(&Account::withdraw, 120L);             // waits for the reply
    std::printf("withdraw 120: %s; balance %ld\n", ok ? "done" : "refused", a.call(&Account::balance));

    // An exception in a call() comes back to the caller; the task goes on serving.
    try {
      a.call(&Account::audit);
    } catch (const std::runtime_error& e) {
      std::printf("audit: %s\n", e.what());
    }

    // stop() drains the queue, then the task refuses messages.
    for (int i = 0; i < 10; ++i) a.send(&Account::deposit, 1);
    a.stop();
    std::printf("after stop: balance %ld\n", a.balance());  // stopped: safe to read directly
    try {
      a.send(&Account::deposit, 1);
    } catch (const TaskStopped& e) {
      std::printf("refused: %s\n", e.what());
    }
    return a.balance() == 40 ? 0 : 1;
  });
}
