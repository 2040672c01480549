#include <presto/psim_mpi/distributed_simulation.hpp>

#include <bit>
#include <cstring>
#include <exception>
#include <sstream>

#include <sys/resource.h>

#include <presto/errors.hpp>
#include <presto/runtime.hpp>

#include "exchange.hpp"

namespace presto::psim_mpi {

namespace {

// FNV-1a over the model's definition: what every rank must agree on.
class ModelHash {
 public:
  void add(const void* data, std::size_t bytes) noexcept {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) hash_ = (hash_ ^ p[i]) * 1099511628211ULL;
  }
  template <class T>
  void add(const T& value) noexcept {
    add(&value, sizeof value);
  }
  void add(const std::string& s) noexcept {
    add(s.size());
    add(s.data(), s.size());
  }
  std::uint64_t value() const noexcept { return hash_; }

 private:
  std::uint64_t hash_ = 14695981039346656037ULL;
};

// What run() exchanges first.
struct Setup {
  std::uint64_t hash;
  std::uint64_t lps;
  std::uint64_t links;
  std::uint64_t protocol;  // RankProtocol
  std::uint64_t failed;  // this rank could not set up (its error is reported there)
};

// CPU time of this process so far (every thread), in seconds.
double process_cpu_seconds() noexcept {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

}  // namespace

std::string_view to_string(RankProtocol protocol) noexcept {
  switch (protocol) {
    case RankProtocol::null_messages: return "null-messages";
    case RankProtocol::windows: return "windows";
  }
  return "?";
}

std::uint64_t DistributedStats::events() const noexcept {
  std::uint64_t n = 0;
  for (const RankStats& r : ranks) n += r.events;
  return n;
}
std::uint64_t DistributedStats::remote_messages() const noexcept {
  std::uint64_t n = 0;
  for (const RankStats& r : ranks) n += r.remote_messages;
  return n;
}
std::uint64_t DistributedStats::remote_bounds() const noexcept {
  std::uint64_t n = 0;
  for (const RankStats& r : ranks) n += r.remote_bounds;
  return n;
}

DistributedSimulation::DistributedSimulation(Simulation& sim, DistributedConfig config, MPI_Comm comm)
    : sim_(sim), config_(std::move(config)) {
  check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  try {
    setup();
  } catch (...) {
    MPI_Comm_free(&comm_);  // no destructor runs
    throw;
  }
}

void DistributedSimulation::setup() {
  Simulation& sim = sim_;
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &ranks_), "MPI_Comm_size");
  // Errors of the model or the partition are the same on every rank that builds the same
  // model: every rank throws. (Different models are caught by run()'s first exchange.)
  const std::size_t n = sim.size();
  if (config_.partition.empty()) {
    owner_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      owner_[i] = static_cast<int>(i * static_cast<std::size_t>(ranks_) / n);
    }
  } else {
    if (config_.partition.size() != n) {
      throw UsageError("psim_mpi::DistributedSimulation: the partition names " +
                       std::to_string(config_.partition.size()) + " ranks for " + std::to_string(n) +
                       " logical processes");
    }
    for (std::size_t i = 0; i < n; ++i) {
      const int r = config_.partition[i];
      if (r < 0 || r >= ranks_) {
        throw UsageError("psim_mpi::DistributedSimulation: the partition puts logical process '" +
                         sim.process(i).name() + "' on rank " + std::to_string(r) + ", but there are " +
                         std::to_string(ranks_) + " ranks");
      }
    }
    owner_ = config_.partition;
  }
  exchange_ = detail::Exchange::make(sim_, comm_, rank_, owner_, config_);
  std::vector<bool> owned(n);
  for (std::size_t i = 0; i < n; ++i) owned[i] = owner_[i] == rank_;
  sim_.distribute(*exchange_, std::move(owned));
}

DistributedSimulation::~DistributedSimulation() {
  exchange_.reset();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);  // a failure here cannot be reported
}

DistributedStats DistributedSimulation::run(std::unique_ptr<ThreadPool> inner) {
  Runtime* rt = Runtime::current();
  if (rt == nullptr) throw UsageError("psim_mpi::DistributedSimulation::run called outside a presto thread");

  // 1. The same model everywhere: LPs (names), links (ends and lookaheads), end time, partition.
  ModelHash h;
  h.add(sim_.size());
  for (std::size_t i = 0; i < sim_.size(); ++i) {
    h.add(sim_.process(i).name());
    h.add(owner_[i]);
  }
  h.add(sim_.links().size());
  for (const auto& l : sim_.links()) {
    h.add(l->from().index());
    h.add(l->to().index());
    h.add(std::bit_cast<std::uint64_t>(l->lookahead()));
  }
  h.add(std::bit_cast<std::uint64_t>(sim_.config().end_time));
  h.add(static_cast<int>(config_.protocol));
  const Setup mine{.hash = h.value(), .lps = sim_.size(), .links = sim_.links().size(),
                     .protocol = static_cast<std::uint64_t>(config_.protocol), .failed = 0};
  std::vector<Setup> all(static_cast<std::size_t>(ranks_));
  check_mpi(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm_), "MPI_Allgather");
  for (const Setup& s : all) {
    if (s.hash == mine.hash) continue;
    std::ostringstream os;
    os << "rank " << rank_ << ": the ranks hold different models (every rank must build the same LPs and links "
       << "in the same order, with the same end time, partition and rank protocol):";
    for (int r = 0; r < ranks_; ++r) {
      const Setup& x = all[static_cast<std::size_t>(r)];
      os << " rank " << r << " has " << x.lps << " LPs and " << x.links << " links, protocol "
         << to_string(static_cast<RankProtocol>(x.protocol)) << " (hash " << std::hex << x.hash << std::dec << ");";
    }
    throw DistributedError(os.str());
  }

  // 2. The run: this rank's LPs, with the exchange carrying the rest.
  const double cpu_start = process_cpu_seconds();
  SimulationStats local = exchange_->run(*rt, std::move(inner));
  const double cpu = process_cpu_seconds() - cpu_start;
  if (!exchange_->failure().empty()) throw DistributedError("rank " + std::to_string(rank_) + ": " + exchange_->failure());
  if (!exchange_->remote_failure().empty()) throw DistributedError(exchange_->remote_failure());

  // 3. Every rank's figures, on every rank.
  RankStats r{};
  for (std::size_t i = 0; i < sim_.size(); ++i) r.lps += owner_[i] == rank_ ? 1 : 0;
  r.events = local.events;
  r.local_null_messages = local.null_messages;
  r.blocks = local.blocks;
  r.blocked_seconds = std::chrono::duration<double>(local.blocked_time).count();
  r.seconds = local.seconds;
  r.cpu_seconds = cpu;
  exchange_->add_counters(r);
  DistributedStats s;
  s.local = std::move(local);
  s.ranks.resize(static_cast<std::size_t>(ranks_));
  check_mpi(MPI_Allgather(&r, sizeof r, MPI_BYTE, s.ranks.data(), sizeof r, MPI_BYTE, comm_), "MPI_Allgather");
  for (const RankStats& x : s.ranks) s.seconds = std::max(s.seconds, x.seconds);
  return s;
}

}  // namespace presto::psim_mpi
