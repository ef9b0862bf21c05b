/* optimes: measured op times — kernel timings from real hardware that replace the simulator's
 * flop-based compute time of the ops they name.
 *
 * A file maps op names of one graph to seconds measured on one core of the chip's typical type,
 * either as CSV (lines "op,seconds", an optional "op,seconds" header, '#' comments and blank lines)
 * or as one JSON object {"op": seconds, ...}.  Every name must be an op of the graph, named once;
 * every time finite, >= 0 and at most OPTIMES_MAX_SECONDS.  The simulator then gives such an op the work of seconds * F flops,
 * F being the typical core's flop rate, so the op takes the measured time on one such core and its
 * share of it when split over a group (see optimes_flops).  An optimes is immutable after loading
 * and owns its arrays. */
#ifndef MESHPIPE_OPTIMES_H
#define MESHPIPE_OPTIMES_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "graph.h"

#define OPTIMES_MAX_SECONDS 1e6 /* a measured op of over 11 days is no measurement; it keeps seconds x flops finite */

typedef struct optimes {
  char *file;          /* where it was read from, for messages */
  uint64_t graph_hash; /* the graph it was loaded for */
  int n_layers;        /* the graph's layer count */
  double *seconds;     /* per layer: the measured time, or -1 when the model keeps it */
  int n_overridden;    /* layers with a measured time */
} optimes;

/* Reads a CSV (.csv) or JSON (.json, or text starting with '{') file of op times for graph g
 * (borrowed).  *out is owned by the caller (optimes_free).  Bad input is MP_INPUT naming the line
 * (CSV) or the key (JSON): unknown op, op named twice, negative, NaN, infinite or malformed time. */
mp_status optimes_load(const char *path, const graph *g, optimes **out, mp_error *err);

/* The same from text already in memory (len bytes); file labels the messages.  csv picks the
 * format: 1 CSV, 0 JSON, -1 guess from the first non-blank character ('{' is JSON). */
mp_status optimes_parse(const char *file, const char *text, size_t len, int csv, const graph *g, optimes **out,
                        mp_error *err);

/* The flops the simulator charges layer `layer` of g: the graph's flops, or for a measured op its
 * seconds times core_flops, the flop rate of the core type it was measured on (the simulator passes
 * the chip's typical core, chip_typical_core(c).flops).  t may be NULL: always the graph's flops. */
double optimes_flops(const optimes *t, const graph *g, double core_flops, int layer);

/* Frees t; optimes_free(NULL) is a no-op. */
void optimes_free(optimes *t);

#endif
