#include "exchange.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace presto::psim_mpi {

namespace {
constexpr int kTag = 0x5053;  // one tag: MPI keeps a rank's messages in order
// An MPI message is a header record (type kHeader, index the flags, source the bytes of text
// after the records), its records, then the failure's text, if any.
constexpr std::uint32_t kHeader = 0;
constexpr std::uint32_t kDone = 1;
constexpr std::uint32_t kFailed = 2;

[[noreturn]] void abort_all(MPI_Comm comm, const char* what) {
  std::fprintf(stderr, "presto-psim-mpi: %s; aborting every rank\n", what);
  std::fflush(stderr);
  MPI_Abort(comm, 3);
  std::abort();  // MPI_Abort does not return; if it did, do not go on
}
}  // namespace

DistributedSimulation::Exchange::Exchange(Simulation& sim, MPI_Comm comm, int rank, const std::vector<int>& owner,
                                          const DistributedConfig& config)
    : sim_(sim), comm_(comm), rank_(rank), owner_(owner), config_(config) {
  int ranks = 1;
  check_mpi(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
  for (int r = 0; r < ranks; ++r) out_.push_back(std::make_unique<Outbox>());
  batch_.resize(static_cast<std::size_t>(ranks));
  const auto& links = sim.links();
  for (std::uint32_t i = 0; i < links.size(); ++i) link_index_.emplace(links[i].get(), i);
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

DistributedSimulation::Exchange::~Exchange() {
  if (thread_.joinable()) {  // run() failed between start() and join(): end the thread's rounds
    finish("the distributed run was abandoned");
    thread_.join();
  }
}

void DistributedSimulation::Exchange::send(const psim::Link& link, const psim::Message& m) {
  const Record r{.type = kMessage, .index = link_index_.find(&link)->second, .time = m.time, .sent_at = m.sent_at,
                 .kind = m.kind, .value = m.value, .real = m.real, .source = m.source, .depth = m.depth,
                 .sequence = m.sequence};
  Outbox& out = *out_[static_cast<std::size_t>(owner_[link.to().index()])];
  std::lock_guard lock(out.lock);
  out.records.push_back(r);
}

void DistributedSimulation::Exchange::start() {
  if (out_.size() > 1) thread_ = std::thread([this] { loop(); });
}

void DistributedSimulation::Exchange::finish(const std::string& failure) {
  if (!failure.empty()) set_failure(failure);
  ending_.store(true, std::memory_order_release);
}

void DistributedSimulation::Exchange::join() {
  if (thread_.joinable()) thread_.join();
}

void DistributedSimulation::Exchange::set_failure(const std::string& what) {
  std::lock_guard lock(failure_lock_);
  if (failure_.empty()) failure_ = what;
}

void DistributedSimulation::Exchange::add_counters(RankStats& s) const noexcept {
  s.remote_messages = remote_messages_;
  s.remote_bounds = remote_bounds_;
  s.mpi_messages = mpi_messages_;
  s.rounds = rounds_;
  s.idle_rounds = idle_rounds_;
}

void DistributedSimulation::Exchange::loop() noexcept {
  try {
    const int others = static_cast<int>(out_.size()) - 1;
    std::uint32_t idle = 0;
    while (!(sent_done_ && done_from_ == others && flights_.empty())) {
      ++rounds_;
      if (round()) {
        idle = 0;
      } else if (++idle > config_.idle_spins) {
        ++idle_rounds_;
        std::this_thread::sleep_for(config_.idle_sleep);
      } else {
        ++idle_rounds_;
        std::this_thread::yield();
      }
    }
  } catch (const std::exception& e) {
    abort_all(comm_, e.what());
  }
}

bool DistributedSimulation::Exchange::round() {
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
  std::string text;
  if (last) {
    std::lock_guard lock(failure_lock_);
    text = failure_;
  }
  for (std::size_t r = 0; r < out_.size(); ++r) {
    if (static_cast<int>(r) == rank_) continue;
    std::vector<Record>& batch = batch_[r];
    std::size_t bounds = batch.size();
    {
      Outbox& out = *out_[r];
      std::lock_guard lock(out.lock);
      if (!out.records.empty()) {
        // The messages go before the bounds read above.
        batch.insert(batch.begin(), out.records.begin(), out.records.end());
        out.records.clear();
      }
    }
    remote_messages_ += batch.size() - bounds;
    const std::uint32_t flags = last ? (text.empty() ? kDone : kFailed) : 0;
    if (batch.empty() && flags == 0) continue;
    const std::size_t step = std::max<std::size_t>(config_.batch, 1);
    for (std::size_t first = 0; first < batch.size() || (first == 0 && batch.empty()); first += step) {
      const std::size_t count = std::min(step, batch.size() - first);
      const bool final_part = first + count >= batch.size();
      post(static_cast<int>(r), batch.data() + first, count, final_part ? flags : 0, final_part ? text : std::string());
      if (batch.empty()) break;
    }
    batch.clear();
    busy = true;
  }
  if (last) sent_done_ = true;
  complete_sends();
  if (receive()) busy = true;
  return busy;
}

void DistributedSimulation::Exchange::post(int to, const Record* records, std::size_t count, std::uint32_t flags,
                                           const std::string& text) {
  Flight f{.request = MPI_REQUEST_NULL, .buffer = {}};
  const Record header{.type = kHeader, .index = flags, .time = 0, .sent_at = 0, .kind = 0, .value = 0, .real = 0,
                      .source = static_cast<std::uint32_t>(text.size()), .depth = 0, .sequence = 0};
  f.buffer.resize(sizeof(Record) * (count + 1) + text.size());
  std::memcpy(f.buffer.data(), &header, sizeof header);
  if (count > 0) std::memcpy(f.buffer.data() + sizeof(Record), records, sizeof(Record) * count);
  if (!text.empty()) std::memcpy(f.buffer.data() + sizeof(Record) * (count + 1), text.data(), text.size());
  check_mpi(MPI_Isend(f.buffer.data(), static_cast<int>(f.buffer.size()), MPI_BYTE, to, kTag, comm_, &f.request),
            "MPI_Isend");
  ++mpi_messages_;
  flights_.push_back(std::move(f));
}

void DistributedSimulation::Exchange::complete_sends() {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < flights_.size(); ++i) {
    int done = 0;
    check_mpi(MPI_Test(&flights_[i].request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done != 0) continue;
    // Not a self-move: that would free a buffer MPI is still sending from.
    if (kept != i) flights_[kept] = std::move(flights_[i]);
    ++kept;
  }
  flights_.resize(kept);
}

bool DistributedSimulation::Exchange::receive() {
  bool any = false;
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, kTag, comm_, &arrived, &status), "MPI_Iprobe");
    if (arrived == 0) return any;
    any = true;
    int bytes = 0;
    check_mpi(MPI_Get_count(&status, MPI_BYTE, &bytes), "MPI_Get_count");
    inbound_.resize(static_cast<std::size_t>(bytes));
    const int from = status.MPI_SOURCE;
    check_mpi(MPI_Recv(inbound_.data(), bytes, MPI_BYTE, from, kTag, comm_, MPI_STATUS_IGNORE), "MPI_Recv");
    Record header;
    std::memcpy(&header, inbound_.data(), sizeof header);
    const std::size_t count = (inbound_.size() - sizeof(Record) - header.source) / sizeof(Record);
    for (std::size_t i = 0; i < count; ++i) {
      Record r;
      std::memcpy(&r, inbound_.data() + sizeof(Record) * (i + 1), sizeof r);
      apply(r, from);
    }
    if (header.index != 0) {
      ++done_from_;
      if (header.index == kFailed) {
        const auto* text = reinterpret_cast<const char*>(inbound_.data() + sizeof(Record) * (count + 1));
        std::string what = "rank " + std::to_string(from) + ": " + std::string(text, header.source);
        if (remote_failure_.empty()) remote_failure_ = what;
        sim_.stop("stopped because " + what);
      }
    }
  }
}

void DistributedSimulation::Exchange::apply(const Record& r, int from) {
  const auto& links = sim_.links();
  std::ostringstream os;
  os << "rank " << rank_ << " received from rank " << from << " ";
  if (r.type == kMessage) {
    if (r.index >= links.size()) {
      os << "a message on link #" << r.index << ", but the model has " << links.size()
         << " links (do the ranks build the same model?)";
      return reject(os.str());
    }
    psim::Link& l = *links[r.index];
    if (owner_[l.to().index()] != rank_ || owner_[l.from().index()] != from || r.source != l.from().index()) {
      os << "a message on link '" << l.name() << "' from LP #" << r.source << ", whose receiver runs on rank "
         << owner_[l.to().index()] << " and sender on rank " << owner_[l.from().index()];
      return reject(os.str());
    }
    if (!std::isfinite(r.time) || !(r.time >= r.sent_at + l.lookahead())) {
      os << "a message for logical process '" << l.to().name() << "' at t=" << r.time << " on link '" << l.name()
         << "', sent at t=" << r.sent_at << ": before its sender's time plus the link's lookahead " << l.lookahead();
      return reject(os.str());
    }
    const psim::Message m{.kind = r.kind, .value = r.value, .real = r.real, .time = r.time, .sent_at = r.sent_at,
                          .source = r.source, .depth = r.depth, .sequence = r.sequence, .link = &l};
    sim_.deliver_remote(l, m);
  } else if (r.type == kBound) {
    if (r.index >= sim_.size() || owner_[r.index] != from) {
      os << "a null message (bound t=" << r.time << ") from LP #" << r.index << ", which "
         << (r.index >= sim_.size() ? "does not exist in this model" : "that rank does not run");
      return reject(os.str());
    }
    sim_.advance_remote(sim_.process(r.index), r.time);
  } else {
    os << "a record of unknown type " << r.type;
    reject(os.str());
  }
}

void DistributedSimulation::Exchange::reject(const std::string& what) {
  set_failure(what);
  sim_.stop(what);
}

}  // namespace presto::psim_mpi
