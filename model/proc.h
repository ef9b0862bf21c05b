/* proc: what the library does with time, descriptors and processes — a monotonic clock, whole reads
 * and writes, and work run in a forked child that answers through a pipe.
 *
 * A child is a fork of the calling process that runs one function, sends back its status, its error
 * message and the bytes the function put in its answer, and ends with _exit (so no atexit handler or
 * stdio buffer of the parent runs twice; stdio is flushed before the fork).  The parent reads the
 * answer to its end and reaps the child; a child that ends without a complete answer is MP_RUN naming
 * its signal or exit status.  SimGrid's engine starts once per process, which is why the simulator
 * isolates evaluations, and the rl method and sweeps run work, in children. */
#ifndef MESHPIPE_PROC_H
#define MESHPIPE_PROC_H

#include <stddef.h>
#include <sys/types.h>

#include "err.h"
#include "strbuf.h"

/* Seconds of a monotonic clock (only differences mean anything). */
double proc_now_s(void);

/* Writes / reads exactly n bytes, retrying after signals.  0 on success; -1 on an error or, for
 * reads, an end of file before n bytes. */
int proc_write_all(int fd, const void *data, size_t n);
int proc_read_all(int fd, void *data, size_t n);

/* The work of a child: fills answer (borrowed) and returns a status, with err filled on failure. */
typedef mp_status (*proc_fn)(void *ctx, strbuf *answer, mp_error *err);

/* A running child, for callers that watch several at once (poll on fd). */
typedef struct proc_child {
  pid_t pid;  /* 0: no child */
  int fd;     /* read end of its answer pipe */
  strbuf raw; /* what it has sent so far */
} proc_child;

/* Forks a child that runs fn(ctx, ...).  c is caller-owned; on success c->pid and c->fd are set. */
mp_status proc_child_start(proc_child *c, proc_fn fn, void *ctx, mp_error *err);

/* One read of what the child sent: 1 at the end of its answer (then call proc_child_finish), 0 when
 * more may come, -1 when the pipe cannot be read (finish reports it). */
int proc_child_read(proc_child *c);

/* Reaps the child and decodes what it sent: returns its status with its message in err, and on
 * success moves its answer into *answer (caller-owned; may be NULL to drop it).  c is reset. */
mp_status proc_child_finish(proc_child *c, strbuf *answer, mp_error *err);

/* Kills and reaps a child whose answer is no longer wanted; c is reset.  No-op without a child. */
void proc_child_kill(proc_child *c);

/* Start, read to the end, finish: fn's status, message and answer as if it had run here. */
mp_status proc_run_child(proc_fn fn, void *ctx, strbuf *answer, mp_error *err);

#endif
