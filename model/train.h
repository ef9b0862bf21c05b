/* train: a graph trained by pipeline parallelism - each layer's backward work, the memory training holds,
 * and the analytical model of a plan trained under a schedule (formulas in traces/README.md, "Training").
 *
 * Per layer (train_layer): the input-gradient and weight-gradient flops, its parameters, the bytes of the
 * gradients it sends back to its inputs, and whether it may work in place.  Per parameter the chip holds
 * the weight and its gradient in the graph's dtype, an fp32 master copy when the dtype is narrower than
 * 4 bytes, and the optimizer's states (sgd 0, momentum 1, adam 2) in fp32 (in the dtype when it is fp32).
 *
 * Per layer range (train_range, one pipeline stage): its sums, and the activation memory of one
 * micro-batch's forward and backward passes through it, planned by memplan (co-share, in place): the
 * stash (what the forward leaves for the backward) and the planned peak beside the naive sum.  With
 * recompute a stage stashes its inputs only and runs its forward again before its backward.
 *
 * A stage of a plan holds the stashes of the micro-batches in flight there (train_in_flight: GPipe all M,
 * 1F1B and zb stage i of p at most p - i) and, under zb, the W-stashes of those whose B is done and W not
 * (at most i), so its per-core memory in a state of h stashes and w W-stashes is
 *     static / c + max(h - 1, 0) x stash + w x wstash + planned peak
 * with static = parameters x bytes per parameter (train_mem_bytes); train_hold_mem_bytes is its largest
 * over the schedule.  A train borrows its graph, which must outlive it;
 * train_range_of keeps the ranges it planned (one thread at a time per train). */
#ifndef MESHPIPE_TRAIN_H
#define MESHPIPE_TRAIN_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "chip.h"
#include "cost.h"
#include "err.h"
#include "graph.h"
#include "plan.h"

typedef enum train_optimizer { TRAIN_SGD, TRAIN_MOMENTUM, TRAIN_ADAM } train_optimizer;

typedef enum train_schedule {
  TRAIN_GPIPE, /* every micro-batch's forward, then every backward, then the update */
  TRAIN_1F1B,  /* PipeDream-flush: stage i of p runs min(p - i - 1, M) forwards, then alternates one forward
                  and one backward, then the remaining backwards, then the update */
  TRAIN_ZB     /* zero bubble (ZB-H1): 1F1B's order with each backward split into its input-gradient part B,
                  which sends the gradients back, and its weight-gradient part W, run i steps later on stage
                  i (sim_schedule.h); between B and W a micro-batch holds what W reads (wstash) */
} train_schedule;

typedef struct train_options {
  train_optimizer optimizer; /* default TRAIN_ADAM */
  train_schedule schedule;   /* default TRAIN_1F1B */
  int microbatches;          /* M per mini-batch, >= 1; default 8 */
  int recompute;             /* 1: stash stage inputs only, run the forward again in the backward */
} train_options;

void train_options_default(train_options *o);

/* "sgd", "momentum", "adam"; "gpipe", "1f1b", "zb". */
const char *train_optimizer_name(train_optimizer o);
const char *train_schedule_name(train_schedule s);

/* The value of a name, or -1. */
int train_optimizer_parse(const char *name);
int train_schedule_parse(const char *name);

/* Micro-batches whose stash stage `stage` of n_stages holds at once under o's schedule. */
int train_in_flight(const train_options *o, int stage, int n_stages);

/* Where a stage sits in a schedule, which decides what it holds (train_hold_peak), and its DRAM passes per
 * micro-batch. */
typedef struct train_hold {
  train_schedule schedule;
  int stage, n_stages, microbatches;
  int passes; /* of a stage that streams: around its forward and its backward, and under zb around W too
                 (it runs later, on what was streamed out meanwhile) */
} train_hold;

train_hold train_hold_of(const train_options *o, int stage, int n_stages);


typedef struct train_layer {
  uint64_t dx_flops;   /* input-gradient work: 0 when every input is a graph input */
  uint64_t dw_flops;   /* weight-gradient work: 0 without weights */
  uint64_t params;     /* weight_bytes / element bytes, rounded up */
  uint64_t grad_bytes; /* the gradients it makes for its inputs (those made by layers), each input once */
  int inplace;         /* elementwise or a view: may write its output over its input, and its input-gradient
                          over its output-gradient, when that input is read for the last time */
} train_layer;

typedef struct train {
  const graph *g; /* borrowed */
  train_options opt;
  int elem_bytes;           /* bytes per element of the graph's dtype (source.dtype; 2, fp16, when absent) */
  int master;               /* 1: an fp32 master copy of the weights (elem_bytes < 4) */
  uint64_t bytes_per_param; /* weight + gradient + master copy + optimizer states */
  int update_flops_per_param;
  train_layer *layers; /* owned, g->n_ops entries */
  struct train_memo *memo; /* owned: the ranges planned so far */
  struct train_scratch *scratch; /* owned: train_evaluate's cost model and buffers (train_int.h), or NULL */
} train;

/* Prepares g (borrowed) for training with o (copied; NULL for the defaults).  MP_USAGE for M < 1.
 * *out is owned (train_free). */
mp_status train_new(const graph *g, const train_options *o, train **out, mp_error *err);

/* Frees t; train_free(NULL) is a no-op. */
void train_free(train *t);

/* The figures of layers [first, first + n) as one stage, for one micro-batch (bytes are per core: an
 * activation is held whole on every core of a group, as the forward's all-gather leaves it). */
typedef struct train_range {
  uint64_t fwd_flops, bwd_flops; /* F_f; F_b = input- and weight-gradient work */
  uint64_t dw_flops;             /* of F_b, the weight-gradient work (zb's W; a replayed trace has it from
                                    its W passes, so 0 unless recorded under zb) */
  uint64_t recompute_flops;      /* the forward again, with recompute; else 0 */
  uint64_t update_flops;         /* the optimizer step over its parameters (once per mini-batch) */
  uint64_t fwd_gather, bwd_gather; /* A_f: its layers' outputs; A_b: the input-gradients they make */
  uint64_t params, static_bytes; /* parameters; x bytes per parameter */
  uint64_t stash_bytes;          /* held from the micro-batch's forward to its backward */
  uint64_t wstash_bytes;         /* zb: held from its B to its W: the inputs of its layers with weights and
                                    the gradients of their outputs */
  uint64_t peak_bytes;           /* the planned arena of its forward and backward (stash included) */
  uint64_t naive_bytes;          /* the same with every tensor in storage of its own */
  uint64_t live_bytes;           /* the largest sum of live bytes at one step */
  uint64_t send_bytes;           /* X: tensors it makes that a later stage reads, once each */
  uint64_t recv_bytes;           /* tensors layers before it make that it reads, once each: the gradients
                                    it sends back */
  int inplace;                   /* tensors the planner wrote in place */
} train_range;

/* The figures of layers [first, first + n) (inside the graph, n >= 1), planned once and kept.  MP_NOMEM. */
mp_status train_range_of(train *t, int first, int n, train_range *out, mp_error *err);

/* The state of h's stage when its activations peak, for a range of r's stash and W-stash bytes: *stashes
 * micro-batches past their forward and not their backward (B under zb), *w_pending (zb) past B and not W
 * (ties: the state holding most).  The same state as sim_schedule_peak finds in the stage's order. */
void train_hold_peak(const train_range *r, const train_hold *h, int *stashes, int *w_pending);

/* Per-core bytes of a stage of r on n_cores cores holding `stashes` stashes and w_pending W-stashes: with
 * the planned peak, or (naive) with the naive sum. */
double train_mem_bytes(const train_range *r, int n_cores, int stashes, int w_pending);
double train_mem_naive_bytes(const train_range *r, int n_cores, int stashes, int w_pending);

/* train_mem_bytes in the state train_hold_peak gives, and its activation part. */
double train_hold_mem_bytes(const train_range *r, int n_cores, const train_hold *h);
double train_hold_act_bytes(const train_range *r, const train_hold *h);

/* ---- the analytical model of a trained plan (train_cost.c) ------------------------------------- */

/* One stage.  cs is the stage as cost.h sees it: flops F_f + F_b + recompute, gather A_f + A_b,
 * weight_bytes = static, max_act_bytes = the activation part of train_hold_mem_bytes (so mem_bytes is the
 * per-core need above), send_bytes X + R; its DRAM streams (one pass: before and after a forward, and again for
 * a backward) and, as plan terms, a hop's latency per gathering segment of each pass and its Sends:
 * forward one per tensor per destination group from its last core, backward one per tensor it received
 * from its first core to the sender's last core.  dram_s counts both passes; time_s = max(compute_s +
 * dram_s, send_s). */
typedef struct train_stage {
  cost_stage cs;
  train_range r;
  train_hold hold;
  int in_flight, w_pending;      /* train_hold_peak */
  double fwd_s, bwd_s;           /* a forward / a backward: work, all-gathers, latency, its DRAM pass */
  double w_s;                    /* zb: of bwd_s, the weight-gradient pass (its work and DRAM pass) */
  double fwd_send_s, bwd_send_s; /* Sends per micro-batch, each way */
  int fwd_sends, bwd_sends;      /* how many */
  double update_s;               /* the optimizer step (once per mini-batch) */
  double mem_naive_bytes;        /* per core, with the naive sum */
} train_stage;

/* The stage-local figures of range r (its train_range) on cores [first_core, first_core + n_cores) holding
 * what h says (borrowed): cs as in train_stage, without plan terms (no latency; Sends once per tensor each
 * way, send_bytes X + R), dram_s every pass, time_s = max(compute_s + dram_s, send_s).  m is a cost model
 * of the chip (its scratch is used). */
void train_stage_local(cost_model *m, const train_range *r, int first_layer, int n_layers, int first_core, int n_cores,
                       const train_hold *h, cost_stage *cs);

typedef struct train_result {
  train_schedule schedule;
  int microbatches, batch, n_stages;
  train_stage *stages;  /* owned */
  double period_s;      /* max(max_i time_s, max over links of load / bandwidth): per micro-batch */
  int bottleneck_stage; /* the slowest stage, lowest on ties */
  double link_bound_s;
  int busiest_link;     /* -1 when nothing moves */
  double minibatch_s;   /* forward-backward estimate (traces/README.md) plus the slowest update */
  double bubble;        /* 1 - M sum_i (fwd_i + bwd_i) / (p (minibatch_s - update)) */
  double samples_per_s; /* M x batch / minibatch_s */
  int feasible;         /* every stage fits its cores */
  double mem_ratio;     /* largest mem_bytes / sram_bytes */
} train_result;

/* A stage as train_evaluate_stages takes it, without its graph (a recorded training trace has none): its
 * range's figures, its place, the gathering segments of a forward and of a backward, and its Sends:
 * forward from its last core, backward (the gradient of each tensor it received) from its first core,
 * each as the tensor's bytes (before the transfer factor) and the receiving core. */
typedef struct train_stage_input {
  train_range r;
  int first_layer, n_layers, first_core, n_cores;
  int fwd_segments, bwd_segments;
  int n_fwd, n_bwd;
  const cost_transfer *fwd, *bwd; /* borrowed */
} train_stage_input;

/* The model of the n stages in (borrowed) trained on c under o with `batch` samples per micro-batch.
 * train_evaluate is this with the stages of its plan, so both give the same figures.  *out is owned
 * (train_result_free). */
mp_status train_evaluate_stages(const train_options *o, int batch, const chip *c, int n, const train_stage_input *in,
                                train_result **out, mp_error *err);

/* The model of plan p (borrowed; made for t's graph and c's cores, else MP_INPUT) trained on c under
 * t's options.  t keeps a cost model of c and buffers for the next call (rebuilt for another chip).
 * *out is owned (train_result_free). */
mp_status train_evaluate(train *t, const chip *c, const plan *p, train_result **out, mp_error *err);

/* The same, with the stage figures only when stage_s (p->n_stages entries: time_s) and stage_mem
 * (mem / SRAM) are not NULL: for search loops.  Returns the period, or a negative value on failure. */
double train_model_period(train *t, const chip *c, const plan *p, double *stage_s, double *stage_mem, int *feasible,
                          mp_error *err);

void train_result_free(train_result *r);

/* JSON of a result: schedule, optimizer, microbatches, recompute, period_s, minibatch_s, bubble,
 * samples_per_s, feasible, mem_ratio, and per stage its figures.  Owned; NULL if out of memory. */
cJSON *train_result_to_json(const train *t, const train_result *r);

#endif
