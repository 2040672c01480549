#include <presto/main.hpp>

namespace presto {

int Main::run() {
  if (int status = init(); status != 0) return status;
  Runtime rt{std::move(config)};
  struct Bind {
    Runtime*& slot;
    ~Bind() { slot = nullptr; }
  } bind{runtime_ = &rt};
  int status = rt.run([this] { return main(); });
  return done(status);
}

Runtime& Main::runtime() const {
  if (runtime_ == nullptr) throw UsageError("Main::runtime() is only available in main() and done()");
  return *runtime_;
}

}  // namespace presto
