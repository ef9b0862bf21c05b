/* optimal_int: what optimal.c and optimal_repair.c share (not part of the method interface).
 *
 * A candidate is a plan as stage arrays (layers and cores per stage, arrays owned by whoever made it,
 * with room for as many stages as the graph has layers) with its figures on the full model. */
#ifndef MESHPIPE_OPTIMAL_INT_H
#define MESHPIPE_OPTIMAL_INT_H

#include "chip.h"
#include "cost.h"
#include "err.h"
#include "graph.h"

/* A plan as stage arrays, costed on the full model: its period and the 8-norm of its stage times over
 * the period (the tie-break: lower means the near-slowest stages have more slack). */
typedef struct candidate {
  int n, *layers, *cores;
  double period, norm;
  int fits;      /* every stage fits its cores' SRAM */
  int mem_first; /* a plan that fits beats one that does not (chips without DRAM ports: memory has no time) */
} candidate;

/* Costs x on the full model (m borrowed): its period and the tie-break norm; stage_s is scratch for
 * x->n entries. */
mp_status optimal_cost_candidate(cost_model *m, candidate *x, double *stage_s, mp_error *err);

/* 1 when a is better than b: (with mem_first, fitting first, then) a lower period, or the same period
 * and a lower norm. */
int optimal_better(const candidate *a, const candidate *b);

/* Improves *best (room for cap stages) by local search on the full model, at most max_rounds sweeps;
 * returns the sweeps run, or -1 on an error (err set). */
int optimal_repair(cost_model *m, candidate *best, int cap, int max_rounds, mp_error *err);

/* The fast methods whose plans join the relaxations' as starts of the repair (the model's best start may
 * come from anywhere: a relaxation's plan ignores the link loads), and how many starts there are. */
#define OPTIMAL_OTHER_STARTS 4
#define N_STARTS (2 + OPTIMAL_OTHER_STARTS)
extern const char *const optimal_other_starts[OPTIMAL_OTHER_STARTS];

/* Appends their plans on g and c (borrowed) to cand, from *n on (room for N_STARTS, each with room for as
 * many stages as g has layers). */
mp_status optimal_method_starts(const graph *g, const chip *c, candidate *cand, int *n, mp_error *err);

#endif
