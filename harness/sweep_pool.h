/* sweep_pool: the worker processes of a sweep.  Each item runs in a child process of its own (proc.h:
 * a fork that runs one job, answers its status, message and line through a pipe, and ends with _exit),
 * since SimGrid's engine starts once per process; at most `jobs` run at a time, and the parent hands
 * each item's line, or its failure, to the caller in the order items finish.
 *
 * Invariant: when sweep_pool_run returns, every worker it started has been reaped. */
#ifndef MESHPIPE_SWEEP_POOL_H
#define MESHPIPE_SWEEP_POOL_H

#include <stddef.h>

#include "err.h"

/* job runs in the worker for one item and fills line (cap bytes, NUL-terminated) or fails; done runs
 * in the parent with the line or with the failure (the job's error, MP_RUN when the worker died or
 * ended without answering, or MP_NOMEM when the parent had no memory to read its answer); idle runs
 * in the parent about every idle_ms milliseconds while it waits.  ctx is the caller's, passed to each. */
typedef mp_status (*sweep_pool_job_fn)(void *ctx, int item, char *line, size_t cap, mp_error *err);
typedef mp_status (*sweep_pool_done_fn)(void *ctx, int item, const char *line, const mp_error *failure,
                                        mp_error *err);
typedef mp_status (*sweep_pool_idle_fn)(void *ctx, mp_error *err);

/* Runs job for each of the n_items items (borrowed), at most jobs (>= 1, else MP_USAGE) at once; idle
 * may be NULL.  A done or idle failure stops the pool: the running workers are killed and reaped, and
 * that error is returned.  Otherwise MP_OK once every item is done, whatever the jobs returned. */
mp_status sweep_pool_run(const int *items, int n_items, int jobs, sweep_pool_job_fn job, sweep_pool_done_fn done,
                         sweep_pool_idle_fn idle, int idle_ms, void *ctx, mp_error *err);

#endif
