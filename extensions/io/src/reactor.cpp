#include "reactor.hpp"

#include <cerrno>
#include <cstdio>
#include <mutex>
#include <system_error>
#include <typeinfo>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <presto/errors.hpp>
#include <presto/thread.hpp>
#include <presto/thread_queue.hpp>

namespace presto::io::detail {

namespace {
constexpr std::uint64_t kWakeKey = ~std::uint64_t{0};
constexpr int kBatch = 256;

std::string waiters_name(int fd, Direction d) {
  return "fd " + std::to_string(fd) + (d == Direction::read ? " readable" : " writable");
}
}  // namespace

FdWaiters::FdWaiters(int fd, Direction d) : SynchroObject(waiters_name(fd, d)), fd_(fd) {}

std::string FdWaiters::describe() const {
  return std::string(operation.load(std::memory_order_relaxed)) + " on fd " + std::to_string(fd_);
}

Reactor::Reactor(Runtime& rt) : runtime_(rt), chunks_(new std::atomic<Chunk*>[kChunks]) {
  for (std::size_t i = 0; i < kChunks; ++i) chunks_[i].store(nullptr, std::memory_order_relaxed);
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_ < 0) throw std::system_error(errno, std::generic_category(), "presto::io: epoll_create1");
  event_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (event_ < 0) {
    const int e = errno;
    ::close(epoll_);
    throw std::system_error(e, std::generic_category(), "presto::io: eventfd");
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeKey;
  if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, event_, &ev) != 0) {
    const int e = errno;
    ::close(event_);
    ::close(epoll_);
    throw std::system_error(e, std::generic_category(), "presto::io: epoll_ctl(eventfd)");
  }
  backstop_ = std::thread([this] { backstop(); });
}

Reactor::~Reactor() {
  {
    std::lock_guard lock(backstop_mutex_);
    stopping_ = true;
  }
  backstop_stop_.notify_all();
  backstop_.join();
  for_each_state([](FdState& s) { delete &s; });
  for (std::size_t i = 0; i < kChunks; ++i) delete chunks_[i].load(std::memory_order_acquire);
  ::close(event_);
  ::close(epoll_);
}

Reactor& Reactor::of(Runtime& rt) {
  IdlePoller* p = rt.idle_poller();
  if (p == nullptr) p = &rt.install_idle_poller(std::make_unique<Reactor>(rt));
  if (typeid(*p) != typeid(Reactor)) {
    throw UsageError("presto::io: runtime '" + rt.name() + "' has an IdlePoller that is not presto::io's reactor (" +
                     typeid(*p).name() + ")");
  }
  return static_cast<Reactor&>(*p);
}

FdState& Reactor::state(int fd) {
  if (fd < 0 || fd > kMaxFd) {
    throw UsageError("presto::io: file descriptor " + std::to_string(fd) + " is out of range (0.." +
                     std::to_string(kMaxFd) + ")");
  }
  const auto i = static_cast<std::size_t>(fd);
  std::atomic<Chunk*>& chunk_slot = chunks_[i >> kChunkBits];
  Chunk* chunk = chunk_slot.load(std::memory_order_acquire);
  if (chunk == nullptr) [[unlikely]] {
    auto fresh = std::make_unique<Chunk>();
    if (chunk_slot.compare_exchange_strong(chunk, fresh.get(), std::memory_order_acq_rel)) chunk = fresh.release();
  }
  std::atomic<FdState*>& slot = chunk->slots[i & (kChunk - 1)];
  FdState* s = slot.load(std::memory_order_acquire);
  if (s == nullptr) [[unlikely]] {
    auto fresh = std::make_unique<FdState>(fd);
    if (slot.compare_exchange_strong(s, fresh.get(), std::memory_order_acq_rel)) s = fresh.release();
  }
  return *s;
}

bool Reactor::arm(int fd, FdState& s) {
  std::lock_guard lock(s.arm_lock);
  epoll_event ev{};
  ev.events = EPOLLONESHOT | EPOLLRDHUP;
  if (s.readers.count.load(std::memory_order_relaxed) != 0) ev.events |= EPOLLIN;
  if (s.writers.count.load(std::memory_order_relaxed) != 0) ev.events |= EPOLLOUT;
  if ((ev.events & (EPOLLIN | EPOLLOUT)) == 0) return true;  // nobody waits any more
  ev.data.u64 = static_cast<std::uint64_t>(fd);
  if (::epoll_ctl(epoll_, EPOLL_CTL_MOD, fd, &ev) == 0) return true;
  if (errno == ENOENT && ::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev) == 0) return true;
  if (errno == EPERM) return false;  // a regular file or a directory: always ready
  throw std::system_error(errno, std::generic_category(), "presto::io: epoll_ctl on fd " + std::to_string(fd));
}

Reactor::Outcome Reactor::wait(int fd, FdState& s, Direction d, std::uint32_t generation, Clock::time_point deadline,
                               const StopToken& token, const char* operation) {
  FdWaiters& w = s.waiters(d);
  CancellableWait cancellable{w, token};  // before the spinlock (its contract)
  w.spin_lock();
  if (s.generation.load(std::memory_order_relaxed) != generation) {
    w.spin_unlock();
    return Outcome::closed;
  }
  w.operation.store(operation, std::memory_order_relaxed);
  w.count.fetch_add(1, std::memory_order_relaxed);
  waiting_.fetch_add(1, std::memory_order_seq_cst);
  auto unwait = [&] {
    w.count.fetch_sub(1, std::memory_order_relaxed);
    waiting_.fetch_sub(1, std::memory_order_seq_cst);
  };
  bool armed;
  try {
    armed = arm(fd, s);
  } catch (...) {
    unwait();
    w.spin_unlock();
    throw;
  }
  if (!armed) {
    unwait();
    w.spin_unlock();
    return Outcome::ready;
  }
  // Sleeps; the waker (dispatch, close) recalls it, lowers count, wakes it, then lowers waiting_.
  const WaitStatus status = deadline == Clock::time_point::max() ? cancellable.block() : cancellable.block_until(deadline);
  if (status != WaitStatus::woken) {
    // The timer or the stop took it off the queue: the counts are this thread's to lower.
    w.spin_lock();
    unwait();
    w.spin_unlock();
    if (status == WaitStatus::cancelled) cancellable.throw_cancelled("waiting");  // "waiting on read on fd 7 by ..."
    return Outcome::timed_out;
  }
  return s.generation.load(std::memory_order_acquire) != generation ? Outcome::closed : Outcome::ready;
}

std::size_t Reactor::wake_all(FdWaiters& w) {
  ThreadQueue woken;
  w.spin_lock();
  std::size_t n = 0;
  while (Thread* t = w.recall()) {
    woken.push_back(*t);
    ++n;
  }
  w.count.fetch_sub(static_cast<std::uint32_t>(n), std::memory_order_relaxed);
  w.spin_unlock();
  w.wakeup_all(woken);
  return n;
}

void Reactor::dispatch(int fd, std::uint32_t events) noexcept {
  FdState& s = state(fd);  // made before it was armed: never throws here
  std::size_t woken = 0;
  try {
    if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) woken += wake_all(s.readers);
    if ((events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) != 0) woken += wake_all(s.writers);
    // The event disarmed the descriptor: re-arm it for the direction still waiting.
    if (s.readers.count.load(std::memory_order_relaxed) + s.writers.count.load(std::memory_order_relaxed) != 0) {
      arm(fd, s);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "presto::io: on fd %d: %s\n", fd, e.what());
  }
  if (woken != 0) waiting_.fetch_sub(woken, std::memory_order_seq_cst);  // only now: they are ready
}

void Reactor::close(int fd, FdState& s) {
  s.readers.spin_lock();
  s.writers.spin_lock();
  s.generation.fetch_add(1, std::memory_order_release);
  s.nonblocking.store(false, std::memory_order_relaxed);
  s.writers.spin_unlock();
  s.readers.spin_unlock();
  {
    std::lock_guard lock(s.arm_lock);
    ::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);  // ENOENT if never armed: nothing to undo
  }
  const std::size_t woken = wake_all(s.readers) + wake_all(s.writers);
  if (woken != 0) waiting_.fetch_sub(woken, std::memory_order_seq_cst);
}

void Reactor::poll(Processor& /*p*/, bool block) noexcept { collect(block); }

void Reactor::collect(bool block) noexcept {
  last_poll_.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
  epoll_event events[kBatch];
  if (block) blocking_.store(true, std::memory_order_relaxed);
  const int n = ::epoll_wait(epoll_, events, kBatch, block ? -1 : 0);
  if (block) blocking_.store(false, std::memory_order_relaxed);
  if (n < 0) {
    if (errno != EINTR) std::perror("presto::io: epoll_wait");
    return;
  }
  for (int i = 0; i < n; ++i) {
    if (events[i].data.u64 == kWakeKey) {
      // A wake() is for the polling processor, whose poll blocks: a look that does not block
      // must not take it. Drain first, then clear: a wake() in between finds the flag still
      // set and does not write, which is right, since this poll is returning; cleared before
      // the drain, the flag could stay set with nothing to read and every later wake() would
      // be lost.
      if (block) {
        std::uint64_t count;
        [[maybe_unused]] ssize_t r = ::read(event_, &count, sizeof count);
        woken_.store(false, std::memory_order_seq_cst);
      }
      continue;
    }
    dispatch(static_cast<int>(events[i].data.u64), events[i].events);
  }
}

void Reactor::run_ended() noexcept {
  std::lock_guard lock(backstop_mutex_);
  for_each_state([](FdState& s) {
    s.readers.count.store(0, std::memory_order_relaxed);
    s.writers.count.store(0, std::memory_order_relaxed);
  });
  waiting_.store(0, std::memory_order_seq_cst);
}

void Reactor::backstop() noexcept {
  std::unique_lock lock(backstop_mutex_);
  while (!backstop_stop_.wait_for(lock, kBackstop, [this] { return stopping_; })) {
    const Clock::rep since = Clock::now().time_since_epoch().count() - last_poll_.load(std::memory_order_relaxed);
    if (waiting() && !blocking_.load(std::memory_order_relaxed) &&
        since >= std::chrono::duration_cast<Clock::duration>(kBackstop).count()) {
      // Wakes threads from this OS thread, as any external thread may. The KeepAlive's release
      // makes an idle processor check for halting again: the threads this wakes may have run
      // and ended while waiting() was still true, their processors parked (idle_poller.hpp).
      KeepAlive alive = runtime_.keep_alive();
      collect(false);
    }
  }
}

void Reactor::wake() noexcept {
  if (woken_.exchange(true, std::memory_order_seq_cst)) return;  // a wake-up is on its way
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t r = ::write(event_, &one, sizeof one);
}

}  // namespace presto::io::detail
