#include <presto/psim/queueing_network.hpp>

#include <algorithm>

#include <presto/errors.hpp>

namespace presto::psim {

Station::Station(const QueueingNetworkConfig& config, std::uint32_t index)
    : LogicalProcess(config.stations.at(index).name),
      config_(config),
      spec_(config.stations.at(index)),
      random_(config.seed, index),
      next_(config.classes.size(), nullptr),
      present_(config.classes.size(), 0),
      area_(config.classes.size(), 0.0),
      completions_(config.classes.size(), 0) {}

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
    for (int i = 0; i < k.population; ++i) arrive(static_cast<std::int64_t>(c), static_cast<std::int64_t>(c) * 100000 + i);
  }
}

void Station::arrive(std::int64_t c, std::int64_t customer) {
  account();
  ++present_[static_cast<std::size_t>(c)];
  if (spec_.delay) {
    schedule(Message{.kind = c, .value = customer}, random_.exponential(spec_.mean_service));
    return;
  }
  queue_.emplace_back(c, customer);
  if (queue_.size() == 1) schedule(Message{.kind = c, .value = customer}, random_.exponential(spec_.mean_service));
}

void Station::handle(const Message& m) {
  if (config_.record) history_.push_back({m.time, m.source, m.kind * 1000000 + m.value});
  if (m.link != nullptr) {  // a customer arrives
    arrive(m.kind, m.value);
    return;
  }
  // A service (or a delay) ends: the customer leaves for its next station.
  account();
  const auto c = static_cast<std::size_t>(m.kind);
  --present_[c];
  if (now() >= config_.warmup) ++completions_[c];
  send(*next_[c], Message{.kind = m.kind, .value = m.value}, config_.transit);
  if (spec_.delay) return;
  queue_.pop_front();
  if (!queue_.empty()) {
    schedule(Message{.kind = queue_.front().first, .value = queue_.front().second},
             random_.exponential(spec_.mean_service));
  }
}

void build_queueing_network(Simulation& sim, const QueueingNetworkConfig& config, std::vector<Station*>& stations) {
  stations.clear();
  for (std::uint32_t k = 0; k < config.stations.size(); ++k) stations.push_back(&sim.add<Station>(config, k));
  for (std::size_t c = 0; c < config.classes.size(); ++c) {
    const auto& route = config.classes[c].route;
    std::vector<std::uint32_t> sorted = route;
    std::sort(sorted.begin(), sorted.end());
    if (route.size() < 2 || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end() ||
        sorted.back() >= stations.size()) {
      throw UsageError("queueing network: class '" + config.classes[c].name +
                       "' needs a route through at least two distinct, existing stations");
    }
    for (std::size_t i = 0; i < route.size(); ++i) {
      Station& from = *stations[route[i]];
      Station& to = *stations[route[(i + 1) % route.size()]];
      Link* l = from.link_to(to);
      from.next_[c] = l != nullptr ? l : &sim.connect(from, to, config.transit);
    }
  }
}

MvaModel mva_model(const QueueingNetworkConfig& config) {
  MvaModel m;
  for (const auto& s : config.stations) m.delay_station.push_back(s.delay);
  for (const auto& k : config.classes) {
    std::vector<double> d(config.stations.size(), 0.0);
    for (auto s : k.route) d[s] = config.stations[s].mean_service;
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
    r.throughput.push_back(static_cast<double>(stations[config.classes[c].route.front()]->completions(c)) /
                           (end - config.warmup));
    for (std::size_t k = 0; k < stations.size(); ++k) r.queue[c][k] = stations[k]->mean_number(c, end);
  }
  return r;
}

}  // namespace presto::psim
