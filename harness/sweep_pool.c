/* sweep_pool: see sweep_pool.h.  One proc_child per busy slot; the parent polls the busy slots' pipes,
 * reads what arrives, and finishes a worker when its pipe ends. */
#include "sweep_pool.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"
#include "sweep.h"

typedef struct worker {
  proc_child child; /* child.pid 0: the slot is free */
  int item;
} worker;

/* What a worker is to do, handed through the fork. */
typedef struct work {
  sweep_pool_job_fn job;
  void *ctx;
  int item;
} work;

/* The worker's side: run the job and answer its line. */
static mp_status run_job(void *arg, strbuf *answer, mp_error *err) {
  const work *w = arg;
  char line[SWEEP_LINE_MAX + 1];
  line[0] = '\0';
  mp_status st = w->job(w->ctx, w->item, line, sizeof line - 1, err);
  if (st != MP_OK && !err->msg[0]) err_set(err, st, "%s", err_text(st));
  if (st == MP_OK) strbuf_append(answer, line, strlen(line));
  return st;
}

/* Reaps a worker whose answer has ended and hands its line or its failure to done. */
static mp_status finish(worker *w, sweep_pool_done_fn done, void *ctx, mp_error *err) {
  strbuf line = {0};
  mp_error failure;
  err_clear(&failure);
  int ok = proc_child_finish(&w->child, &line, &failure) == MP_OK;
  mp_status st = done(ctx, w->item, ok ? line.s : NULL, ok ? NULL : &failure, err);
  strbuf_clear(&line);
  return st;
}

mp_status sweep_pool_run(const int *items, int n_items, int jobs, sweep_pool_job_fn job, sweep_pool_done_fn done,
                         sweep_pool_idle_fn idle, int idle_ms, void *ctx, mp_error *err) {
  if (jobs < 1) return err_set(err, MP_USAGE, "--jobs must be at least 1");
  if (jobs > n_items) jobs = n_items > 0 ? n_items : 1;
  worker *slots = calloc((size_t)jobs, sizeof *slots);
  struct pollfd *pfd = calloc((size_t)jobs, sizeof *pfd);
  int *who = calloc((size_t)jobs, sizeof *who);
  mp_status st = MP_OK;
  if (!slots || !pfd || !who) {
    st = err_nomem(err);
    goto cleanup;
  }
  int next = 0, running = 0;
  double last_idle = proc_now_s();
  while (st == MP_OK && (next < n_items || running > 0)) {
    for (int j = 0; j < jobs && next < n_items && st == MP_OK; j++)
      if (!slots[j].child.pid) {
        work w = {job, ctx, items[next]};
        st = proc_child_start(&slots[j].child, run_job, &w, err);
        if (st == MP_OK) {
          slots[j].item = items[next++];
          running++;
        }
      }
    if (st != MP_OK) break;
    int n = 0;
    for (int j = 0; j < jobs; j++)
      if (slots[j].child.pid) {
        pfd[n].fd = slots[j].child.fd;
        pfd[n].events = POLLIN;
        pfd[n].revents = 0;
        who[n++] = j;
      }
    int r = poll(pfd, (nfds_t)n, idle ? idle_ms : -1);
    if (r < 0 && errno != EINTR) {
      st = err_set(err, MP_RUN, "cannot wait for the workers: %s", strerror(errno));
      break;
    }
    for (int k = 0; k < n && r > 0 && st == MP_OK; k++) {
      if (!pfd[k].revents) continue;
      worker *w = &slots[who[k]];
      if (proc_child_read(&w->child) == 0) continue;
      /* End of the answer (or an unreadable pipe, which finish reports): the worker is done. */
      running--;
      st = finish(w, done, ctx, err);
    }
    if (st == MP_OK && idle && proc_now_s() - last_idle >= idle_ms * 1e-3) {
      st = idle(ctx, err);
      last_idle = proc_now_s();
    }
  }
cleanup:
  if (slots)
    for (int j = 0; j < jobs; j++) proc_child_kill(&slots[j].child); /* stopped early: not wanted */
  free(slots);
  free(pfd);
  free(who);
  return st;
}
