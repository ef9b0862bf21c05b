/* cost: the analytical model of a pipeline plan — per-stage compute, send, time and per-core memory.
 *
 * A stage holds layers l..r on a contiguous core group G of c cores.  Each layer's work is split
 * evenly over G; after each layer its outputs are all-gathered among G's cores over the NoC:
 *   compute = F / speed(G) + ((c - 1) / c) * A / B     F = stage flops, A = sum of its layers' out_bytes
 *   send    = gamma(G) * X / B                         X = bytes of the distinct tensors the stage produces
 *                                                      that a later layer reads (last_consumer > r)
 *   time    = max(compute, send)                       (sends overlap the next micro-batch's compute)
 *   mem     = W / c + max_j a_j                        W = stage weight bytes; fits when mem <= every
 *                                                      core's SRAM in G
 * speed(G) is the sum of G's flop rates, gamma(G) the largest transfer factor in G, B the NoC link
 * bandwidth.  The bottleneck of a plan is the largest stage time; a plan is feasible when every
 * stage fits.  partitioner/README.md derives the model and its relation to the simulator.
 *
 * A cost_model is a graph and a chip prepared for repeated stage queries; it borrows both, which
 * must outlive it, and is immutable after cost_model_new (safe to share between readers). */
#ifndef MESHPIPE_COST_H
#define MESHPIPE_COST_H

#include <cjson/cJSON.h>

#include "chip.h"
#include "err.h"
#include "graph.h"
#include "plan.h"

/* The figures of one stage (all derived from the stage's layer and core ranges). */
typedef struct cost_stage {
  int first_layer, n_layers;
  int first_core, n_cores;
  double flops;         /* F */
  double weight_bytes;  /* W */
  double gather_bytes;  /* A: sum of the stage's layers' out_bytes */
  double max_act_bytes; /* max over the stage's layers of out_bytes */
  double send_bytes;    /* X */
  double speed;         /* sum of the group's flop/s */
  double gamma;         /* largest transfer factor in the group */
  double sram_bytes;    /* smallest SRAM in the group */
  double compute_s, send_s, time_s;
  double mem_bytes; /* per-core bytes */
  int fits;         /* mem_bytes <= sram_bytes */
} cost_stage;

/* A whole plan's figures.  Owned by the caller (cost_result_free). */
typedef struct cost_result {
  int n_stages;
  cost_stage *stages; /* owned, n_stages entries */
  double bottleneck_s;  /* largest time_s */
  int bottleneck_stage; /* its index, the lowest on ties */
  int feasible;         /* every stage fits */
  double mem_ratio;     /* largest mem_bytes / sram_bytes over the stages (<= 1 when feasible) */
} cost_result;

/* Lower bounds on the bottleneck of any plan (whatever its memory). */
typedef struct cost_bound {
  double flops_s; /* total flops / total flop rate of the chip */
  double layer_s; /* the costliest single layer on its best core group: max over layers j of the
                     min over group sizes c of F_j / (c fastest cores' speed) + ((c-1)/c) a_j / B */
  int layer;      /* that layer */
  double bound_s; /* max(flops_s, layer_s) */
} cost_bound;

/* The model's formulas, one function each, so that every partitioner computes bit-identical figures:
 * compute = flops / speed + ((n_cores - 1) / n_cores) * (gather_bytes / bandwidth);
 * send = gamma * (send_bytes / bandwidth); mem = weight_bytes / n_cores + max_act_bytes. */
double cost_compute_s(double flops, double speed, double gather_bytes, int n_cores, double bandwidth);
double cost_send_s(double send_bytes, double gamma, double bandwidth);
double cost_mem_bytes(double weight_bytes, double max_act_bytes, int n_cores);

typedef struct cost_model cost_model;

/* Prepares g on c (both borrowed, must outlive the model).  *out is owned (cost_model_free). */
mp_status cost_model_new(const graph *g, const chip *c, cost_model **out, mp_error *err);

/* Frees m; cost_model_free(NULL) is a no-op. */
void cost_model_free(cost_model *m);

/* Figures of the stage of layers [first_layer, first_layer + n_layers) on cores
 * [first_core, first_core + n_cores); the ranges must lie inside the graph and chip and be non-empty.
 * O(n_layers + n_cores + tensors they write). */
void cost_model_stage(const cost_model *m, int first_layer, int n_layers, int first_core, int n_cores,
                      cost_stage *out);

/* Fills the rest of s from its ranges and its sums (flops, weight, gather, max_act and send bytes) on
 * chip c (borrowed): the group's figures, the times, the memory and whether it fits.  How
 * cost_model_stage ends, and how a stage known only by its sums (a recorded trace's) is costed. */
void cost_stage_complete(const chip *c, cost_stage *s);

/* Bottleneck of a plan over the model's graph and chip (p borrowed, sized for them); *feasible and
 * *mem_ratio (either may be NULL) receive the plan's memory verdict.  No allocation: for search loops. */
double cost_model_bottleneck(const cost_model *m, const plan *p, int *feasible, double *mem_ratio);

/* Full evaluation of a plan (all borrowed; p must match g's layers and c's cores, else MP_INPUT).
 * *out is owned by the caller. */
mp_status cost_evaluate(const graph *g, const chip *c, const plan *p, cost_result **out, mp_error *err);

/* Frees r; cost_result_free(NULL) is a no-op. */
void cost_result_free(cost_result *r);

/* The lower bounds of g on c (borrowed). */
void cost_lower_bound(const graph *g, const chip *c, cost_bound *out);

/* JSON of a result: bottleneck_s, bottleneck_stage, feasible, mem_ratio, and per stage its ranges
 * and figures.  Owned by the caller; NULL if out of memory. */
cJSON *cost_result_to_json(const cost_result *r);

/* JSON of a bound: flops_s, layer_s, layer, bound_s.  Owned; NULL if out of memory. */
cJSON *cost_bound_to_json(const cost_bound *b);

#endif
