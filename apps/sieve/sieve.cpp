// presto-sieve: Joyce's parallel prime sieve (Brinch Hansen 1987), on presto::channels.
//
// A generator sends 2, 3, ..., N down a pipeline of sieve agents. The first number a sieve
// receives is its prime: it reports it, then forwards every later number it is not a multiple
// of to the next sieve, which it activates when it first has something to forward. When the
// generator closes its channel, each sieve closes its successor's channel and waits for it, so
// the first sieve finishes last and closes the report channel. One agent per prime: 1229
// threads for N = 10000.
//
// The primes are checked against a sequential sieve of Eratosthenes. As the Joyce paper
// warns, the pipeline is algorithm-limited (every number passes through every smaller prime's
// agent), so it is an app, not a benchmark of the runtime.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <presto/channels/channels.hpp>
#include <presto/presto.hpp>

#include "command_line.hpp"

namespace {

using presto::channels::BufferedChannel;
using presto::channels::Channel;

struct Options {
  long limit = 10000;
  std::size_t processors = 0;  // 0: all hardware threads
  std::size_t buffer = 0;      // 0: rendezvous channels between sieves
};

constexpr const char* usage =
      "usage: %s [--limit N] [--processors P] [--buffer B]\n"
      "Finds the primes up to N (default 10000) with a pipeline of one sieve agent per prime on P\n"
      "processors (default: all), over rendezvous channels or, with B > 0, channels buffering B\n"
      "numbers; checks them against a sequential sieve and prints their count and the largest.\n";

bool parse(int argc, char** argv, Options& o) {
  presto::apps::CommandLine cl{usage};
  cl.option("--limit", o.limit).processors(o.processors).option("--buffer", o.buffer);
  if (!cl.parse(argc, argv)) return false;
  if (o.limit < 2) throw std::invalid_argument("--limit must be at least 2");
  return true;
}

std::unique_ptr<Channel<long>> make_channel(std::size_t buffer, const std::string& name) {
  if (buffer == 0) return std::make_unique<Channel<long>>(name);
  return std::make_unique<BufferedChannel<long>>(buffer, name);
}

// SIEVE(in, out): the first number is the prime; forward the others it does not divide.
void sieve(Channel<long>& in, Channel<long>& primes, std::size_t buffer) {
  std::optional<long> first = in.recv();
  if (!first) return;
  const long prime = *first;
  primes.send(prime);
  std::unique_ptr<Channel<long>> next;
  presto::JoinHandle<void> successor;
  while (std::optional<long> x = in.recv()) {
    if (*x % prime == 0) continue;
    if (!next) {
      next = make_channel(buffer, "after " + std::to_string(prime));
      successor = presto::fork(sieve, std::ref(*next), std::ref(primes), buffer);
    }
    next->send(*x);
  }
  if (next) {
    next->close();
    successor.join();
  }
}

std::vector<long> sequential_primes(long limit) {
  std::vector<bool> composite(static_cast<std::size_t>(limit) + 1, false);
  std::vector<long> primes;
  for (long i = 2; i <= limit; ++i) {
    if (composite[static_cast<std::size_t>(i)]) continue;
    primes.push_back(i);
    for (long j = i * i; j <= limit; j += i) composite[static_cast<std::size_t>(j)] = true;
  }
  return primes;
}

}  // namespace

int main(int argc, char** argv) try {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  presto::Runtime rt{{.processors = o.processors}};
  auto start = std::chrono::steady_clock::now();
  std::vector<long> found = rt.run([&] {
    auto numbers = make_channel(o.buffer, "numbers");
    Channel<long> primes{"primes"};
    auto generator = presto::fork([&] {
      for (long i = 2; i <= o.limit; ++i) numbers->send(i);
      numbers->close();
    });
    auto first = presto::fork([&] {
      sieve(*numbers, primes, o.buffer);
      primes.close();  // the whole pipeline has finished
    });
    std::vector<long> got;
    while (std::optional<long> p = primes.recv()) got.push_back(*p);
    generator.join();
    first.join();
    return got;
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::vector<long> expected = sequential_primes(o.limit);
  const bool ok = found == expected;
  std::printf("primes up to %ld: %zu, the largest %ld (%zu sieve agents on %zu processors, %s channels, %.3f s)\n",
              o.limit, found.size(), found.empty() ? 0L : found.back(), found.size(), rt.processors(),
              o.buffer == 0 ? "rendezvous" : ("buffered(" + std::to_string(o.buffer) + ")").c_str(), seconds);
  std::printf("check against a sequential sieve of Eratosthenes (%zu primes): %s\n", expected.size(),
              ok ? "identical" : "DIFFERENT");
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "presto-sieve: %s\n", e.what());
  return 1;
}
