// PSIM guide example: a source, a FCFS server and a sink, as an event-style model, run by the
// sequential simulator and by PSIM with both protocols on two processors: all three agree.
#include <cstdio>
#include <deque>

#include <presto/presto.hpp>
#include <presto/psim/random.hpp>
#include <presto/psim/sequential_simulator.hpp>
#include <presto/psim/simulation.hpp>

using namespace presto::psim;

class Source : public LogicalProcess {
 public:
  using LogicalProcess::LogicalProcess;

 protected:
  void initialize() override { schedule({}, random_.exponential(1.0)); }
  void handle(const Message&) override {  // a job is born now: pass it on, plan the next one
    send(*outputs().front(), Message{.real = now()}, 0.1);
    schedule({}, random_.exponential(1.0));
  }

 private:
  Random random_{1};
};

class Server : public LogicalProcess {
 public:
  using LogicalProcess::LogicalProcess;

 protected:
  void handle(const Message& m) override {
    if (m.link != nullptr) {  // an arrival
      queue_.push_back(m.real);
      if (queue_.size() == 1) schedule({}, random_.exponential(0.5));
      return;
    }
    send(*outputs().front(), Message{.real = queue_.front()}, 0.1);  // a departure
    queue_.pop_front();
    if (!queue_.empty()) schedule({}, random_.exponential(0.5));
  }

 private:
  Random random_{2};
  std::deque<double> queue_;  // birth times
};

class Sink : public LogicalProcess {
 public:
  using LogicalProcess::LogicalProcess;
  double total = 0;
  long jobs = 0;

 protected:
  void handle(const Message& m) override {
    total += now() - m.real;
    ++jobs;
  }
};

double mean_response(Protocol protocol, bool parallel) {
  Simulation sim{{.protocol = protocol, .end_time = 20000}};
  auto& source = sim.add<Source>("source");
  auto& server = sim.add<Server>("server");
  auto& sink = sim.add<Sink>("sink");
  sim.connect(source, server, 0.1);  // lookahead 0.1: every hop takes 0.1
  sim.connect(server, sink, 0.1);
  SimulationStats stats = parallel ? sim.run() : SequentialSimulator{sim}.run();
  std::printf("%-18s %s: %ld jobs, mean response %.4f, %llu events, %llu null messages, %llu deadlocks\n",
              parallel ? std::string(to_string(protocol)).c_str() : "sequential", parallel ? "(PSIM)" : "      ",
              sink.jobs, sink.total / sink.jobs, static_cast<unsigned long long>(stats.events),
              static_cast<unsigned long long>(stats.null_messages), static_cast<unsigned long long>(stats.deadlocks()));
  return sink.total / sink.jobs;
}

int main() {
  double reference = mean_response(Protocol::null_messages, false);
  presto::Runtime rt{{.processors = 2}};
  bool same = rt.run([&] {
    return mean_response(Protocol::null_messages, true) == reference &&
           mean_response(Protocol::deadlock_recovery, true) == reference;
  });
  // M/M/1 with rho = 0.5: 0.5 / (1 - 0.5) = 1 in the server, plus two hops of 0.1.
  std::printf("%s (M/M/1 theory: %.1f)\n", same ? "identical results" : "RESULTS DIFFER", 1.0 + 0.2);
  return same ? 0 : 1;
}
