/* sweep: many (chip variant, graph, method) cases, each partitioned and simulated, one CSV row each.
 *
 * A sweep is the cartesian product of chip variants x graphs x methods.  The chip variants are the
 * product of axes "KEY=V1,V2,...": KEY is a dotted path into the chip JSON (noc.bandwidth,
 * core.sram_bytes, core.flops, dram.bandwidth, ...) or "mesh", whose values read WxH.  Each variant
 * is the base chip's parsed JSON with those members replaced, built by chip_from_json, so a variant
 * is checked exactly like a chip file.  Cases are numbered variant-major (the last axis varies
 * fastest), then graph, then method; each has a stable key, "mesh=4x4;noc.bandwidth=3.2e10|graph|method"
 * (the axis values as given), which is the first CSV column.
 *
 * SimGrid's engine starts once per process (sim.h), so every case runs in a process of its own:
 * sweep_pool_run (sweep_pool.h) forks one worker per case, at most `jobs` at a time, and hands each
 * worker's one line back to the caller as it finishes.  The results file is opened with O_APPEND and every row is
 * one write() of a complete line, so a killed sweep leaves whole rows plus at most one cut-off last
 * line, which sweep_csv_open truncates away before resuming.  Rows appear in the order cases finish;
 * the key column makes the files of two runs comparable: sorted, they are identical except for the
 * solve_s column (wall-clock time).
 *
 * Ownership: sweep_new takes the graphs; everything a sweep holds is owned by it (sweep_free). */
#ifndef MESHPIPE_SWEEP_H
#define MESHPIPE_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "chip.h"
#include "err.h"
#include "graph.h"
#include "method.h"
#include "sim.h"
#include "sweep_pool.h" /* the pool that runs the cases; cli/cmd_bench.c finds sweep_pool_run through here */

#define SWEEP_MAX_AXES 16
#define SWEEP_MAX_VALUES 256
#define SWEEP_MAX_CASES 1000000
#define SWEEP_LINE_MAX 4096 /* longest CSV row (header included) */
#define SWEEP_MAX_CSV ((size_t)1 << 30) /* the largest results file resumed: 1 GiB, 1000 bytes a case */

/* One varied chip figure: key and the values in the order given (owned strings). */
typedef struct sweep_axis {
  char *key;
  int n_values;
  char **values;
} sweep_axis;

/* Parses "KEY=V1,V2,..." into *out (owned: sweep_axis_clear).  Keys are dotted names of letters,
 * digits and '_'; values are non-empty, without ',', ';', '|', '"' or spaces; no value twice. */
mp_status sweep_axis_parse(const char *text, sweep_axis *out, mp_error *err);

/* Frees what an axis owns and zeroes it; a may be NULL. */
void sweep_axis_clear(sweep_axis *a);

/* Builds the chip whose JSON is base (borrowed, unchanged) with keys[i] set to values[i] for i < n:
 * "mesh" takes WxH (DRAM ports are moved to the same relative place on the new mesh: x' =
 * round(x (W'-1) / (W-1)), likewise y); any other key names an object member by its dotted path and
 * takes a number (an optional suffix k M G T multiplies by powers of 1000, Ki Mi Gi Ti by powers of
 * 1024) or, where the base holds a string, a string.  file labels error messages.  *out is owned. */
mp_status sweep_chip_variant(const cJSON *base, const char *file, const char *const *keys,
                             const char *const *values, int n, chip **out, mp_error *err);

typedef struct sweep_variant {
  chip *chip; /* owned */
  int *value; /* n_axes entries: the index of this variant's value on each axis */
} sweep_variant;

typedef struct sweep_case {
  int variant, graph, method;
  char *key; /* owned */
} sweep_case;

typedef struct sweep {
  char *chip_file;
  int n_axes;
  sweep_axis *axes; /* owned */
  int n_variants;
  sweep_variant *variants;
  int n_graphs;
  graph **graphs; /* owned */
  int n_methods;
  char **methods; /* owned copies of names in the method table */
  int n_cases;
  sweep_case *cases;
  int *by_key; /* case indices sorted by key, for sweep_find_case */
  method_options method_opts; /* used by every case; strings borrowed from the caller */
  sim_options sim_opts;
} sweep;

/* Builds a sweep over the chip JSON base (borrowed; file names it in messages), the axes (moved into
 * the sweep: the caller's array is zeroed), graphs (ownership taken, also on failure; the pointer
 * array itself is copied) and method names (copied; each must be in the method table).  Every chip
 * variant is built and checked here, so a bad value fails before any case runs.  Graph names must
 * differ (they are the graph column).  mo and so may be NULL for defaults.  *out is owned. */
mp_status sweep_new(const cJSON *base, const char *file, sweep_axis *axes, int n_axes, graph **graphs, int n_graphs,
                    const char *const *methods, int n_methods, const method_options *mo, const sim_options *so,
                    sweep **out, mp_error *err);

/* Frees s; sweep_free(NULL) is a no-op. */
void sweep_free(sweep *s);

/* Index of the case with that key, or -1. */
int sweep_find_case(const sweep *s, const char *key);

/* What one case produced. */
typedef struct sweep_row {
  int feasible;              /* the plan fits every core's SRAM */
  int n_stages;
  double model_period_s;     /* the analytical model's period of the plan */
  int batch;                 /* samples per micro-batch (graph_batch) */
  double samples_per_s;      /* simulated throughput: batch / period */
  double latency_s;          /* simulated, of one sample */
  double link_utilisation;   /* the busiest link's (NoC or DRAM port) */
  char link[48];             /* its name, "" when no link carried anything */
  uint64_t total_sram_bytes; /* over all cores of the chip */
  double noc_bandwidth;      /* bytes/s of one NoC link in one direction */
  int cores;
  double solve_s;            /* wall-clock seconds of the method */
  uint64_t plan_hash;
  double evals_per_s;        /* uncached simulator evaluations per second; 0 when not measured */
  /* Training (method_options.train): feasible, model_period_s are the training model's (train.h),
   * samples_per_s is one simulated mini-batch's (sim_train.h) and latency_s its time; no link figures. */
  double bubble;             /* the simulated mini-batch's idle fraction; 0 for inference */
  uint64_t sram_peak_bytes;  /* the largest per-core SRAM peak over the mini-batch; 0 for inference */
  double energy_j_per_sample, power_w, samples_per_j, tops_per_w; /* simulated (energy.h); 0 on a chip
                                                                      without energy figures */
} sweep_row;

/* Partitions g on c with the named method and simulates the plan.  Starts a SimGrid engine, so it
 * can run once per process (call it in a worker).  With speed_s > 0 it then re-simulates the plan
 * without the cache for about speed_s seconds, in three windows (each at least one evaluation), and
 * fills evals_per_s with the best window's rate.  All
 * arguments borrowed; so may be NULL.  A method or simulator failure is returned as is. */
mp_status sweep_run_one(const graph *g, const chip *c, const char *method, const method_options *mo,
                        const sim_options *so, double speed_s, sweep_row *row, mp_error *err);

/* sweep_run_one for case i of s. */
mp_status sweep_run_case(const sweep *s, int i, sweep_row *row, mp_error *err);

/* The CSV header, "case,<axis keys>,graph,method,feasible,...,cores,solve_s\n", into buf; returns its
 * length, or -1 if it does not fit.  A sweep whose chip has energy figures has the columns
 * energy_j_per_sample, power_w, samples_per_j, tops_per_w before solve_s (the last column always); a
 * training sweep (method_options.train) then bubble and sram_peak_bytes; then options and inputs
 * (sweep_csv_options, sweep_case_inputs), which a resume requires to be this sweep's. */
int sweep_csv_header(const sweep *s, char *buf, size_t cap);

/* The options column: what every case ran with, "seed=1;objective=time;...;mode=infer" (method options,
 * the simulator's micro-batch options, the training options), string values %XX-escaped so that it holds
 * no ',', ';' or '='; into buf, returning its length, or -1 if it does not fit. */
int sweep_csv_options(const sweep *s, char *buf, size_t cap);

/* The inputs column of case i: a hash of its chip variant, its graph and each op's work (which measured
 * op times change). */
uint64_t sweep_case_inputs(const sweep *s, int i);

/* Row of case i as one CSV line ending in '\n'; returns its length, or -1 if it does not fit.  Numbers
 * are printed with 12 significant digits (the simulator's own precision). */
int sweep_csv_row(const sweep *s, int i, const sweep_row *r, char *buf, size_t cap);

/* Opens path for appending the rows of s and marks the cases it already holds.  A missing or empty
 * file gets the header.  An existing file must start with exactly this sweep's header (MP_INPUT
 * otherwise: the columns differ); a last line without its newline (cut by a kill) is truncated away;
 * done[i] (n_cases entries, set here) becomes 1 for each case whose key starts a row, and *n_done
 * counts them (rows of other keys are kept and ignored).  A row of one of the cases must hold that
 * case's axis values, graph and method, figures in the form sweep_csv_row writes, and this sweep's
 * options and the case's inputs (MP_INPUT naming the line otherwise: it would count as done, though run
 * with another seed, objective or chip); a file over SWEEP_MAX_CSV is refused.  *fd is
 * O_APPEND; the caller closes it. */
mp_status sweep_csv_open(const sweep *s, const char *path, int *fd, unsigned char *done, int *n_done,
                         mp_error *err);

/* Appends one complete line with a single write() (MP_OUTPUT if it fails or is short). */
mp_status sweep_csv_append(int fd, const char *path, const char *line, size_t len, mp_error *err);

#endif
