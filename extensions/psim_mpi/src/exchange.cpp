#include "exchange.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <thread>

#include "null_exchange.hpp"
#include "window_exchange.hpp"

namespace presto::psim_mpi::detail {

void abort_all(MPI_Comm comm, const char* what) {
  std::fprintf(stderr, "presto-psim-mpi: %s; aborting every rank\n", what);
  std::fflush(stderr);
  MPI_Abort(comm, 3);
  std::abort();  // MPI_Abort does not return; if it did, do not go on
}

std::unique_ptr<Exchange> Exchange::make(Simulation& sim, MPI_Comm comm, int rank, const std::vector<int>& owner,
                                         const DistributedConfig& config) {
  switch (config.protocol) {
    case RankProtocol::null_messages: return std::make_unique<NullMessageExchange>(sim, comm, rank, owner, config);
    case RankProtocol::windows: return std::make_unique<WindowExchange>(sim, comm, rank, owner, config);
  }
  throw UsageError("psim_mpi::DistributedSimulation: unknown RankProtocol " +
                   std::to_string(static_cast<int>(config.protocol)));
}

Exchange::Exchange(Simulation& sim, MPI_Comm comm, int rank, const std::vector<int>& owner,
                   const DistributedConfig& config)
    : sim_(sim), comm_(comm), rank_(rank), owner_(owner), config_(config) {
  int ranks = 1;
  check_mpi(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
  for (int r = 0; r < ranks; ++r) out_.push_back(std::make_unique<Outbox>());
  const auto& links = sim.links();
  for (std::uint32_t i = 0; i < links.size(); ++i) link_index_.emplace(links[i].get(), i);
}

void Exchange::send(const psim::Link& link, const psim::Message& m) {
  const Record r{.type = kMessage, .index = link_index_.find(&link)->second, .time = m.time, .sent_at = m.sent_at,
                 .kind = m.kind, .value = m.value, .real = m.real, .source = m.source, .depth = m.depth,
                 .sequence = m.sequence};
  Outbox& out = *out_[static_cast<std::size_t>(owner_[link.to().index()])];
  std::lock_guard lock(out.lock);
  out.records.push_back(r);
}

SimulationStats Exchange::run(Runtime& rt, std::unique_ptr<ThreadPool> inner) {
  begin(rt);
  SimulationStats local;
  std::string failure;
  try {
    local = sim_.run(scheduler(std::move(inner)));
  } catch (const psim::SimulationStopped&) {
    // Stopped by the protocol: the reason is recorded already.
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "an exception of unknown type";
  }
  end(failure);
  return local;
}

void Exchange::add_counters(RankStats& s) const noexcept {
  s.remote_messages = remote_messages_;
  s.remote_bounds = remote_bounds_;
  s.mpi_messages = mpi_messages_;
  s.rounds = rounds_;
  s.idle_rounds = idle_rounds_;
  s.window_seconds = window_seconds_;
}

std::size_t Exchange::take_messages(int to, std::vector<Record>& into) {
  Outbox& out = *out_[static_cast<std::size_t>(to)];
  std::lock_guard lock(out.lock);
  const std::size_t n = out.records.size();
  into.insert(into.end(), out.records.begin(), out.records.end());
  out.records.clear();
  remote_messages_ += n;
  return n;
}

void Exchange::post_batch(int to, int tag, const std::vector<Record>& records, std::uint32_t flags,
                          const std::string& text) {
  const std::size_t step = std::max<std::size_t>(config_.batch, 1);
  std::size_t first = 0;
  for (; records.size() - first > step; first += step) post(to, tag, records.data() + first, step, kMore, {});
  post(to, tag, records.data() + first, records.size() - first, flags, text);
}

void Exchange::post(int to, int tag, const Record* records, std::size_t count, std::uint32_t flags,
                    const std::string& text) {
  Flight f{.request = MPI_REQUEST_NULL, .buffer = {}};
  const Record header{.type = kHeader, .index = flags, .time = 0, .sent_at = 0, .kind = 0, .value = 0, .real = 0,
                      .source = static_cast<std::uint32_t>(text.size()), .depth = 0, .sequence = 0};
  f.buffer.resize(sizeof(Record) * (count + 1) + text.size());
  std::memcpy(f.buffer.data(), &header, sizeof header);
  if (count > 0) std::memcpy(f.buffer.data() + sizeof(Record), records, sizeof(Record) * count);
  if (!text.empty()) std::memcpy(f.buffer.data() + sizeof(Record) * (count + 1), text.data(), text.size());
  check_mpi(MPI_Isend(f.buffer.data(), static_cast<int>(f.buffer.size()), MPI_BYTE, to, tag, comm_, &f.request),
            "MPI_Isend");
  ++mpi_messages_;
  flights_.push_back(std::move(f));
}

bool Exchange::complete_sends() {
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
  return flights_.empty();
}

bool Exchange::receive_one(int tag, Received& got) {
  int arrived = 0;
  MPI_Status status;
  check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm_, &arrived, &status), "MPI_Iprobe");
  if (arrived == 0) return false;
  int bytes = 0;
  check_mpi(MPI_Get_count(&status, MPI_BYTE, &bytes), "MPI_Get_count");
  inbound_.resize(static_cast<std::size_t>(bytes));
  got.from = status.MPI_SOURCE;
  check_mpi(MPI_Recv(inbound_.data(), bytes, MPI_BYTE, got.from, tag, comm_, MPI_STATUS_IGNORE), "MPI_Recv");
  Record header;
  std::memcpy(&header, inbound_.data(), sizeof header);
  const std::size_t count = (inbound_.size() - sizeof(Record) - header.source) / sizeof(Record);
  got.records.resize(count);
  if (count > 0) std::memcpy(got.records.data(), inbound_.data() + sizeof(Record), sizeof(Record) * count);
  got.flags = header.index;
  got.text.clear();
  if ((got.flags & kFailed) != 0) {
    got.text.assign(reinterpret_cast<const char*>(inbound_.data() + sizeof(Record) * (count + 1)), header.source);
  }
  return true;
}

void Exchange::pause(std::uint32_t& idle, std::uint32_t spins) const {
  if (++idle > spins) {
    std::this_thread::sleep_for(config_.idle_sleep);
  } else {
    std::this_thread::yield();
  }
}

void Exchange::apply(const Record& r, int from) {
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

void Exchange::reject(const std::string& what) {
  set_failure(what);
  sim_.stop(what);
}

void Exchange::set_failure(const std::string& what) {
  std::lock_guard lock(failure_lock_);
  if (failure_.empty()) failure_ = what;
}

std::string Exchange::failure_so_far() {
  std::lock_guard lock(failure_lock_);
  return failure_;
}

void Exchange::remote_failed(int from, const std::string& text) {
  const std::string what = "rank " + std::to_string(from) + ": " + text;
  if (remote_failure_.empty()) remote_failure_ = what;
  sim_.stop("stopped because " + what);
}

}  // namespace presto::psim_mpi::detail
