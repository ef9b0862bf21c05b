/* optimes: measured op times — kernel timings from real hardware that replace the simulator's
 * flop-based compute time of the ops they name.
 *
 * A file maps op names of one graph to times measured on one core of the chip's typical type,
 * either as CSV (lines "op,time", '#' comments and blank lines, and an optional first line "op,UNIT"
 * whose UNIT - seconds, s, ms, us or ns - is the times' unit, seconds without it) or as one JSON object
 * {"op": seconds, ...}.  Every name must be an op of the graph, named once; every time finite, >= 0
 * and at most OPTIMES_MAX_SECONDS.  Such an op is given the work of seconds * F flops, F being the
 * typical core's flop rate, so it takes the measured time on one such core and its share of it when
 * split over a group (optimes_flops).  optimes_apply makes that a graph of its own, so that the analytical
 * model, every partitioner and the simulator see the same per-layer times; that is how the front end
 * uses them.  An optimes is immutable after loading and owns its arrays. */
#ifndef MESHPIPE_OPTIMES_H
#define MESHPIPE_OPTIMES_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "graph.h"

#define OPTIMES_MAX_SECONDS 1e6 /* an op measured at over 11 days is no measurement; keeps seconds x flops finite */

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

/* A copy of g (borrowed, the graph t was loaded for, else MP_INPUT) whose measured ops do their
 * optimes_flops (rounded to whole flops) and the others their own flops (graph_with_flops).  *out is
 * owned by the caller. */
mp_status optimes_apply(const optimes *t, const graph *g, double core_flops, graph **out, mp_error *err);

/* Frees t; optimes_free(NULL) is a no-op. */
void optimes_free(optimes *t);

#endif
