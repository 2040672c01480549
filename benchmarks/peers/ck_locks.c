/* Concurrency Kit's spin locks behind a small C interface, for benchmarks/micro/spinlocks.cpp
 * (CK's headers are C, not C++). One call per lock and unlock, which the C++ side wraps in a
 * presto::Spinlock; MCS and CLH nodes are one per OS thread, as in CK's own benchmarks (each
 * OS thread holds one lock at a time).
 *
 * CLH nodes change hands: an unlock leaves the OS thread with its predecessor's node, which may
 * be the node the lock started with. That node therefore outlives its lock (it is never freed,
 * like the OS threads' own). It was once a member of the lock: an OS thread left holding it
 * after a run (the main thread, which every runtime uses) enqueued the freed memory in the next
 * lock, often at the same address as that lock's own first node, and spun on itself forever
 * (a hang in CI's smoke run). */
#include <ck_spinlock.h>
#include <stdlib.h>
#include <string.h>

#include "ck_locks.h"

struct ck_bench_lock {
  int kind;
  ck_spinlock_fas_t fas;
  ck_spinlock_ticket_t ticket;
  ck_spinlock_anderson_t anderson;
  ck_spinlock_anderson_thread_t *slots;
  ck_spinlock_anderson_thread_t *anderson_holder;
  ck_spinlock_mcs_t mcs; /* the queue (a pointer) */
  ck_spinlock_mcs_context_t *mcs_holder;
  ck_spinlock_clh_t *clh;
  ck_spinlock_clh_t **clh_holder;
};

enum { FAS, FAS_EB, TICKET_PB, ANDERSON, MCS, CLH };
static const char *const names[] = {"ck-fas", "ck-fas-eb", "ck-ticket-pb", "ck-anderson", "ck-mcs", "ck-clh"};

static _Thread_local ck_spinlock_mcs_context_t tl_mcs;
static _Thread_local ck_spinlock_clh_t *tl_clh;

const char *ck_bench_name(int i) { return i >= 0 && i < 6 ? names[i] : 0; }

struct ck_bench_lock *ck_bench_new(int kind) {
  struct ck_bench_lock *l = calloc(1, sizeof *l);
  if (l == 0) return 0;
  l->kind = kind;
  ck_spinlock_fas_init(&l->fas);
  ck_spinlock_ticket_init(&l->ticket);
  l->slots = calloc(64, sizeof *l->slots);
  ck_spinlock_anderson_init(&l->anderson, l->slots, 64);
  ck_spinlock_mcs_init(&l->mcs);
  ck_spinlock_clh_t *first = malloc(sizeof *first); /* never freed: see the top of this file */
  if (l->slots == 0 || first == 0) {
    free(first);
    ck_bench_free(l);
    return 0;
  }
  ck_spinlock_clh_init(&l->clh, first);
  return l;
}

void ck_bench_free(struct ck_bench_lock *l) {
  if (l == 0) return;
  free(l->slots);
  free(l);
}

void ck_bench_lock(struct ck_bench_lock *l) {
  switch (l->kind) {
    case FAS: ck_spinlock_fas_lock(&l->fas); break;
    case FAS_EB: ck_spinlock_fas_lock_eb(&l->fas); break;
    case TICKET_PB: ck_spinlock_ticket_lock_pb(&l->ticket, 5); break;
    case ANDERSON: ck_spinlock_anderson_lock(&l->anderson, &l->anderson_holder); break;
    case MCS: ck_spinlock_mcs_lock(&l->mcs, &tl_mcs); l->mcs_holder = &tl_mcs; break;
    case CLH:
      if (tl_clh == 0) tl_clh = malloc(sizeof *tl_clh); /* one per OS thread, kept */
      ck_spinlock_clh_lock(&l->clh, tl_clh);
      l->clh_holder = &tl_clh;
      break;
  }
}

void ck_bench_unlock(struct ck_bench_lock *l) {
  switch (l->kind) {
    case FAS:
    case FAS_EB: ck_spinlock_fas_unlock(&l->fas); break;
    case TICKET_PB: ck_spinlock_ticket_unlock(&l->ticket); break;
    case ANDERSON: ck_spinlock_anderson_unlock(&l->anderson, l->anderson_holder); break;
    case MCS: ck_spinlock_mcs_unlock(&l->mcs, l->mcs_holder); break;
    case CLH: ck_spinlock_clh_unlock(l->clh_holder); break;
  }
}
