// psim_mpi_test: an MPI program that the psim_mpi suite launches with mpirun (through
// psim_mpi_test.py) on 1, 2 and 4 ranks. Every rank runs the same code.
//
//   psim_mpi_test --processors P histories   each model's every LP history, gathered on rank 0,
//                                            must equal the sequential simulator's (PHOLD, the
//                                            queueing network, a ring written here, and PHOLD
//                                            wide enough for MPI messages of hundreds of records)
//   psim_mpi_test --processors P past        an LP sends across ranks below its link's lookahead
//   psim_mpi_test --processors P mismatch    rank 1 builds a model with one more LP
//   psim_mpi_test --processors P partition   the partition names a rank that does not exist
//   psim_mpi_test --processors P kill        rank 1 kills itself (SIGKILL) in the middle of a run
//   psim_mpi_test --processors P protocols   rank 1 runs the other protocol across ranks
//
// --protocol null|window picks the protocol across ranks (DistributedConfig::protocol; default
// null): every case runs under both.
//
// Each rank prints "rank R: ok ..." or "rank R: error: <what>" and exits 0 or 1; the script
// checks the statuses and texts (and that nothing hangs: it runs mpirun under a timeout).

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <presto/presto.hpp>
#include <presto/psim/phold.hpp>
#include <presto/psim/queueing_network.hpp>
#include <presto/psim/sequential_simulator.hpp>
#include <presto/psim_mpi/distributed_simulation.hpp>
#include <presto/psim_mpi/environment.hpp>

using namespace presto::psim;
using presto::psim_mpi::DistributedSimulation;
using presto::psim_mpi::RankProtocol;

namespace {

// A user-written model: tokens travel round a ring, one or two LPs ahead, with random delays;
// each LP records what it received. kill_at: rank 1's first LP kills its process at that event.
class RingNode final : public LogicalProcess {
 public:
  RingNode(std::string name, std::uint32_t index, std::uint64_t seed)
      : LogicalProcess(std::move(name)), random_(seed * 7919 + index), index_(index) {}
  std::vector<HistoryEntry> history;
  int kill_at = -1;
  bool cheat = false;  // sends below its lookahead at its 20th event (the "past" case)

 protected:
  void initialize() override {
    for (int t = 0; t < 3; ++t) schedule(Message{.value = static_cast<std::int64_t>(index_ * 100 + t)}, random_.exponential(1.0));
  }
  void handle(const Message& m) override {
    history.push_back({m.time, m.source, m.value});
    if (static_cast<int>(history.size()) == kill_at) std::raise(SIGKILL);
    Link& out = *outputs()[random_.uniform() < 0.7 ? 0 : 1];
    const Time delay = cheat && history.size() == 20 ? out.lookahead() / 2 : out.lookahead() + random_.exponential(0.5);
    send(out, Message{.value = m.value + 1}, delay);
  }

 private:
  Random random_;
  std::uint32_t index_;
};

void build_ring(Simulation& sim, std::uint32_t n) {
  std::vector<RingNode*> nodes;
  for (std::uint32_t i = 0; i < n; ++i) nodes.push_back(&sim.add<RingNode>("ring-" + std::to_string(i), i, 3));
  for (std::uint32_t i = 0; i < n; ++i) {
    sim.connect(*nodes[i], *nodes[(i + 1) % n], 0.25);
    sim.connect(*nodes[i], *nodes[(i + 2) % n], 0.5);
  }
}

QueueingNetworkConfig network() {
  return QueueingNetworkConfig{
      .stations = {{"terminals", 4.0, true}, {"cpu", 0.5, false}, {"disk1", 0.8, false}, {"disk2", 0.6, false}},
      .classes = {{"batch", 4, {0, 1, 2}}, {"interactive", 3, {0, 1, 3}}},
      .transit = 0.05,
      .warmup = 0,
      .seed = 7,
      .record = true,
  };
}

struct Model {
  const char* name;
  Time end;
  std::function<void(Simulation&)> build;
  std::function<const std::vector<HistoryEntry>&(const Simulation&, std::size_t)> history;
};

const QueueingNetworkConfig kNetwork = network();
const PholdConfig kPhold{.processes = 16, .population = 2, .lookahead = 0.5, .mean = 1.0, .remote = 0.5,
                         .work = 0, .seed = 12345, .record = true};
// Long lookahead, many LPs: MPI messages of hundreds of records, sent by rendezvous rather than
// copied at once (the exchange must keep their buffers until MPI_Test says sent).
const PholdConfig kPholdWide{.processes = 64, .population = 16, .lookahead = 4, .mean = 1.0, .remote = 0.5,
                             .work = 0, .seed = 777, .record = true};

std::vector<Model> models() {
  return {
      {"phold", 300, [](Simulation& s) { build_phold(s, kPhold); },
       [](const Simulation& s, std::size_t i) -> const std::vector<HistoryEntry>& {
         return static_cast<const PholdProcess&>(s.process(i)).history();
       }},
      {"phold-wide", 25, [](Simulation& s) { build_phold(s, kPholdWide); },
       [](const Simulation& s, std::size_t i) -> const std::vector<HistoryEntry>& {
         return static_cast<const PholdProcess&>(s.process(i)).history();
       }},
      {"qnet", 250, [](Simulation& s) { std::vector<Station*> st; build_queueing_network(s, kNetwork, st); },
       [](const Simulation& s, std::size_t i) -> const std::vector<HistoryEntry>& {
         return static_cast<const Station&>(s.process(i)).history();
       }},
      {"ring", 200, [](Simulation& s) { build_ring(s, 8); },
       [](const Simulation& s, std::size_t i) -> const std::vector<HistoryEntry>& {
         return static_cast<const RingNode&>(s.process(i)).history;
       }},
  };
}

std::uint64_t mpi_messages(const presto::psim_mpi::DistributedStats& s) {
  std::uint64_t n = 0;
  for (const auto& r : s.ranks) n += r.mpi_messages;
  return n;
}

// Every owned LP's history, flattened: (LP, count, entries...) as doubles.
std::vector<double> pack(const Simulation& sim, const DistributedSimulation& dist, const Model& model) {
  std::vector<double> out;
  for (std::size_t i = 0; i < sim.size(); ++i) {
    if (!dist.owned(sim.process(i))) continue;
    const auto& h = model.history(sim, i);
    out.push_back(static_cast<double>(i));
    out.push_back(static_cast<double>(h.size()));
    for (const HistoryEntry& e : h) {
      out.push_back(e.time);
      out.push_back(static_cast<double>(e.source));
      out.push_back(static_cast<double>(e.value));
    }
  }
  return out;
}

// Runs `model` distributed; on rank 0 compares every LP's history with the sequential one.
// Returns "" or what differs (on rank 0).
std::string check_histories(const Model& model, std::size_t processors, RankProtocol protocol, int rank, int ranks) {
  presto::Runtime rt{{.processors = processors}};
  return rt.run([&]() -> std::string {
    Simulation sim{{.protocol = Protocol::null_messages, .end_time = model.end}};
    model.build(sim);
    DistributedSimulation dist{sim, {.partition = {}, .protocol = protocol}};
    const auto stats = dist.run();
    std::vector<double> mine = pack(sim, dist, model);
    int count = static_cast<int>(mine.size());
    std::vector<int> counts(static_cast<std::size_t>(ranks)), displs(static_cast<std::size_t>(ranks));
    presto::psim_mpi::check_mpi(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
    std::vector<double> all;
    if (rank == 0) {
      int total = 0;
      for (int r = 0; r < ranks; ++r) {
        displs[static_cast<std::size_t>(r)] = total;
        total += counts[static_cast<std::size_t>(r)];
      }
      all.resize(static_cast<std::size_t>(total));
    }
    presto::psim_mpi::check_mpi(MPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), displs.data(),
                                            MPI_DOUBLE, 0, MPI_COMM_WORLD),
                                "MPI_Gatherv");
    if (rank != 0) return "";
    Simulation reference{{.end_time = model.end}};
    model.build(reference);
    SequentialSimulator{reference}.run();
    std::vector<bool> seen(reference.size());
    std::uint64_t events = 0;
    for (std::size_t at = 0; at < all.size();) {
      const auto i = static_cast<std::size_t>(all[at]);
      const auto n = static_cast<std::size_t>(all[at + 1]);
      at += 2;
      const auto& expected = model.history(reference, i);
      seen[i] = true;
      events += n;
      if (n != expected.size()) {
        return std::string(model.name) + ": LP " + std::to_string(i) + " received " + std::to_string(n) +
               " messages, the sequential simulator " + std::to_string(expected.size());
      }
      for (std::size_t k = 0; k < n; ++k, at += 3) {
        const HistoryEntry got{all[at], static_cast<std::uint32_t>(all[at + 1]), static_cast<std::int64_t>(all[at + 2])};
        if (!(got == expected[k])) {
          return std::string(model.name) + ": LP " + std::to_string(i) + "'s message " + std::to_string(k) +
                 " differs from the sequential simulator's (t=" + std::to_string(got.time) + " vs t=" +
                 std::to_string(expected[k].time) + ")";
        }
      }
    }
    for (std::size_t i = 0; i < seen.size(); ++i) {
      if (!seen[i]) return std::string(model.name) + ": no rank reported LP " + std::to_string(i);
    }
    std::printf("rank 0: ok %s: %zu LPs, %llu events identical to the sequential simulator's on %d ranks x %zu "
                "processors, %s (%llu remote messages, %llu remote null messages, %.1f records per MPI message, %llu rounds, "
                "%.2f s)\n",
                model.name, reference.size(), static_cast<unsigned long long>(events), ranks, processors,
                std::string(to_string(protocol)).c_str(),
                static_cast<unsigned long long>(stats.remote_messages()),
                static_cast<unsigned long long>(stats.remote_bounds()),
                static_cast<double>(stats.remote_messages() + stats.remote_bounds()) /
                    static_cast<double>(std::max<std::uint64_t>(1, mpi_messages(stats))),
                static_cast<unsigned long long>(stats.ranks[0].rounds), stats.seconds);
    if (events == 0) return std::string(model.name) + ": no events";
    return "";
  });
}

// The fault cases: the run must throw on every rank.
void run_faulty(const std::string& which, std::size_t processors, RankProtocol protocol, int rank, int ranks) {
  presto::Runtime rt{{.processors = processors}};
  rt.run([&] {
    Simulation sim{{.protocol = Protocol::null_messages, .end_time = 300}};
    build_ring(sim, which == "mismatch" && rank == 1 ? 9 : 8);
    presto::psim_mpi::DistributedConfig config{.partition = {}, .protocol = protocol};
    if (which == "protocols" && rank == 1) {
      config.protocol = protocol == RankProtocol::windows ? RankProtocol::null_messages : RankProtocol::windows;
    }
    if (which == "partition") config.partition.assign(sim.size(), ranks);  // one past the last rank
    // Rank 1's first LP (the block partition puts LP 8/ranks there) misbehaves.
    RingNode& culprit = static_cast<RingNode&>(sim.process(std::min<std::size_t>(sim.size() - 1, 8 / ranks)));
    if (which == "past") culprit.cheat = true;
    if (which == "kill" && rank == 1) culprit.kill_at = 50;
    DistributedSimulation dist{sim, config};
    dist.run();
  });
}

}  // namespace

int main(int argc, char** argv) {
  presto::psim_mpi::Environment mpi{argc, argv};
  std::size_t processors = 1;
  std::string which = "histories";
  RankProtocol protocol = RankProtocol::null_messages;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--processors") == 0 && i + 1 < argc) {
      processors = std::strtoul(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--protocol") == 0 && i + 1 < argc) {
      const std::string p = argv[++i];
      if (p != "null" && p != "window") {
        std::printf("rank %d: error: --protocol %s: expected null or window\n", mpi.rank(), p.c_str());
        return 2;
      }
      protocol = p == "window" ? RankProtocol::windows : RankProtocol::null_messages;
    } else {
      which = argv[i];
    }
  }
  try {
    if (which == "histories") {
      std::string failed;
      for (const Model& m : models()) {
        failed = check_histories(m, processors, protocol, mpi.rank(), mpi.ranks());
        int bad = failed.empty() ? 0 : 1;
        presto::psim_mpi::check_mpi(MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
        if (bad != 0) {
          std::printf("rank %d: error: %s\n", mpi.rank(), failed.empty() ? "rank 0 found a difference" : failed.c_str());
          return 1;
        }
      }
      std::printf("rank %d: ok\n", mpi.rank());
      return 0;
    }
    run_faulty(which, processors, protocol, mpi.rank(), mpi.ranks());
    std::printf("rank %d: ok (no error)\n", mpi.rank());
    return 0;
  } catch (const std::exception& e) {
    std::printf("rank %d: error: %s\n", mpi.rank(), e.what());
    std::fflush(stdout);
    return 1;
  }
}
