#pragma once
// IdlePoller: what an idle processor waits on instead of parking blind. PRESTO's I/O reactor
// (extensions/io, presto::io) is one: its processors wait in epoll_wait, so that a presto
// thread blocked on a file descriptor blocks only itself, and the processor that would have
// slept on its futex is woken by the kernel when the descriptor is ready.
//
// Install one per runtime with Runtime::install_idle_poller (the runtime owns it from then on
// and destroys it with itself). Then, when a processor has found no work for
// RuntimeConfig::idle_spin rounds and parks (Processor::park), one parked processor at a
// time — the *polling processor* — calls poll() instead of sleeping on its futex; the others
// sleep as before. While waiting() is true, an idle processor does not spin: it polls once
// without blocking (a thread whose data came meanwhile runs at once), then parks. Spinning
// would take a core from the programs at the other ends of the descriptors. A waker that
// picks the polling processor (a thread became ready, the run ends, set_processors, a halt
// check) calls wake() instead of waking the futex. When poll() returns and threads still
// wait for its events (waiting()), the polling processor hands the role on: it wakes a
// parked processor, which takes the role when it parks. Without a poller nothing changes.
//
// Readiness is noticed while a processor is idle: a processor running threads does not poll.
// A poller that must serve programs whose processors are all busy computing polls from its
// own thread too (presto::io's backstop does, every 5 ms, while no processor polls).
//
// Halting: while waiting() is true, the runtime does not halt (a wake-up can still come from
// poll()), so a program whose threads are all blocked on I/O is not a deadlock. Because
// waiting() drops only after the threads it woke are ready, those threads may run and end, and
// their processors check for halting, see waiting() still true and park, before it drops: so
// whoever lowers it to false must make sure a halt check follows (see waiting()). A processor
// whose poll() leaves waiting() false returns to its loop, which checks, instead of parking.

namespace presto {

class Processor;

class IdlePoller {
 public:
  IdlePoller() = default;
  IdlePoller(const IdlePoller&) = delete;
  IdlePoller& operator=(const IdlePoller&) = delete;
  virtual ~IdlePoller() = default;

  // Wakes the threads concerned by the events that have come (Thread::wakeup), then returns.
  // With `block`, first waits for events: returns soon after wake() too, and may return
  // spuriously. Called on a processor's own OS thread, in its native context (no presto
  // thread runs there), with no runtime lock held. A blocking poll() is made by one processor
  // at a time (the polling processor, whose preemption timer is paused meanwhile); idle
  // processors call poll(p, false) once as they go idle while waiting() is true,
  // concurrently with each other and with the blocking one. Must not throw: a failure is the
  // poller's to report (the processor just goes on idling).
  virtual void poll(Processor& p, bool block) noexcept = 0;
  // Makes a poll() in progress, or the next one, return soon. Called from any OS thread
  // (processors, the timer thread, external threads), possibly concurrently; must not block,
  // allocate or throw.
  virtual void wake() noexcept = 0;
  // True while a thread waits for an event only poll() can deliver; the runtime reads it to
  // decide that it has halted. It may become false only after the threads it stops counting
  // are ready (made ready with Thread::wakeup), and only
  //   - inside poll() on a processor: the runtime checks for halting before that processor
  //     parks again;
  //   - while the presto thread that makes it false runs (it gave up waiting): its processor
  //     checks when it next idles; or
  //   - on another OS thread (the poller's own, as presto::io's backstop) that holds a
  //     KeepAlive (Runtime::keep_alive) until it has lowered it: the KeepAlive's release makes
  //     an idle processor check.
  // Lowered anywhere else, the run may never end: every processor may have parked after
  // seeing it true.
  virtual bool waiting() const noexcept = 0;
  // Called when a run has ended, on run()'s OS thread, once no processor runs and threads still
  // alive were abandoned (their stacks discarded, taken off every wait queue): no thread waits
  // for the poller any more, whatever it counted. poll() is not called meanwhile.
  virtual void run_ended() noexcept {}
};

}  // namespace presto
