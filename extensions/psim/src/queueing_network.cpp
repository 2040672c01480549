#include <presto/psim/queueing_network.hpp>

#include <algorithm>
#include <cmath>

#include <presto/errors.hpp>

namespace presto::psim {

namespace {

// A self-scheduled event of negative kind is the Poisson source of open class -1 - kind.
std::int64_t source_kind(std::size_t c) { return -1 - static_cast<std::int64_t>(c); }

}  // namespace

Station::Station(const QueueingNetworkConfig& config, std::uint32_t index)
    : LogicalProcess(config.stations.at(index).name),
      config_(config),
      spec_(config.stations.at(index)),
      random_(config.seed, index),
      next_(config.classes.size(), nullptr),
      sink_(config.classes.size(), false),
      arrivals_(config.classes.size(), 0),
      present_(config.classes.size(), 0),
      area_(config.classes.size(), 0.0),
      completions_(config.classes.size(), 0),
      departures_(config.classes.size(), 0),
      time_in_network_(config.classes.size(), 0.0),
      mean_(config.classes.size(), spec_.mean_service) {
  for (std::size_t c = 0; c < config.classes.size(); ++c) {
    const ClassSpec& k = config.classes[c];
    for (std::size_t i = 0; i < k.service.size() && i < k.route.size(); ++i) {
      if (k.route[i] == index) mean_[c] = k.service[i];
    }
  }
}

void Station::account() {
  const Time t = now();
  if (t > config_.warmup) {
    const Time from = std::max(last_, config_.warmup);
    for (std::size_t c = 0; c < present_.size(); ++c) area_[c] += present_[c] * (t - from);
  }
  last_ = t;
}

double Station::mean_number(std::size_t c, Time end) const {
  const Time from = std::max(last_, config_.warmup);
  const double area = area_.at(c) + (end > from ? present_.at(c) * (end - from) : 0.0);
  return area / (end - config_.warmup);
}

void Station::initialize() {
  for (std::size_t c = 0; c < config_.classes.size(); ++c) {
    const ClassSpec& k = config_.classes[c];
    if (k.route.front() != index()) continue;
    if (k.open()) {
      schedule(Message{.kind = source_kind(c)}, random_.exponential(1 / k.arrival_rate));
      continue;
    }
    for (int i = 0; i < k.population; ++i) {
      arrive({static_cast<std::int64_t>(c), static_cast<std::int64_t>(c) * 100000 + i, 0});
    }
  }
}

std::size_t Station::chosen() const {
  if (!spec_.priority) return 0;
  std::size_t best = 0;
  for (std::size_t i = 1; i < queue_.size(); ++i) {
    const auto priority = [&](std::size_t j) { return config_.classes[static_cast<std::size_t>(queue_[j].c)].priority; };
    if (priority(i) > priority(best)) best = i;
  }
  return best;
}

void Station::start_service() {
  serving_ = chosen();
  const Customer& head = queue_[serving_];
  double rate = 1;
  if (!spec_.rate.empty()) rate = spec_.rate[std::min(queue_.size(), spec_.rate.size()) - 1];
  service_epoch_ += 1;
  schedule(Message{.kind = head.c, .value = head.id, .real = service_epoch_},
           random_.exponential(mean_[static_cast<std::size_t>(head.c)] / rate));
}

void Station::arrive(const Customer& customer) {
  account();
  ++present_[static_cast<std::size_t>(customer.c)];
  if (spec_.delay) {
    schedule(Message{.kind = customer.c, .value = customer.id, .real = customer.entered},
             random_.exponential(spec_.mean_service));
    return;
  }
  queue_.push_back(customer);
  const std::size_t n = queue_.size();
  // A load-dependent server's rate changes with the number present: by the memoryless
  // property, the head's service restarts at the new rate (the pending end goes stale). At a
  // priority station an arrival of higher priority preempts; by the same property the
  // preempted customer's remaining service is drawn afresh when it resumes.
  if (n == 1 || (n <= spec_.rate.size() && spec_.rate[n - 1] != spec_.rate[n - 2]) ||
      (spec_.priority && config_.classes[static_cast<std::size_t>(customer.c)].priority >
                             config_.classes[static_cast<std::size_t>(queue_[serving_].c)].priority)) {
    start_service();
  }
}

void Station::depart(const Customer& customer) {
  const auto c = static_cast<std::size_t>(customer.c);
  if (!sink_[c]) {
    send(*next_[c], Message{.kind = customer.c, .value = customer.id, .real = customer.entered}, config_.transit);
  } else if (now() >= config_.warmup) {
    ++departures_[c];
    time_in_network_[c] += now() - customer.entered;
  }
}

void Station::handle(const Message& m) {
  if (config_.record) history_.push_back({m.time, m.source, m.kind * 1000000 + m.value});
  if (m.link != nullptr) {  // a customer arrives from another station
    arrive({m.kind, m.value, m.real});
    return;
  }
  if (m.kind < 0) {  // an open class's source: a customer arrives from outside, and the next is drawn
    const auto c = static_cast<std::size_t>(-1 - m.kind);
    arrive({static_cast<std::int64_t>(c), arrivals_[c]++, now()});
    schedule(Message{.kind = m.kind}, random_.exponential(1 / config_.classes[c].arrival_rate));
    return;
  }
  // A service (or a delay) ends: the customer leaves for its next station or the network.
  Customer customer{m.kind, m.value, m.real};
  if (!spec_.delay) {
    if (m.real != service_epoch_) return;  // restarted or preempted since
    customer = queue_[serving_];
    queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(serving_));
  }
  account();
  const auto c = static_cast<std::size_t>(customer.c);
  --present_[c];
  if (now() >= config_.warmup) ++completions_[c];
  depart(customer);
  if (!spec_.delay && !queue_.empty()) start_service();
}

void build_queueing_network(Simulation& sim, const QueueingNetworkConfig& config, std::vector<Station*>& stations) {
  stations.clear();
  for (const StationSpec& s : config.stations) {
    if (!(s.mean_service > 0) || (s.delay && !s.rate.empty()) || (s.priority && (s.delay || !s.rate.empty())) ||
        std::any_of(s.rate.begin(), s.rate.end(), [](double r) { return !(r > 0) || !std::isfinite(r); })) {
      throw UsageError("queueing network: station '" + s.name +
                       "' needs a positive mean service and at most one of delay, load-dependent rates (positive) "
                       "and priority");
    }
  }
  for (std::uint32_t k = 0; k < config.stations.size(); ++k) stations.push_back(&sim.add<Station>(config, k));
  for (std::size_t c = 0; c < config.classes.size(); ++c) {
    const ClassSpec& k = config.classes[c];
    const auto& route = k.route;
    std::vector<std::uint32_t> sorted = route;
    std::sort(sorted.begin(), sorted.end());
    if (route.size() < (k.open() ? 1u : 2u) || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end() ||
        sorted.back() >= stations.size()) {
      throw UsageError("queueing network: class '" + k.name + "' needs a route through " +
                       (k.open() ? "one or more" : "at least two") + " distinct, existing stations");
    }
    if (!k.service.empty() && (k.service.size() != route.size() ||
                               std::any_of(k.service.begin(), k.service.end(), [](double m) { return !(m > 0); }))) {
      throw UsageError("queueing network: class '" + k.name + "' needs one positive mean service per station of its route");
    }
    if (k.arrival_rate < 0 || !std::isfinite(k.arrival_rate) || (k.open() ? k.population != 0 : k.population < 0)) {
      throw UsageError("queueing network: class '" + k.name +
                       "' needs either a population >= 0 (closed) or a finite arrival rate > 0 and no population (open)");
    }
    const std::size_t links = k.open() ? route.size() - 1 : route.size();
    for (std::size_t i = 0; i < links; ++i) {
      Station& from = *stations[route[i]];
      Station& to = *stations[route[(i + 1) % route.size()]];
      Link* l = from.link_to(to);
      from.next_[c] = l != nullptr ? l : &sim.connect(from, to, config.transit);
    }
    if (k.open()) stations[route.back()]->sink_[c] = true;
  }
}

MvaModel mva_model(const QueueingNetworkConfig& config) {
  for (const auto& s : config.stations) {
    if (!s.rate.empty() || s.priority) {
      throw UsageError("mva_model: station '" + s.name + "' is " + (s.priority ? "a priority station" : "load-dependent"));
    }
  }
  MvaModel m;
  for (const auto& s : config.stations) m.delay_station.push_back(s.delay);
  for (const auto& k : config.classes) {
    if (k.open()) throw UsageError("mva_model: class '" + k.name + "' is open");
    std::vector<double> d(config.stations.size(), 0.0);
    for (std::size_t i = 0; i < k.route.size(); ++i) {
      d[k.route[i]] = k.service.empty() ? config.stations[k.route[i]].mean_service : k.service[i];
    }
    m.demand.push_back(d);
    m.population.push_back(k.population);
    m.think.push_back(config.transit * static_cast<double>(k.route.size()));
  }
  return m;
}

NetworkMeasures measure(const QueueingNetworkConfig& config, const std::vector<Station*>& stations, Time end) {
  NetworkMeasures r;
  const std::size_t C = config.classes.size();
  r.queue.assign(C, std::vector<double>(stations.size(), 0.0));
  for (std::size_t c = 0; c < C; ++c) {
    const ClassSpec& k = config.classes[c];
    const Station& counted = *stations[k.open() ? k.route.back() : k.route.front()];
    r.throughput.push_back(static_cast<double>(counted.completions(c)) / (end - config.warmup));
    r.response.push_back(k.open() && counted.departures(c) > 0
                             ? counted.time_in_network(c) / static_cast<double>(counted.departures(c))
                             : 0.0);
    for (std::size_t s = 0; s < stations.size(); ++s) r.queue[c][s] = stations[s]->mean_number(c, end);
  }
  return r;
}

}  // namespace presto::psim
