// presto-bank: a bank of account actors (open-environment paper, §5.2: "Tasks execute
// autonomously, communicating with one another via messages").
//
// Every account is a presto::actors::Task. Clients (presto threads) make random transfers:
// a synchronous call() withdraws from one account (refused if the balance is short), then an
// asynchronous send() deposits into the other. Meanwhile an auditor repeatedly asks every
// account for its ledger, which must be consistent every time. No lock appears anywhere: each account's state is guarded by the
// serial processing of its messages. At the end every account is stopped (draining its
// deposits) and the program checks that money was conserved: the sum of balances equals the
// opening total, each balance equals its opening balance plus what it received minus what it
// paid, and no balance ever went negative.

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <presto/actors/task.hpp>
#include <presto/runtime.hpp>
#include <presto/this_thread.hpp>

#include "command_line.hpp"

namespace {

struct Options {
  std::size_t accounts = 64;
  std::size_t clients = 16;
  std::size_t transfers = 20'000;  // per client
  std::size_t processors = 0;      // 0: all hardware threads
  unsigned seed = 1;
};

constexpr const char* usage =
      "usage: %s [--accounts A] [--clients C] [--transfers T] [--processors P] [--seed S]\n"
      "Runs C clients (default 16), each making T random transfers (default 20000) between A\n"
      "account actors (default 64) on P processors (default: all), then checks that no money\n"
      "was created or lost.\n";

bool parse(int argc, char** argv, Options& o) {
  presto::apps::CommandLine cl{usage};
  cl.option("--accounts", o.accounts).option("--clients", o.clients).option("--transfers", o.transfers);
  cl.processors(o.processors).option("--seed", o.seed);
  if (!cl.parse(argc, argv)) return false;
  if (o.accounts < 2) return cl.error("--accounts must be at least 2");
  return true;
}

struct Ledger {
  long balance = 0;
  long received = 0;
  long paid = 0;
  long refused = 0;
  bool ever_negative = false;
};

class Account : public presto::actors::Task {
 public:
  Account(std::size_t number, long opening) : Task("account " + std::to_string(number)), opening_(opening) {
    ledger_.balance = opening;
  }
  ~Account() override { stop(); }

  // Takes `amount` out if the balance allows; false (and nothing changes) otherwise.
  bool withdraw(long amount) {
    if (ledger_.balance < amount) {
      ++ledger_.refused;
      return false;
    }
    ledger_.balance -= amount;
    ledger_.paid += amount;
    ledger_.ever_negative = ledger_.ever_negative || ledger_.balance < 0;
    return true;
  }
  void deposit(long amount) {
    ledger_.balance += amount;
    ledger_.received += amount;
  }
  Ledger ledger() const { return ledger_; }
  long opening() const { return opening_; }

 private:
  const long opening_;
  Ledger ledger_;
};

struct Outcome {
  long opening_total = 0, closing_total = 0, moved = 0;
  std::size_t done = 0, refused = 0, audits = 0;
  bool balanced = true, never_negative = true, audits_consistent = true;
};

Outcome run_bank(const Options& o) {
  Outcome out;
  std::vector<std::unique_ptr<Account>> accounts;  // tasks do not move: hold them by pointer
  for (std::size_t i = 0; i < o.accounts; ++i) {
    const long opening = 1000 + static_cast<long>(i % 7) * 100;
    accounts.push_back(std::make_unique<Account>(i, opening));
    out.opening_total += opening;
  }
  std::atomic<std::size_t> done{0}, refused{0};
  std::atomic<long> moved{0};
  std::vector<presto::JoinHandle<void>> clients;
  for (std::size_t c = 0; c < o.clients; ++c) {
    clients.push_back(presto::fork([&, c] {
      std::mt19937 gen(o.seed * 7919u + static_cast<unsigned>(c));
      std::uniform_int_distribution<std::size_t> pick(0, o.accounts - 1);
      std::uniform_int_distribution<long> amount(1, 300);
      for (std::size_t t = 0; t < o.transfers; ++t) {
        const std::size_t from = pick(gen);
        std::size_t to = pick(gen);
        if (to == from) to = (to + 1) % o.accounts;
        const long a = amount(gen);
        if (accounts[from]->call(&Account::withdraw, a)) {
          accounts[to]->send(&Account::deposit, a);
          ++done;
          moved += a;
        } else {
          ++refused;
        }
      }
    }));
  }
  // The auditor: while money moves, every ledger it reads must be consistent on its own (each
  // call() sees an account between two operations, never in the middle of one).
  std::atomic<bool> clients_done{false};
  auto auditor = presto::fork([&] {
    std::size_t audits = 0;
    bool consistent = true;
    while (!clients_done.load()) {
      for (auto& a : accounts) {
        const Ledger l = a->call(&Account::ledger);
        consistent = consistent && l.balance == a->opening() + l.received - l.paid && l.balance >= 0;
      }
      ++audits;
      presto::this_thread::yield();  // hand-off calls never block: let the clients run
    }
    return std::pair{audits, consistent};
  });
  for (auto& c : clients) c.join();
  clients_done = true;
  auto [audits, consistent] = auditor.join();
  for (auto& a : accounts) a->stop();  // drains the deposits still queued
  for (auto& a : accounts) {
    const Ledger l = a->ledger();  // stopped: no operation can run any more
    out.closing_total += l.balance;
    out.balanced = out.balanced && l.balance == a->opening() + l.received - l.paid;
    out.never_negative = out.never_negative && !l.ever_negative && l.balance >= 0;
  }
  out.done = done;
  out.refused = refused;
  out.moved = moved;
  out.audits = audits;
  out.audits_consistent = consistent;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  presto::Runtime rt{{.processors = o.processors, .seed = o.seed}};
  const auto t0 = std::chrono::steady_clock::now();
  const Outcome out = rt.run([&] { return run_bank(o); });
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("PRESTO bank: %zu account actors, %zu clients x %zu transfers, %zu processor(s), seed %u\n",
              o.accounts, o.clients, o.transfers, rt.processors(), o.seed);
  std::printf("transfers: %zu done (%ld moved), %zu refused for want of funds; %zu audits; %.2f ms\n", out.done,
              out.moved, out.refused, out.audits, ms);
  const bool ok = out.closing_total == out.opening_total && out.balanced && out.never_negative &&
                  out.audits_consistent && out.done + out.refused == o.clients * o.transfers;
  std::printf("check: opening total %ld, closing total %ld; every ledger balances: %s; no balance below zero: %s;"
              " every audited ledger consistent: %s -> %s\n",
              out.opening_total, out.closing_total, out.balanced ? "yes" : "NO", out.never_negative ? "yes" : "NO",
              out.audits_consistent ? "yes" : "NO", ok ? "conserved" : "WRONG");
  return ok ? 0 : 1;
}
