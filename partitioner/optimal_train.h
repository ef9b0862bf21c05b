/* optimal_train: `optimal` for a trained graph - the least mini-batch time of the training model
 * (train.h) it can find, from the least period over all plans, which it bounds from below
 * (partitioner/README.md, "Training").
 *
 * A stage's memory depends on the stashes it holds, and under 1F1B stage i of p holds min(p - i, M): how
 * many stages follow it.  So the threshold DP runs from the end: R(l)[q] is the set of core totals with
 * which layers l..L-1 can be cut into stages within T, q = min(stages, M) of them (GPipe: q = 1 for any
 * number, every stage holds M).  R(L)[0] = {0}; R(l)[min(q' + 1, M)] gathers R(r + 1)[q'] (+) S(l, r, q)
 * over r >= l and q', S the counts within T of stage l..r holding the stashes of class min(q' + 1, M).  A
 * plan within T exists iff C is in some R(0)[q] (by induction on l, as optimal.c's claim 1: a stage's
 * terms depend on its layers, its core count and its class only); one of exactly q < M stages iff C is
 * in R(0)[q].  The terms are the lower relaxation of the training model: compute without latency, both
 * DRAM passes at the group's best position, every tensor sent once each way; each is at most the
 * model's, so the optimum T_low bounds every plan's period from below.  The relaxation's plan and the
 * fast methods' plans are costed on the full training model and the best is repaired on the period;
 * then those plans, GPipe's optimum and (1F1B, uniform chips) plans of exactly q stages within 1 % of
 * the least period for a set of q < M are each repaired on the mini-batch time (boundary moves, merges),
 * the best is kept and, on chips of 2 to 64 cores, searched deeper on the mini-batch (optimal_int.h).
 * The mini-batch's certified bound is M times the whole work at the chip's total peak.  Heterogeneous
 * chips: the same DP over (layer, core) suffixes with the stage-local terms at their cores' actual
 * positions. */
#ifndef MESHPIPE_OPTIMAL_TRAIN_H
#define MESHPIPE_OPTIMAL_TRAIN_H

#include "chip.h"
#include "err.h"
#include "graph.h"
#include "method.h"
#include "method_int.h"
#include "plan.h"
#include "train.h"

/* The training optimum of g on c (borrowed) under o: *out owned, its figures in *res, the note in rep. */
mp_status optimal_train_solve(const graph *g, const chip *c, const train_options *o, plan **out, optimal_result *res,
                              method_report *rep, mp_error *err);

/* The lower relaxation's value of plan p (what the DP minimises: its largest relaxed stage term; on a
 * heterogeneous chip the stage-local terms), for tests. */
mp_status optimal_train_relaxed(const graph *g, const chip *c, const train_options *o, const plan *p, double *value,
                                mp_error *err);

#endif
