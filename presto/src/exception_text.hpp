#pragma once
// What an exception says, for log messages about exceptions nobody received.

#include <exception>
#include <string>

namespace presto::detail {

inline std::string exception_text(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

}  // namespace presto::detail
