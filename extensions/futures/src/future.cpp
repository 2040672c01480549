#include <presto/futures/future.hpp>

#include <cstdio>
#include <exception>
#include <string>

#include <spdlog/spdlog.h>

#include <presto/errors.hpp>

namespace presto::futures::detail {

void report_unobserved(const Thread& future, const std::exception_ptr& error) noexcept {
  try {
    const std::string message = future.describe() + " was destroyed without get(); its exception is lost: " +
                                exception_text(error);
    if (Runtime* rt = future.runtime(); rt != nullptr) {
      rt->logger().warn("{}", message);
    } else {
      std::fputs(("presto: " + message + "\n").c_str(), stderr);
    }
  } catch (...) {
    std::fputs("presto: a future was destroyed without get(); its exception is lost\n", stderr);
  }
}

void throw_self_get(const Thread& future) {
  throw UsageError(future.describe() + " called get() on itself: a future's computation cannot wait for its own value");
}

}  // namespace presto::futures::detail
