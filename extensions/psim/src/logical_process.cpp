#include <presto/psim/logical_process.hpp>

#include <sstream>
#include <stop_token>

#include <presto/errors.hpp>
#include <presto/psim/sequential_simulator.hpp>
#include <presto/psim/simulation.hpp>

namespace presto::psim {

LogicalProcess::LogicalProcess(std::string name) : Thread(std::move(name)) {}

LogicalProcess::~LogicalProcess() noexcept(false) = default;

Link* LogicalProcess::link_to(const LogicalProcess& to) const noexcept {
  for (Link* l : outputs_) {
    if (&l->to() == &to) return l;
  }
  return nullptr;
}

void LogicalProcess::misuse(const std::string& what) const {
  throw UsageError("logical process '" + name() + "' " + what);
}

void LogicalProcess::owner_error(const char* operation) const {
  if (simulation_ == nullptr) misuse(std::string("called ") + operation + " outside a simulation");
  if (&Thread::current() != this) {
    misuse(std::string("had ") + operation + " called on it by " + Thread::current().describe() +
           "; only the LP's own thread may call it");
  }
  misuse(std::string("called ") + operation + " after its simulation ended");
}

void LogicalProcess::cancelled_send(const char* operation) const {
  std::ostringstream os;
  os << "called " << operation << " at t=" << now()
     << " after its receive() was cancelled; it may send again once a receive returns its next message "
        "(while it waited it promised its neighbours nothing earlier than that message)";
  misuse(os.str());
}

void LogicalProcess::past_error(Time delay, const Link* link) const {
  std::ostringstream os;
  os << "sent a message into the past: delay " << delay << " at time " << now();
  if (link != nullptr) os << " on " << link->describe() << " (lookahead " << link->lookahead() << ")";
  misuse(os.str());
}

void LogicalProcess::stamp(Message& out, const Message& payload, Time delay, const Link* link) noexcept {
  out.kind = payload.kind;
  out.value = payload.value;
  out.real = payload.real;
  out.time = key_.time + delay;
  out.sent_at = key_.time;
  out.source = index_;
  out.depth = out.time == key_.time ? key_.depth + 1 : 0;
  out.sequence = ++sequence_;
  out.link = link;
}

void LogicalProcess::send(Link& link, Message message, Time delay) {
  check_owner("send");
  if (&link.from() != this) misuse("sent on " + link.describe() + ", which is not one of its output links");
  if (cancelled_) [[unlikely]] cancelled_send("send");
  check_delay(delay, &link);
  ++stats_.messages_sent;
  if (sequential_ != nullptr) {
    ++link.messages_;
    stamp(sequential_->add(link.to()), message, delay, &link);
  } else {
    stamp(outbox_.emplace_back(&link, Message{}).second, message, delay, &link);
  }
}

void LogicalProcess::schedule(Message message, Time delay) {
  check_owner("schedule");
  if (cancelled_) [[unlikely]] cancelled_send("schedule");
  check_delay(delay, nullptr);
  ++stats_.scheduled;
  stamp(sequential_ != nullptr ? sequential_->add(*this) : scheduled_.emplace_back(), message, delay, nullptr);
}

std::optional<Message> LogicalProcess::receive() {
  check_owner("receive");
  if (sequential_ != nullptr) {
    misuse("called receive() in the sequential simulator, which runs only event-style models "
           "(initialize() and handle())");
  }
  return take(nullptr);
}

std::optional<Message> LogicalProcess::take(const StopToken* token) {
  std::optional<Message> m(std::in_place);
  if (!simulation_->receive(*this, token, *m)) m.reset();
  return m;
}

std::optional<Message> LogicalProcess::receive(const StopToken& token) {
  check_owner("receive");
  if (sequential_ != nullptr) {
    misuse("called receive() in the sequential simulator, which runs only event-style models "
           "(initialize() and handle())");
  }
  if (!token.stop_possible()) return take(nullptr);
  // A stop wakes the LP through Simulation::cancel_receive. Registered here, around the whole
  // receive, so that receive() without a token pays nothing for it: before the LP's mutex is
  // taken (the callback may run at once, and takes it) and unregistered after it is released
  // (the destructor waits for a callback running on another OS thread).
  struct OnStop {
    Simulation* simulation;
    LogicalProcess* lp;
    void operator()() const noexcept { simulation->cancel_receive(*lp); }
  };
  std::stop_callback<OnStop> on_stop(token, OnStop{simulation_, this});
  return take(&token);
}

void LogicalProcess::body() {
  initialize();
  // run() runs body() on the LP's own thread until receive() ends it: receive()'s owner check
  // holds by construction here, so the loop asks the engine directly.
  Message m;
  while (simulation_->receive(*this, nullptr, m)) handle(m);
}

void LogicalProcess::run() {
  try {
    body();
  } catch (...) {
    simulation_->ended(*this, true);
    throw;
  }
  simulation_->ended(*this, false);
}

}  // namespace presto::psim
