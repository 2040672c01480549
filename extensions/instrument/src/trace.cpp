// Recorder::write_trace: the Chrome Trace Event JSON file (format in recorder.hpp).

#include <presto/instrument/recorder.hpp>

#include <cerrno>
#include <cstdio>
#include <string>
#include <unordered_set>

namespace presto::instrument {

namespace {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Microseconds, with nanosecond precision.
std::string micros(Nanos ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ns) / 1000.0);
  return buf;
}

}  // namespace

void Recorder::write_trace(std::ostream& out) const {
  std::lock_guard lock(mutex_);
  const Nanos epoch_raw = epoch_.load(std::memory_order_relaxed);
  const Nanos epoch = epoch_raw == kUnset ? 0 : epoch_raw;
  std::size_t lanes = processors_.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < kMaxLanes; ++i) {
    if (lanes_[i].load(std::memory_order_acquire) != nullptr) lanes = std::max(lanes, i + 1);
  }
  // Wake-ups whose thread has not run since are left out: every arrow has both ends.
  std::unordered_set<std::uint64_t> arrived;
  for (std::size_t i = 0; i < lanes; ++i) {
    if (const Lane* l = lanes_[i].load(std::memory_order_acquire)) {
      for (const Slice& s : l->slices) {
        if (s.flow_in != 0) arrived.insert(s.flow_in);
      }
    }
  }
  out << "{\"traceEvents\":[\n";
  out << R"({"ph":"M","name":"process_name","pid":1,"args":{"name":"presto runtime"}})";
  for (std::size_t i = 0; i < lanes; ++i) {
    out << ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":" << i
        << ",\"args\":{\"name\":\"processor " << i << "\"}}";
  }
  for (std::size_t i = 0; i < lanes; ++i) {
    const Lane* l = lanes_[i].load(std::memory_order_acquire);
    if (l == nullptr) continue;
    for (const Slice& s : l->slices) {
      auto named = names_.find(s.thread);
      const std::string name = named != names_.end() ? named->second : "thread " + std::to_string(s.thread);
      out << ",\n{\"ph\":\"X\",\"name\":" << json_string(name) << ",\"cat\":\"run\",\"pid\":1,\"tid\":" << i
          << ",\"ts\":" << micros(s.start - epoch) << ",\"dur\":" << micros(s.end - s.start)
          << ",\"args\":{\"thread\":" << s.thread << "}}";
      if (s.flow_in != 0) {
        out << ",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"wakeup\",\"name\":\"wakeup\",\"id\":" << s.flow_in
            << ",\"pid\":1,\"tid\":" << i << ",\"ts\":" << micros(s.start - epoch) << "}";
      }
    }
    for (const Flow& f : l->flows) {
      if (!arrived.contains(f.id)) continue;
      out << ",\n{\"ph\":\"s\",\"cat\":\"wakeup\",\"name\":\"wakeup\",\"id\":" << f.id << ",\"pid\":1,\"tid\":" << i
          << ",\"ts\":" << micros(f.at - epoch) << "}";
    }
  }
  out << "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"program\":" << json_string(program_invocation_short_name)
      << ",\"processors\":" << lanes << "}}\n";
}

}  // namespace presto::instrument
