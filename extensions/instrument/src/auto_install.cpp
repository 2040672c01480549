// PRESTO_TRACE / PRESTO_PROFILE (with PRESTO_CPU_TIME=1: RecorderOptions::cpu_time): a
// runtime configurer, registered when the program starts, that gives every runtime without a
// thread prototype of its own an InstrumentedThread prototype and a Recorder writing the files
// the variables name when the runtime is destroyed. It declares that it serves both variables,
// so the core does not warn that they are ignored. The registration must reach the program:
// this project links the static library whole, presto-instrument.pc links the shared one with
// --no-as-needed, and LD_PRELOAD=libpresto-instrument.so brings it to any PRESTO program.

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <presto/instrument/instrumented_thread.hpp>
#include <presto/runtime.hpp>

namespace presto::instrument {

namespace {

// The first runtime writes `path`, later ones `path.1`, `path.2`, ...
std::string numbered(const char* path, unsigned n) {
  if (path == nullptr || *path == '\0') return {};
  std::string p = path;
  if (n == 0 || p == "-") return p;
  return p + "." + std::to_string(n);
}

void configure(RuntimeConfig& config) {
  const char* trace = std::getenv("PRESTO_TRACE");
  const char* report = std::getenv("PRESTO_PROFILE");
  if ((trace == nullptr || *trace == '\0') && (report == nullptr || *report == '\0')) return;
  if (config.thread_prototype) {
    std::fputs("presto::instrument: this runtime has its own thread prototype; PRESTO_TRACE/PRESTO_PROFILE "
               "ignored for it\n",
               stderr);
    return;
  }
  static std::atomic<unsigned> runtimes{0};
  const unsigned n = runtimes.fetch_add(1);
  RecorderOptions options;
  options.trace_path = numbered(trace, n);
  options.report_path = numbered(report, n);
  const char* cpu = std::getenv("PRESTO_CPU_TIME");
  options.cpu_time = cpu != nullptr && *cpu != '\0' && *cpu != '0';
  config.thread_prototype = std::make_unique<InstrumentedThread>(std::make_shared<Recorder>(std::move(options)));
}

[[maybe_unused]] const bool registered = (add_runtime_configurer(&configure, {"PRESTO_TRACE", "PRESTO_PROFILE"}), true);

}  // namespace

}  // namespace presto::instrument
