#include "window_exchange.hpp"

#include <algorithm>
#include <chrono>
#include <sstream>

namespace presto::psim_mpi::detail {

namespace {
constexpr int kTag = 0x5754;  // and kTag + 1: even and odd rounds
}  // namespace

void WindowScheduler::halt() {
  if (exchange_.standstill(*this)) return;
  SimulationScheduler::halt();  // the rounds are over: PSIM's own end, or its Deadlock report
}

WindowExchange::WindowExchange(Simulation& sim, MPI_Comm comm, int rank, const std::vector<int>& owner,
                               const DistributedConfig& config)
    : Exchange(sim, comm, rank, owner, config) {
  std::vector<bool> from(static_cast<std::size_t>(ranks()));
  std::vector<bool> stand_in(sim.size());
  for (const auto& l : sim.links()) {
    const int a = owner[l->from().index()], b = owner[l->to().index()];
    if (a == rank && b != rank && std::find(to_.begin(), to_.end(), b) == to_.end()) to_.push_back(b);
    if (b == rank && a != rank) {
      from[static_cast<std::size_t>(a)] = true;
      stand_in[l->from().index()] = true;
    }
  }
  from_count_ = static_cast<int>(std::count(from.begin(), from.end(), true));
  for (std::size_t i = 0; i < sim.size(); ++i) {
    if (owner[i] == rank) owned_.push_back(&sim.process(i));
    if (stand_in[i]) stand_ins_.push_back(&sim.process(i));
  }
}

void WindowExchange::begin(Runtime&) {}  // no thread, no KeepAlive: the runtime's halt() runs the rounds

std::unique_ptr<psim::SimulationScheduler> WindowExchange::scheduler(std::unique_ptr<ThreadPool> inner) {
  return std::make_unique<WindowScheduler>(std::move(inner), *this);
}

void WindowExchange::end(const std::string& failure) {
  if (!failure.empty()) set_failure(failure);
  while (!over_) round(/*finished=*/true);
}

bool WindowExchange::standstill(const WindowScheduler& scheduler) {
  const std::uint64_t before = scheduler.readied();
  while (!over_) {
    const Time was = window_;
    round(/*finished=*/false);
    if (scheduler.readied() != before) return true;
    if (!over_ && !(window_ > was)) {
      // Cannot happen while every unfinished LP here waits in receive() (T grows by at least the
      // least lookahead per round): one waits on something else. Fail rather than spin.
      std::ostringstream os;
      os << "rank " << rank_ << ": the windows stand still at t=" << window_
         << ": no logical process of this rank can move (one is blocked outside psim::LogicalProcess::receive?)";
      set_failure(os.str());
      sim_.stop(os.str());
    }
  }
  return false;
}

void WindowExchange::round(bool finished) noexcept {
  try {
    const auto start = std::chrono::steady_clock::now();
    ++rounds_;
    const int tag = kTag + static_cast<int>(rounds_ & 1);
    // 1-2. This rank's bound and its messages to other ranks, which it accounts for.
    Time bound = psim::kNever;
    for (const LogicalProcess* lp : owned_) bound = std::min(bound, sim_.published_bound(*lp));
    bool sent = false;
    for (int r : to_) {
      batch_.clear();
      if (take_messages(r, batch_) > 0) sent = true;
      for (const Record& m : batch_) bound = std::min(bound, m.time);
      post_batch(r, tag, batch_, 0, {});
    }
    const std::string failure = failure_so_far();
    const double mine[3] = {bound, finished && !sent ? 0.0 : -1.0,
                            failure.empty() ? 0.0 : static_cast<double>(rank_ - ranks())};
    double all[3] = {0, 0, 0};
    MPI_Request reduction = MPI_REQUEST_NULL;
    check_mpi(MPI_Iallreduce(mine, all, 3, MPI_DOUBLE, MPI_MIN, comm_, &reduction), "MPI_Iallreduce");
    // 3. Until nothing of this round is in flight.
    int reduced = 0, last_parts = 0;
    bool received = false;
    for (std::uint32_t idle = 0;;) {
      bool progress = false;
      if (reduced == 0) {
        check_mpi(MPI_Test(&reduction, &reduced, MPI_STATUS_IGNORE), "MPI_Test");
        progress = reduced != 0;
      }
      while (receive_one(tag, got_)) {
        progress = received = true;
        if ((got_.flags & kMore) == 0) ++last_parts;
        for (const Record& r : got_.records) held_.emplace_back(got_.from, r);
      }
      const bool sends_done = complete_sends();
      if (reduced != 0 && last_parts == from_count_ && sends_done) break;
      if (progress) {
        idle = 0;
      } else {
        pause(idle, config_.window_spins);
      }
    }
    if (!sent && !received) ++idle_rounds_;
    // 4. The outcome, the same on every rank.
    if (all[2] < 0) {  // the lowest failed rank's text, to every rank
      const int failed = static_cast<int>(all[2]) + ranks();
      std::uint64_t size = failed == rank_ ? failure.size() : 0;
      check_mpi(MPI_Bcast(&size, 1, MPI_UINT64_T, failed, comm_), "MPI_Bcast");
      std::string text = failed == rank_ ? failure : std::string(size, '\0');
      check_mpi(MPI_Bcast(text.data(), static_cast<int>(size), MPI_CHAR, failed, comm_), "MPI_Bcast");
      if (failed != rank_) remote_failed(failed, text);
      over_ = true;
    } else if (all[1] == 0) {  // every rank finished and nothing was in flight
      over_ = true;
    } else {
      // The messages first (they are at or after T), then the bounds.
      for (const auto& [from, r] : held_) apply(r, from);
      window_ = all[0];
      for (LogicalProcess* lp : stand_ins_) sim_.advance_remote(*lp, window_);
    }
    held_.clear();
    window_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } catch (const std::exception& e) {
    // The other ranks wait in this round's MPI: no rank can go on.
    abort_all(comm_, e.what());
  }
}

}  // namespace presto::psim_mpi::detail
