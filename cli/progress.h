/* progress: one progress report for a long run (training, sweeps), in two forms.
 *
 * On a terminal it keeps a single line up to date ("\r", at most about 10 times a second) with the
 * percentage done, the caller's fields and an ETA; elsewhere (a log file, a pipe) it prints a plain
 * line every `interval_s` seconds, so logs stay readable.  The caller owns the progress value and
 * the stream (borrowed).  ETA = elapsed · (total − done) / done. */
#ifndef MESHPIPE_PROGRESS_H
#define MESHPIPE_PROGRESS_H

#include <stdio.h>

typedef struct progress {
  FILE *out;
  int tty;           /* 1: updating line; 0: periodic plain lines */
  char label[32];    /* printed first, e.g. "train" */
  long total;        /* units of work (episodes, runs); <= 0 when unknown (no % or ETA) */
  double interval_s; /* seconds between plain lines */
  double start_s, last_s;
  int shown;    /* lines or updates printed so far */
  int last_len; /* length of the terminal line, to blank leftovers */
} progress;

/* Starts a report on out (borrowed).  tty < 0 asks isatty(out); 0 or 1 forces a form. */
void progress_init(progress *p, FILE *out, const char *label, long total, double interval_s, int tty);

/* Reports done units with the caller's fields (printf format; may be NULL).  Prints only when due;
 * returns 1 when it printed. */
int progress_update(progress *p, long done, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prints the final state unconditionally (ending the terminal line with a newline). */
void progress_finish(progress *p, long done, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Seconds since progress_init. */
double progress_elapsed(const progress *p);

/* A ticker for a call that reports no progress of its own (optimal on a graph of thousands of layers
 * can run for minutes): while it runs, a thread prints "LABEL: still running, 1m05s" on out every
 * interval_s once first_s seconds have passed (an updating line on a terminal), and nothing at all
 * when the call ends sooner.  The caller owns the ticker; out and label are borrowed. */
typedef struct progress_ticker {
  void *impl; /* owned: the thread and what it shares; NULL when it could not start (no ticks) */
} progress_ticker;

void progress_ticker_start(progress_ticker *t, FILE *out, const char *label, double first_s, double interval_s);

/* Stops the thread (ending an updating line with a newline) and frees the ticker. */
void progress_ticker_stop(progress_ticker *t);

/* Formats seconds as "42s", "3m05s" or "2h07m" into buf (PROGRESS_DURATION_MAX bytes); returns buf. */
#define PROGRESS_DURATION_MAX 24
char *progress_duration(double s, char *buf);

#endif
