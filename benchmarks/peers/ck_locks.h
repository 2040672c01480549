/* Concurrency Kit's spin locks behind a C interface (ck_locks.c), for C++ callers. */
#pragma once
#ifdef __cplusplus
extern "C" {
#endif
struct ck_bench_lock;
/* The name of kind i (0 ..), or null past the last. */
const char *ck_bench_name(int i);
/* A new lock of kind i, or null if out of memory. */
struct ck_bench_lock *ck_bench_new(int kind);
void ck_bench_free(struct ck_bench_lock *l);
void ck_bench_lock(struct ck_bench_lock *l);
void ck_bench_unlock(struct ck_bench_lock *l);
#ifdef __cplusplus
}
#endif
