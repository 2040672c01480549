// The exceptions a thread is handling are its own: the C++ runtime keeps them per OS thread
// (the caught-exception stack behind `throw;` and std::current_exception, and the count behind
// std::uncaught_exceptions), so a thread that blocks, yields or migrates inside a catch handler,
// or in a destructor run by unwinding, must find its own again when it resumes, and the threads
// that ran meanwhile on that OS thread must not see it. Over every configuration; a barrier
// puts every thread inside its handler at once, so the handlers interleave on each OS thread.

#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace presto;

TEST_CASE("a thread that sleeps inside a catch handler keeps the exception it handles", "[core][exceptions]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  constexpr int kThreads = 5;
  const int rounds = static_cast<int>(presto::test::scaled(40));
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    Barrier inside{kThreads, "inside the handlers"};
    std::vector<JoinHandle<void>> hs;
    for (int t = 0; t < kThreads; ++t) {
      hs.push_back(fork([&, t] {
        for (int r = 0; r < rounds; ++r) {
          const std::string mine = "thread " + std::to_string(t) + " round " + std::to_string(r);
          try {
            throw std::runtime_error(mine);
          } catch (const std::runtime_error& outer) {
            inside.arrive_and_wait();  // every thread is in its handler now: they switch here
            if (r % 3 == 0) this_thread::yield();
            try {  // a nested exception, handled and gone, while the outer one is still caught
              throw std::logic_error("nested " + mine);
            } catch (const std::logic_error& inner) {
              inside.arrive_and_wait();
              record.expect(inner.what() == "nested " + mine, mine + ": the nested handler saw '" + inner.what() + "'");
            }
            try {
              throw;  // the exception being handled: ours, whatever ran on this OS thread meanwhile
            } catch (const std::runtime_error& again) {
              record.expect(again.what() == mine && &again == &outer,
                            mine + ": throw; in its handler rethrew '" + again.what() + "'");
            }
            record.expect(std::current_exception() != nullptr, mine + ": no current exception inside its handler");
          }
          record.expect(std::current_exception() == nullptr, mine + ": a current exception after its handler ended");
        }
      }));
    }
    for (auto& h : hs) h.join();
  });
  PRESTO_CHECK_RECORD(record);
}

TEST_CASE("a destructor that sleeps during unwinding counts its own uncaught exception only", "[core][exceptions]") {
  auto cfg = GENERATE(presto::test::configs());
  INFO(cfg);
  const int rounds = static_cast<int>(presto::test::scaled(40));
  presto::test::Record record;
  presto::test::run(cfg, [&] {
    Barrier both{2, "unwinding and not"};
    struct Sleeper {
      Barrier& barrier;
      presto::test::Record& record;
      ~Sleeper() {
        record.expect(std::uncaught_exceptions() == 1, "the unwinding thread's count was not 1 before it slept");
        barrier.arrive_and_wait();
        barrier.arrive_and_wait();
        record.expect(std::uncaught_exceptions() == 1, "the unwinding thread's count was not 1 after it slept");
      }
    };
    auto unwinding = fork([&] {
      for (int r = 0; r < rounds; ++r) {
        try {
          Sleeper s{both, record};
          throw std::runtime_error("unwinding");
        } catch (const std::runtime_error&) {
        }
      }
    });
    auto plain = fork([&] {
      for (int r = 0; r < rounds; ++r) {
        both.arrive_and_wait();
        this_thread::yield();
        record.expect(std::uncaught_exceptions() == 0, "a thread that throws nothing saw an uncaught exception");
        both.arrive_and_wait();
      }
    });
    unwinding.join();
    plain.join();
  });
  PRESTO_CHECK_RECORD(record);
}
