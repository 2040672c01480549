#pragma once
// PRESTO: an open, object-oriented toolkit for parallel programming.
// Everything in the core, in one include.

#include <presto/version.hpp>  // first: the C++20 check

#include <presto/allocation_policy.hpp>
#include <presto/asat_allocation.hpp>
#include <presto/atomic_int.hpp>
#include <presto/barrier.hpp>
#include <presto/condition.hpp>
#include <presto/errors.hpp>
#include <presto/fifo_pool.hpp>
#include <presto/hybrid_allocation.hpp>
#include <presto/idle_queue_pool.hpp>
#include <presto/join_handle.hpp>
#include <presto/latch.hpp>
#include <presto/lifo_pool.hpp>
#include <presto/load_allocation.hpp>
#include <presto/local_queue_pool.hpp>
#include <presto/lock.hpp>
#include <presto/main.hpp>
#include <presto/monitor.hpp>
#include <presto/parallel_for.hpp>
#include <presto/non_preemptable.hpp>
#include <presto/once_flag.hpp>
#include <presto/priority_pool.hpp>
#include <presto/processor.hpp>
#include <presto/runtime.hpp>
#include <presto/rw_lock.hpp>
#include <presto/scheduler.hpp>
#include <presto/semaphore.hpp>
#include <presto/shuffle_pool.hpp>
#include <presto/single_lock_pool.hpp>
#include <presto/spinlock.hpp>
#include <presto/stop_token.hpp>
#include <presto/synchro_object.hpp>
#include <presto/this_thread.hpp>
#include <presto/thread.hpp>
#include <presto/thread_local.hpp>
#include <presto/thread_management.hpp>
#include <presto/thread_pool.hpp>
#include <presto/thread_queue.hpp>
#include <presto/wait_group.hpp>
