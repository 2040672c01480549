// run_pipeline: a software pipeline over the message layer. Node k (0 .. nodes-1) is a presto
// thread; for each of `messages` steps it receives its predecessor's message (k > 0), runs
// stage(k, step, node, received) which does the step's work, charges it with
// node.compute(us) and returns what to send, sends that to its successor (k < nodes - 1),
// and, on the first node only, idles for `padding` us after the send: the paper's optimal
// fix of the first processor's subtask (Van der Wijngaart et al., eqs. 26-33).
// Called from a presto thread; returns each node's statistics in pipeline order. An exception
// from a stage (or the layer) ends its node early, its successors' recv() then fails too,
// and the first one is rethrown once every node has finished.

#pragma once

#include <cstddef>
#include <deque>
#include <exception>
#include <vector>

#include <presto/presto.hpp>

#include "message_layer.hpp"

namespace presto::apps::linesolver {

template <class Stage>
std::vector<NodeStats> run_pipeline(const CostModel& costs, std::size_t nodes, std::size_t messages, double padding,
                                    Stage stage) {
  std::deque<Link> links;
  for (std::size_t k = 0; k + 1 < nodes; ++k) links.emplace_back(messages);
  std::vector<NodeStats> stats(nodes);
  std::vector<std::exception_ptr> errors(nodes);
  std::vector<presto::JoinHandle<void>> threads;
  for (std::size_t k = 0; k < nodes; ++k) {
    threads.push_back(presto::fork(presto::ThreadAttributes{.name = "pipeline node"}, [&, k] {
      Node node(costs, k > 0 ? &links[k - 1] : nullptr, k + 1 < nodes ? &links[k] : nullptr);
      try {
        for (std::size_t step = 0; step < messages; ++step) {
          std::vector<double> in = k > 0 ? node.recv() : std::vector<double>{};
          std::vector<double> out = stage(k, step, node, std::move(in));
          if (k + 1 < nodes) node.send(std::move(out));
          if (k == 0 && padding > 0) node.compute(padding);
        }
      } catch (...) {
        errors[k] = std::current_exception();  // finish() below releases the successor
      }
      stats[k] = node.finish();
    }));
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return stats;
}

}  // namespace presto::apps::linesolver
