#pragma once
// A logger for RuntimeConfig::logger whose output a test reads back: what the runtime (or an
// extension through Runtime::logger()) logged, one message a line, at `level` and above.
// Never registered in spdlog's global registry. Declare it before the Runtime that logs to it
// (the runtime keeps the logger, whose sink writes to this object), and read text() after the
// runtime's run() has returned: the sink is thread-safe, the string it writes to is not read
// under its lock.

#include <memory>
#include <sstream>
#include <string>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

namespace presto::test {

class CapturedLog {
 public:
  explicit CapturedLog(std::string name, spdlog::level::level_enum level = spdlog::level::info)
      : logger_(std::make_shared<spdlog::logger>(std::move(name), std::make_shared<spdlog::sinks::ostream_sink_mt>(out_))) {
    logger_->set_level(level);
  }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  const std::shared_ptr<spdlog::logger>& logger() const noexcept { return logger_; }
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> logger_;
};

}  // namespace presto::test
