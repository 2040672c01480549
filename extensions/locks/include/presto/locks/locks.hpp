#pragma once
// presto::locks: the spin-lock family of Anderson's "The Performance of Spin Lock Alternatives
// for Shared-Memory Multiprocessors" (1990) and its successors, each a presto::Spinlock
// subclass, so each goes wherever PRESTO accepts a Spinlock (std::scoped_lock, the ready queue
// of presto::SingleLockPool(std::make_unique<McsLock>())) and keeps rule A (a holder, and a
// spinner, is never preempted).
//
//   TasLock                     test-and-set                                   not FIFO
//   TtasLock                    test-and-test-and-set                          not FIFO
//   TtasStaticBackoffLock       TTAS, a fixed delay after a failed exchange    not FIFO
//   TtasExponentialBackoffLock  TTAS, doubling delay                           not FIFO
//   TicketLock                  ticket lock, proportional backoff              FIFO
//   AndersonLock                array-based queue lock                         FIFO
//   McsLock                     Mellor-Crummey and Scott's list queue lock     FIFO
//   ClhLock                     Craig, Landin and Hagersten's queue lock       FIFO
//
// Every one passes presto/testing/spinlock_conformance.hpp. docs/guide/waiting.md says which to
// choose; benchmarks/micro/spinlocks.cpp measures them beside Concurrency Kit's.

#include <memory>
#include <span>
#include <string_view>

#include <presto/locks/anderson_lock.hpp>
#include <presto/locks/backoff_lock.hpp>
#include <presto/locks/clh_lock.hpp>
#include <presto/locks/mcs_lock.hpp>
#include <presto/locks/tas_lock.hpp>
#include <presto/locks/ticket_lock.hpp>
#include <presto/locks/ttas_lock.hpp>

namespace presto::locks {

struct SpinlockKind {
  std::string_view name;  // "tas", "ttas", "ttas-static", "ttas-exp", "ticket", "anderson", "mcs", "clh", "presto"
  bool fifo;              // acquires in arrival order
};

// Every kind, in the order of the table above, then "presto" (presto::Spinlock itself).
std::span<const SpinlockKind> spinlock_kinds() noexcept;

// A new lock of the kind named, with its default parameters; nullptr for an unknown name.
std::unique_ptr<Spinlock> make_spinlock(std::string_view name);

}  // namespace presto::locks
