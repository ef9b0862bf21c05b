/* progress: the progress line of long runs.  See progress.h. */
#include "progress.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"

void progress_init(progress *p, FILE *out, const char *label, long total, double interval_s, int tty) {
  memset(p, 0, sizeof *p);
  p->out = out;
  p->tty = tty < 0 ? isatty(fileno(out)) : tty != 0;
  snprintf(p->label, sizeof p->label, "%s", label ? label : "");
  p->total = total;
  p->interval_s = interval_s > 0 ? interval_s : 5.0;
  p->start_s = p->last_s = proc_now_s();
}

double progress_elapsed(const progress *p) { return proc_now_s() - p->start_s; }

char *progress_duration(double s, char *buf) {
  if (!(s >= 0)) s = 0;
  if (s > 359999999.0) s = 359999999.0; /* 99999 hours */
  int t = (int)(s + 0.5);
  if (t < 60)
    snprintf(buf, PROGRESS_DURATION_MAX, "%ds", t);
  else if (t < 3600)
    snprintf(buf, PROGRESS_DURATION_MAX, "%dm%02ds", t / 60, t % 60);
  else
    snprintf(buf, PROGRESS_DURATION_MAX, "%dh%02dm", t / 3600, (t % 3600) / 60);
  return buf;
}

static void emit(progress *p, long done, int final, const char *fmt, va_list ap) {
  char line[512], fields[384] = "", el[PROGRESS_DURATION_MAX], eta[PROGRESS_DURATION_MAX];
  if (fmt) vsnprintf(fields, sizeof fields, fmt, ap);
  double elapsed = progress_elapsed(p);
  int n;
  if (p->total > 0) {
    double frac = (double)done / (double)p->total;
    if (final || done <= 0)
      snprintf(eta, sizeof eta, "%s", final ? "done" : "?");
    else
      progress_duration(elapsed * (double)(p->total - done) / (double)done, eta);
    n = snprintf(line, sizeof line, "%s %ld/%ld (%3.0f%%) %s%s[%s, ETA %s]", p->label, done, p->total, 100.0 * frac,
                 fields, fields[0] ? " " : "", progress_duration(elapsed, el), eta);
  } else {
    n = snprintf(line, sizeof line, "%s %ld %s%s[%s]", p->label, done, fields, fields[0] ? " " : "",
                 progress_duration(elapsed, el));
  }
  if (n < 0) return;
  if (n >= (int)sizeof line) n = (int)sizeof line - 1;
  if (p->tty) {
    int pad = p->last_len > n ? p->last_len - n : 0;
    fprintf(p->out, "\r%s%*s", line, pad, "");
    if (final) fputc('\n', p->out);
    p->last_len = n;
  } else {
    fprintf(p->out, "%s\n", line);
  }
  fflush(p->out);
  p->shown++;
  p->last_s = proc_now_s();
}

int progress_update(progress *p, long done, const char *fmt, ...) {
  double since = proc_now_s() - p->last_s;
  if (p->tty ? since < 0.1 : since < p->interval_s) return 0;
  va_list ap;
  va_start(ap, fmt);
  emit(p, done, 0, fmt, ap);
  va_end(ap);
  return 1;
}

void progress_finish(progress *p, long done, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit(p, done, 1, fmt, ap);
  va_end(ap);
}

/* ---- the ticker ---- */

typedef struct ticker {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop;
  progress p;
  double first_s;
} ticker;

static void *tick(void *arg) {
  ticker *k = arg;
  pthread_mutex_lock(&k->mu);
  double next = k->first_s;
  while (!k->stop) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    double wait = next - progress_elapsed(&k->p);
    if (wait > 0) {
      until.tv_sec += (time_t)wait;
      until.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
      if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
      if (pthread_cond_timedwait(&k->cv, &k->mu, &until) != ETIMEDOUT) continue;
      if (k->stop) break;
    }
    char el[PROGRESS_DURATION_MAX];
    if (k->p.tty)
      fprintf(k->p.out, "\r%s: still running, %s", k->p.label, progress_duration(progress_elapsed(&k->p), el));
    else
      fprintf(k->p.out, "%s: still running, %s\n", k->p.label, progress_duration(progress_elapsed(&k->p), el));
    fflush(k->p.out);
    k->p.shown++;
    next = progress_elapsed(&k->p) + (k->p.tty ? 1.0 : k->p.interval_s);
  }
  pthread_mutex_unlock(&k->mu);
  return NULL;
}

void progress_ticker_start(progress_ticker *t, FILE *out, const char *label, double first_s, double interval_s) {
  ticker *k = calloc(1, sizeof *k);
  t->impl = NULL;
  if (!k) return; /* no ticks: the run itself goes on */
  progress_init(&k->p, out, label, 0, interval_s, -1);
  k->first_s = first_s;
  pthread_mutex_init(&k->mu, NULL);
  pthread_cond_init(&k->cv, NULL);
  if (pthread_create(&k->thread, NULL, tick, k) != 0) {
    pthread_mutex_destroy(&k->mu);
    pthread_cond_destroy(&k->cv);
    free(k);
    return;
  }
  t->impl = k;
}

void progress_ticker_stop(progress_ticker *t) {
  ticker *k = t->impl;
  if (!k) return;
  pthread_mutex_lock(&k->mu);
  k->stop = 1;
  pthread_cond_signal(&k->cv);
  pthread_mutex_unlock(&k->mu);
  pthread_join(k->thread, NULL);
  if (k->p.tty && k->p.shown) fputc('\n', k->p.out);
  pthread_mutex_destroy(&k->mu);
  pthread_cond_destroy(&k->cv);
  free(k);
  t->impl = NULL;
}
