#include "null_exchange.hpp"

#include <algorithm>

namespace presto::psim_mpi::detail {

namespace {
constexpr int kTag = 0x5053;  // one tag: MPI keeps a rank's messages in order
}  // namespace

NullMessageExchange::NullMessageExchange(Simulation& sim, MPI_Comm comm, int rank, const std::vector<int>& owner,
                                         const DistributedConfig& config)
    : Exchange(sim, comm, rank, owner, config) {
  batch_.resize(static_cast<std::size_t>(ranks()));
  for (std::size_t i = 0; i < sim.size(); ++i) {
    const LogicalProcess& lp = sim.process(i);
    if (owner[i] != rank) continue;
    Boundary b{.lp = &lp, .ranks = {}};
    for (const psim::Link* l : lp.outputs()) {
      const int to = owner[l->to().index()];
      if (to != rank && std::find(b.ranks.begin(), b.ranks.end(), to) == b.ranks.end()) b.ranks.push_back(to);
    }
    if (!b.ranks.empty()) boundary_.push_back(std::move(b));
  }
}

NullMessageExchange::~NullMessageExchange() {
  if (thread_.joinable()) {  // run() failed between begin() and end(): end the thread's rounds
    end("the distributed run was abandoned");
  }
}

void NullMessageExchange::begin(Runtime& rt) {
  keep_ = rt.keep_alive();  // the thread wakes LPs from outside the runtime
  if (ranks() > 1) thread_ = std::thread([this] { loop(); });
}

std::unique_ptr<psim::SimulationScheduler> NullMessageExchange::scheduler(std::unique_ptr<ThreadPool> inner) {
  return std::make_unique<psim::SimulationScheduler>(std::move(inner));
}

void NullMessageExchange::end(const std::string& failure) {
  if (!failure.empty()) set_failure(failure);
  ending_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
  keep_.reset();
}

void NullMessageExchange::loop() noexcept {
  try {
    const int others = ranks() - 1;
    std::uint32_t idle = 0;
    while (!(sent_done_ && done_from_ == others && complete_sends())) {
      ++rounds_;
      if (round()) {
        idle = 0;
      } else {
        ++idle_rounds_;
        pause(idle, config_.idle_spins);
      }
    }
  } catch (const std::exception& e) {
    abort_all(comm_, e.what());
  }
}

bool NullMessageExchange::round() {
  bool busy = false;
  // After the local run ended every owned LP's bound is final and every message is in the
  // outboxes: read the flag before them.
  const bool last = !sent_done_ && ending_.load(std::memory_order_acquire);
  for (Boundary& b : boundary_) {
    const Time bound = sim_.published_bound(*b.lp);
    if (!(bound > b.reported)) continue;
    b.reported = bound;
    for (int r : b.ranks) {
      batch_[static_cast<std::size_t>(r)].push_back(Record{.type = kBound, .index = b.lp->index(), .time = bound,
                                                           .sent_at = 0, .kind = 0, .value = 0, .real = 0, .source = 0,
                                                           .depth = 0, .sequence = 0});
      ++remote_bounds_;
    }
  }
  const std::string text = last ? failure_so_far() : std::string();
  std::vector<Record> messages;
  for (int r = 0; r < ranks(); ++r) {
    if (r == rank_) continue;
    std::vector<Record>& batch = batch_[static_cast<std::size_t>(r)];
    // The messages go before the bounds read above.
    messages.clear();
    if (take_messages(r, messages) > 0) batch.insert(batch.begin(), messages.begin(), messages.end());
    const std::uint32_t flags = last ? (text.empty() ? kDone : kFailed) : 0;
    if (batch.empty() && flags == 0) continue;
    post_batch(r, kTag, batch, flags, text);
    batch.clear();
    busy = true;
  }
  if (last) sent_done_ = true;
  complete_sends();
  for (Received got; receive_one(kTag, got);) {
    busy = true;
    for (const Record& r : got.records) apply(r, got.from);
    if ((got.flags & (kDone | kFailed)) == 0) continue;
    ++done_from_;
    if ((got.flags & kFailed) != 0) remote_failed(got.from, got.text);
  }
  return busy;
}

}  // namespace presto::psim_mpi::detail
