// Recorder::write_trace: the Chrome Trace Event JSON file (format in recorder.hpp).

#include <presto/instrument/recorder.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <string>
#include <unordered_set>

namespace presto::instrument {

namespace {

// The length of the well-formed UTF-8 sequence `s` starts with (1 for ASCII), or 0 if its
// first byte starts none (a stray continuation byte, an overlong form, a surrogate, a code
// point above U+10FFFF, a truncated sequence): Unicode's Table 3-7.
std::size_t utf8_sequence(std::string_view s) noexcept {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (s.size() < n || b(1) < lo || b(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i) {
    if (b(i) < 0x80 || b(i) > 0xbf) return 0;
  }
  return n;
}

// Appends JSON text to a buffer flushed to the stream in large writes: a trace has an event per
// running interval, and formatting through iostreams cost several thousand instructions each.
class Writer {
 public:
  explicit Writer(std::ostream& out) : out_(out) { buf_.reserve(kFlushAt + 4096); }
  ~Writer() { flush(); }
  Writer& raw(std::string_view s) {
    buf_ += s;
    if (buf_.size() >= kFlushAt) flush();
    return *this;
  }
  Writer& integer(std::uint64_t v) {
    char digits[24];
    auto end = std::to_chars(digits, digits + sizeof digits, v).ptr;
    return raw(std::string_view(digits, static_cast<std::size_t>(end - digits)));
  }
  // Nanoseconds as microseconds with three decimals (exact).
  Writer& micros(Nanos ns) {
    if (ns < 0) {
      raw("-");
      ns = -ns;
    }
    integer(static_cast<std::uint64_t>(ns / 1000));
    const auto frac = static_cast<unsigned>(ns % 1000);
    const char f[4] = {'.', char('0' + frac / 100), char('0' + frac / 10 % 10), char('0' + frac % 10)};
    return raw(std::string_view(f, 4));
  }
  // A JSON string: quotes, backslashes and control characters escaped; well-formed UTF-8
  // copied; every byte that does not start a well-formed UTF-8 sequence (thread names are
  // the program's bytes) replaced by U+FFFD, so the trace is always valid JSON.
  Writer& string(std::string_view s) {
    raw("\"");
    for (std::size_t i = 0; i < s.size();) {
      const std::size_t n = utf8_sequence(s.substr(i));
      if (n != 1) {  // a multi-byte character, copied, or a bad byte, replaced
        raw(n == 0 ? std::string_view("\\ufffd") : s.substr(i, n));
        i += std::max<std::size_t>(n, 1);
        continue;
      }
      const char c = s[i++];
      switch (c) {
        case '"': raw("\\\""); break;
        case '\\': raw("\\\\"); break;
        case '\n': raw("\\n"); break;
        case '\t': raw("\\t"); break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(c));
            raw(esc);
          } else {
            buf_ += c;
          }
      }
    }
    return raw("\"");
  }
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  static constexpr std::size_t kFlushAt = 1 << 16;
  std::ostream& out_;
  std::string buf_;
};

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
  Writer w(out);
  w.raw("{\"traceEvents\":[");
  for (std::size_t i = 0; i < lanes; ++i) {
    w.raw(i == 0 ? "\n" : ",\n").raw("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":").integer(i);
    w.raw(",\"args\":{\"name\":\"processor ").integer(i).raw("\"}}");
  }
  for (std::size_t i = 0; i < lanes; ++i) {
    const Lane* l = lanes_[i].load(std::memory_order_acquire);
    if (l == nullptr) continue;
    for (const Slice& s : l->slices) {
      w.raw(",\n{\"ph\":\"X\",\"name\":");
      if (auto named = names_.find(s.thread); named != names_.end()) {
        w.string(named->second);
      } else {
        w.raw("\"thread ").integer(s.thread).raw("\"");
      }
      w.raw(",\"cat\":\"run\",\"pid\":1,\"tid\":").integer(i);
      w.raw(",\"ts\":").micros(s.start - epoch).raw(",\"dur\":").micros(s.end - s.start);
      w.raw(",\"args\":{\"thread\":").integer(s.thread).raw("}}");
      if (s.flow_in != 0) {
        w.raw(",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"wakeup\",\"name\":\"wakeup\",\"id\":").integer(s.flow_in);
        w.raw(",\"pid\":1,\"tid\":").integer(i).raw(",\"ts\":").micros(s.start - epoch).raw("}");
      }
    }
    for (const Flow& f : l->flows) {
      if (!arrived.contains(f.id)) continue;
      w.raw(",\n{\"ph\":\"s\",\"cat\":\"wakeup\",\"name\":\"wakeup\",\"id\":").integer(f.id);
      w.raw(",\"pid\":1,\"tid\":").integer(i).raw(",\"ts\":").micros(f.at - epoch).raw("}");
    }
  }
  w.raw("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"program\":").string(program_invocation_short_name);
  w.raw(",\"processors\":").integer(lanes).raw("}}\n");
}

}  // namespace presto::instrument
