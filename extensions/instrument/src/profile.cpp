#include <presto/instrument/profile.hpp>

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include <presto/instrument/bounds.hpp>

namespace presto::instrument {

namespace {

void add(std::string& out, const char* format, ...) __attribute__((format(printf, 2, 3)));
void add(std::string& out, const char* format, ...) {
  char buf[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  out += buf;
}

double ms(Nanos ns) { return static_cast<double>(ns) / 1e6; }
double ms(double ns) { return ns / 1e6; }
double percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0; }

std::string clip(const std::string& s, std::size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 3) + "...";
}

}  // namespace

std::string format_report(const Profile& p, std::size_t max_threads) {
  std::string out;
  add(out, "PRESTO instrument report: %llu thread(s) finished on %zu processor(s), elapsed %.3f ms\n",
      static_cast<unsigned long long>(p.threads), p.processors, ms(p.elapsed));

  const double a = p.parallelism.average();
  add(out, "\nParallelism%s: work %.3f ms, longest path %.3f ms, average parallelism A = %.2f\n",
      p.parallelism.cpu_time ? " (CPU time)" : "", ms(p.parallelism.work), ms(p.parallelism.span), a);
  add(out, "  bounds for n processors (Eager, Zahorjan, Lazowska):\n");
  add(out, "  %4s %22s %22s\n", "n", "speed-up in", "efficiency in");
  const std::size_t top = std::max<std::size_t>(4, 2 * p.processors);
  for (std::size_t n = 1; n <= top; n *= 2) {
    const Bounds b = bounds(static_cast<double>(n), std::max(1.0, a));
    add(out, "  %4zu    [%7.2f, %7.2f]    [%7.2f, %7.2f]\n", n, b.speedup_lower, b.speedup_upper,
        b.efficiency_lower, b.efficiency_upper);
  }

  std::vector<const ThreadRecord*> threads;
  for (const ThreadRecord& t : p.thread_records) threads.push_back(&t);
  std::stable_sort(threads.begin(), threads.end(),
                   [](const ThreadRecord* x, const ThreadRecord* y) { return x->blocked_share() > y->blocked_share(); });
  add(out, "\nThreads, most blocked first (times in ms; lifetime = running + ready + blocked):\n");
  add(out, "  %-28s %7s %10s %10s %10s %10s %8s  %s\n", "thread", "count", "lifetime", "running", "ready", "blocked",
      "blocked%", "blocked mostly on");
  for (std::size_t i = 0; i < threads.size() && i < max_threads; ++i) {
    const ThreadRecord& t = *threads[i];
    std::string on = t.blocked_on.empty() ? "-" : t.blocked_on.front().object;
    add(out, "  %-28s %7llu %10.3f %10.3f %10.3f %10.3f %7.1f%%  %s\n", clip(t.name, 28).c_str(),
        static_cast<unsigned long long>(t.threads), ms(t.lifetime), ms(t.running), ms(t.ready), ms(t.blocked),
        100 * t.blocked_share(), clip(on, 40).c_str());
  }
  if (threads.size() > max_threads) add(out, "  ... %zu more line(s)\n", threads.size() - max_threads);

  add(out, "\nObjects, most waited on first (times in ms):\n");
  add(out, "  %-36s %9s %10s %11s %10s %11s %10s %10s\n", "object", "waits", "blocked", "acquisitions", "contended",
      "acq. wait", "avg wait", "avg hold");
  for (const ObjectRecord& o : p.objects) {
    const double avg_wait = o.contended > 0 ? ms(o.acquire_wait) / static_cast<double>(o.contended) : 0;
    const double avg_hold = o.acquisitions > 0 ? ms(o.held) / static_cast<double>(o.acquisitions) : 0;
    add(out, "  %-36s %9llu %10.3f %11llu %9.1f%% %11.3f %10.4f %10.4f\n", clip(o.object, 36).c_str(),
        static_cast<unsigned long long>(o.waits), ms(o.blocked), static_cast<unsigned long long>(o.acquisitions),
        100 * o.contention(), ms(o.acquire_wait), avg_wait, avg_hold);
  }

  add(out, "\nQuartz profile: normalized processor time (time / busy threads), heaviest first:\n");
  add(out, "  %-36s %12s %10s %16s\n", "entry", "weight (ms)", "% elapsed", "processor (ms)");
  for (const ProfileEntry& e : p.quartz) {
    add(out, "  %-36s %12.3f %9.1f%% %16.3f\n", clip(e.name, 36).c_str(), ms(e.weight),
        percent(e.weight, static_cast<double>(p.elapsed)), ms(e.processor_time));
  }
  return out;
}

}  // namespace presto::instrument
