/* bench: the fixed regression suite, its results file (BENCH.json) and the comparison with a baseline.
 *
 * The suite is every bundled model on the bundled 4x4, 8x8 and 16x16 meshes with every method of the
 * table; the quick suite (for CI) is a fixed subset of it.  Each entry records what the method's plan
 * is worth (simulated throughput, the model's period, its gap to the optimum's period on the same
 * graph and chip) and how fast things ran (the method's solve time, uncached simulator evaluations
 * per second), with the machine and meshpipe version.  Plans are deterministic, so quality figures
 * compare exactly between machines, case by case.  Speed figures are compared only between runs on
 * the same kind of machine (same CPU model and count), since on another machine they measure the
 * machine, and over the whole suite (geometric means of the ratios over the cases both runs have),
 * since one case's timing on a shared machine easily moves by half while a slower simulator or
 * partitioner moves them all.
 *
 * A bench_report owns its entries (bench_report_clear); the diff borrows the two reports. */
#ifndef MESHPIPE_BENCH_H
#define MESHPIPE_BENCH_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"

#define BENCH_FORMAT "meshpipe-bench"
#define BENCH_VERSION 1

/* One case of the suite: files relative to the data directory, and a method name (static strings). */
typedef struct bench_item {
  const char *graph_file;
  const char *chip_file;
  const char *method;
} bench_item;

/* The suite in its fixed order: graphs, then chips, then methods (the table's order).  *out is an
 * owned array (free) of *n items. */
mp_status bench_suite(int quick, bench_item **out, int *n, mp_error *err);

typedef struct bench_entry {
  char key[160]; /* "graph|chip|method" with the graph's and chip's names */
  char graph[64], chip[64], method[32];
  int feasible, stages;
  double samples_per_s, model_period_s, latency_s;
  double gap;         /* model_period_s / the optimal method's model_period_s - 1; NAN when not in the run */
  double solve_s;     /* the method's wall-clock time */
  double evals_per_s; /* uncached simulations of the plan per second */
  uint64_t plan_hash;
} bench_entry;

typedef struct bench_machine {
  char cpu[128]; /* /proc/cpuinfo's model name, or "unknown" */
  int cpus;      /* online CPUs */
  char os[128];  /* uname: system release machine */
} bench_machine;

typedef struct bench_report {
  char version[32]; /* meshpipe's */
  char date[32];    /* UTC, ISO 8601 */
  int quick;
  char filter[128]; /* "" when every case of the suite ran */
  bench_machine machine;
  int n;
  bench_entry *entries; /* owned */
} bench_report;

/* Fills m from this machine. */
void bench_machine_probe(bench_machine *m);

/* 1 when speed figures of a and b may be compared: same CPU model and count. */
int bench_same_machine(const bench_machine *a, const bench_machine *b);

/* Appends an entry (copied); MP_NOMEM on failure. */
mp_status bench_add(bench_report *r, const bench_entry *e, mp_error *err);

/* Sets every entry's gap from the "optimal" entry of the same graph and chip (NAN without one). */
void bench_fill_gaps(bench_report *r);

/* Frees the entries and zeroes r; r may be NULL. */
void bench_report_clear(bench_report *r);

/* The BENCH.json object (owned; NULL if out of memory). */
cJSON *bench_to_json(const bench_report *r);

/* Reads a BENCH.json document (borrowed) strictly; file labels messages.  *out is filled and owns
 * its entries. */
mp_status bench_from_json(const cJSON *root, const char *file, bench_report *out, mp_error *err);
mp_status bench_load(const char *path, bench_report *out, mp_error *err);

/* Writes bench_to_json atomically. */
mp_status bench_save(const bench_report *r, const char *path, mp_error *err);

/* When a change counts as a regression. */
typedef struct bench_limits {
  double quality_drop; /* fail when throughput < (1 - this) x the baseline's (default 0.005) */
  double speed_drop;   /* fail when a suite speed (1/solve_s, evals/s) < (1 - this) x the baseline's (0.25) */
  double min_solve_s;  /* solve times below this in both runs are timer noise: not compared (0.02 s) */
} bench_limits;

void bench_limits_default(bench_limits *l);

typedef enum { BENCH_SAME, BENCH_BETTER, BENCH_WORSE, BENCH_NEW, BENCH_MISSING } bench_verdict;

typedef struct bench_diff_row {
  const bench_entry *old, *now; /* borrowed; old NULL for a new case, now NULL for a missing one */
  double quality;   /* now / old throughput - 1 */
  double solve;     /* old / now solve time - 1: the change in solve speed (NAN: not compared) */
  double evals;     /* now / old evaluations per second - 1 (NAN: not compared) */
  bench_verdict verdict;
  int fails;        /* this row makes the comparison fail (quality, memory, missing; never speed) */
  char why[160];    /* what got worse, "" otherwise */
} bench_diff_row;

typedef struct bench_diff {
  int n;
  bench_diff_row *rows; /* owned; in the order of now's entries, then old's missing ones */
  int speed_compared;   /* the machines match, so speed figures count */
  int missing_fail;     /* same suite and filter, so a case missing from now counts */
  double solve;         /* geometric mean over the cases with a solve figure of (1 + row.solve), - 1;
                           NAN when there is none */
  double evals;         /* likewise for evaluations per second */
  int n_solve, n_evals; /* cases in each mean */
  char speed_why[160];  /* which suite speed dropped, "" otherwise */
  int failures;         /* failing rows, plus one per suite speed that dropped by more than speed_drop */
} bench_diff;

/* Compares now against the baseline old (both borrowed, must outlive the diff); lim may be NULL. */
mp_status bench_diff_new(const bench_report *old, const bench_report *now, const bench_limits *lim, bench_diff *out,
                         mp_error *err);

void bench_diff_clear(bench_diff *d);

#endif
