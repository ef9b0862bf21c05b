/* opcost: the time of one op's share on a group of cores of a chip's core model (chip.h's chip_arch), as
 * the op's effective work — the flop-equivalents that take that time at the typical core's peak.
 *
 * An op of a stage on c cores is split over the c cores; its share takes (traces/README.md, "Time per op
 * on a core model"; f the peak flop/s, phi the clock, R x K the MAC array, V the vector lanes, beta the
 * SRAM bandwidth of one core)
 *   t(c) = max(t_mac, t_vec, t_sram)
 *   t_mac  = cycles(c) / phi: its products (graph.h dims g, m, n, k) on the array, the reduction k on its
 *            rows and the outputs n on its columns, padded to whole tiles; groups that fit side by side
 *            share a tile; the tiles' columns and the rows m split over the cores in the best grid
 *   t_vec  = the rest of its flops / (c V phi)        (at the peak, / (c f), without vector lanes)
 *   t_sram = (bytes read + weights + bytes written) / (c beta)
 * and its work is W(c) = round(t(c) c f), a whole number, so a stage's time is sum W / (c f) whatever the
 * order its layers are added in.  Without a core model W(c) = flops, today's model (every op at peak);
 * an op whose flops are a measured time (graph_op.measured) keeps W(c) = flops too.  Invariant: t(c) =
 * W(c) / (c f) is non-increasing in c up to that rounding (each term is), which optimal.c relies on.
 *
 * An opcost is a graph on a chip (both borrowed, must outlive it) with the works memoised per (layer,
 * count); one thread at a time. */
#ifndef MESHPIPE_OPCOST_H
#define MESHPIPE_OPCOST_H

#include <stdint.h>

#include "chip.h"
#include "err.h"
#include "graph.h"

/* The largest work of one op: 2^53, the most flops a graph gives an op (JSONIO_MAX_EXACT), so sums of works
 * behave as sums of flops do.  Only a core model far out of balance reaches it (a 2^16 x 2^16 array fed
 * one element per cycle, an SRAM port of a few bytes/s under a fast array): such an op then takes
 * 2^53 / f seconds, less than its terms say. */
#define OPCOST_MAX_WORK 9007199254740992.0

/* The terms of one op's share on n_cores of c's typical core: array cycles of the busiest core (0 off
 * the array) and the three times, seconds; time_s is their largest (flops / (n f) without a core model). */
typedef struct opcost_terms {
  double cycles, mac_s, vec_s, sram_s, time_s;
} opcost_terms;

void opcost_op_terms(const chip *c, const graph_op *op, int n_cores, opcost_terms *out);

/* W(n_cores) of one op (c, op borrowed), computed afresh. */
uint64_t opcost_op_work(const chip *c, const graph_op *op, int n_cores);

/* A floor under W(n) for every n: the op's largest term with its MACs at the array's peak, unpadded
 * (its flops without a core model).  For lower bounds. */
uint64_t opcost_op_floor(const chip *c, const graph_op *op);

/* The bytes op moves through SRAM: what it reads, its weights and what it writes (0 for a reshape, a
 * view of its input). */
uint64_t opcost_op_traffic(const graph_op *op);

typedef struct opcost opcost;

/* Prepares g on c.  *out is owned (opcost_free). */
mp_status opcost_new(const graph *g, const chip *c, opcost **out, mp_error *err);

void opcost_free(opcost *o);

/* 1 when no work depends on the core count (no core model): W(c) = flops for every layer. */
int opcost_flat(const opcost *o);

/* W(n_cores) of layer l, memoised. */
uint64_t opcost_work(opcost *o, int layer, int n_cores);

/* The sum of W(n_cores) over layers [first, first + n_layers); O(1) once opcost_tabulate has run, else
 * O(n_layers). */
uint64_t opcost_range(opcost *o, int first, int n_layers, int n_cores);

/* Tabulates every prefix sum over every count 1..C: (L + 1) x C whole numbers, for optimal's DP. */
mp_status opcost_tabulate(opcost *o, mp_error *err);

#endif
