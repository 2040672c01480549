#include <presto/locks/locks.hpp>

#include <array>

namespace presto::locks {

namespace {
constexpr std::array<SpinlockKind, 9> kKinds{{
    {"tas", false},
    {"ttas", false},
    {"ttas-static", false},
    {"ttas-exp", false},
    {"ticket", true},
    {"anderson", true},
    {"mcs", true},
    {"clh", true},
    {"presto", false},
}};
}  // namespace

std::span<const SpinlockKind> spinlock_kinds() noexcept { return kKinds; }

std::unique_ptr<Spinlock> make_spinlock(std::string_view name) {
  if (name == "tas") return std::make_unique<TasLock>();
  if (name == "ttas") return std::make_unique<TtasLock>();
  if (name == "ttas-static") return std::make_unique<TtasStaticBackoffLock>();
  if (name == "ttas-exp") return std::make_unique<TtasExponentialBackoffLock>();
  if (name == "ticket") return std::make_unique<TicketLock>();
  if (name == "anderson") return std::make_unique<AndersonLock>();
  if (name == "mcs") return std::make_unique<McsLock>();
  if (name == "clh") return std::make_unique<ClhLock>();
  if (name == "presto") return std::make_unique<Spinlock>();
  return nullptr;
}

}  // namespace presto::locks
