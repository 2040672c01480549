#pragma once
// Scope: a user-marked region for the Quartz profile. While a Scope lives, the running time of
// the thread that made it (and of threads it creates meanwhile, which inherit its profile
// stack) is charged to the scope's name, normalized by the number of busy threads:
//
//   { presto::instrument::Scope s{"multiply"}; ... }
//
// Nested scopes are all charged (inclusive weights; a name repeated directly counts once).
// On a thread that is not an InstrumentedThread a Scope does nothing. A Scope belongs to the
// thread that made it: destroy it on that thread, innermost first (as RAII does).

#include <cstdint>
#include <string_view>

namespace presto::instrument {

class InstrumentedThread;

class Scope {
 public:
  explicit Scope(std::string_view name);
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  ~Scope();

 private:
  InstrumentedThread* thread_ = nullptr;
  std::uint32_t entry_ = 0;
  bool pushed_ = false;
};

}  // namespace presto::instrument
