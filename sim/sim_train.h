/* sim_train: a plan trained on the simulator - one mini-batch of M micro-batches under a schedule
 * (sim_schedule.h), forward and backward passes, Send/Recv pairs both ways, and the weight update.
 *
 * Each group runs its stage's order: a forward of micro-batch m runs the group's segments (split.h) in
 * order, each waiting for the activations it receives (one Recv per tensor per destination group, as in
 * inference) and posting its Sends; a backward runs them in reverse order, each waiting for the gradients
 * of the tensors it sent (one per Send, back from the receiving group) and posting the gradient of every
 * tensor it received back to the sender once its last reader's backward is done (a Send from the group's
 * first core to the sender's last core).  A segment's pass is one execution of its flops (forward, or
 * input- and weight-gradients plus, with recompute, the forward again) on the group and one all-gather of
 * its outputs (forward) or input-gradients (backward).  A group that does not fit its cores streams its
 * excess around every pass (cost_core_dram with its training memory, train.h) and reads and writes the
 * excess of its static bytes once around the update.  The update follows the group's last backward; the
 * mini-batch ends when every group has updated.  Work and bytes are those of the training model
 * (train_evaluate), so on a chain without communication the figures are its closed forms.
 *
 * Figures: the mini-batch time, samples/s = M x batch / mini-batch, the bubble 1 - sum_i (forward_i +
 * backward_i) / (p x the time until the last backward ends), per stage its forward, backward, update and
 * idle time over the mini-batch, what it held at its memory peak (sim_schedule_peak: stashes, and under zb
 * W-stashes) and the resulting per-core SRAM peak static / c + (held - 1) x stash + w_held x wstash +
 * planned peak (beside the naive one), and the period: the mean interval
 * between micro-batch completions (the end of its last backward), (c[M-1] - c[0]) / (M - 1). */
#ifndef MESHPIPE_SIM_TRAIN_H
#define MESHPIPE_SIM_TRAIN_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "graph.h"
#include "plan.h"
#include "sim.h"
#include "timeline.h"
#include "trace.h"
#include "train.h"

typedef struct sim_train_stage {
  int first_layer, n_layers, first_core, n_cores;
  double fwd_s, bwd_s, update_s; /* over the mini-batch: its passes (DRAM streams included) and the update */
  double idle_s;                 /* mini-batch - fwd - bwd - update: waiting */
  double dram_s;                 /* of fwd and bwd: streaming */
  double comm_s;                 /* its Sends in flight (they overlap its passes) */
  double model_fwd_s, model_bwd_s; /* the training model's, per micro-batch */
  int held;                      /* micro-batches whose stash it held at its memory peak */
  int w_held;                    /* zb: those past B and not W then */
  int model_held, model_w_held;  /* train_hold_of */
  uint64_t wstash_bytes;         /* train_range */
  uint64_t static_bytes;         /* per core */
  uint64_t stash_bytes, peak_bytes, naive_bytes; /* per micro-batch (train_range) */
  uint64_t sram_peak_bytes;      /* per core over the schedule, with the planned activations */
  uint64_t sram_naive_bytes;     /* the same with the naive sum */
  uint64_t sram_capacity;        /* the group's smallest core SRAM */
  int fits;
  int n_sends, n_recvs;          /* forward Sends / Recvs; as many gradient Sends and Recvs the other way */
} sim_train_stage;

typedef struct sim_train_result {
  train_schedule schedule;
  train_optimizer optimizer;
  int microbatches, batch, recompute;
  double minibatch_s;    /* until every group has updated */
  double fb_s;           /* until the last backward ended */
  double samples_per_s;  /* M x batch / minibatch_s */
  double bubble;
  double period_s;       /* mean interval between micro-batch completions */
  double model_minibatch_s, model_period_s, model_bubble; /* train_evaluate's */
  int feasible;
  uint64_t sram_peak_bytes; /* the largest per-core peak over the cores */
  uint64_t dram_bytes;      /* streamed over the mini-batch */
  long activities;
  uint64_t graph_hash, plan_hash, chip_hash;
  int n_stages;
  sim_train_stage *stages; /* owned */
  double *completions;     /* owned: M entries, seconds from the start */
} sim_train_result;

/* Simulates one mini-batch of plan p (borrowed) of t's graph trained under t's options on the sim's chip
 * (never isolated; a plan simulated before under the same graph and options is answered from a cache of
 * 1024 results, emptied by sim_checkpoint, counted in sim_get_stats' cache_hits).  t is borrowed and built once by the caller for every plan it
 * simulates (its memo of planned ranges grows).  res is caller-owned (sim_train_result_clear).  MP_INPUT
 * if the plan does not fit the graph or chip. */
mp_status sim_train_evaluate(sim *s, train *t, const plan *p, sim_train_result *res, mp_error *err);

/* sim_train_evaluate (never from the cache) that also adds the run's events to tl (borrowed; timeline.h):
 * per group each segment's forward ("OP") and backward ("OP (backward)") with its all-gather, the update,
 * the DRAM streams around passes and the update, every Send and gradient sent back ("grad TENSOR"), and per
 * core the static bytes it keeps.  The SRAM counter then shows those plus the activations and gradients
 * each micro-batch leaves on the group until its backward is done: the naive stash.  MP_NOMEM (and no
 * result) when an event cannot be added. */
mp_status sim_train_evaluate_timeline(sim *s, train *t, const plan *p, timeline *tl, sim_train_result *res,
                                      mp_error *err);

/* The job sim_train_evaluate runs for plan p (borrowed) under t's options, as a training trace (trace.h):
 * every group's passes in its schedule's order, then its update, with the stages' training figures, so that
 * sim_train_replay can run it on another chip without the graph.  *out is owned (trace_free). */
mp_status sim_train_record(sim *s, train *t, const plan *p, trace **out, mp_error *err);

/* Runs training trace tr (borrowed; its core ids the sim chip's, see trace_map) as recorded: each group its
 * passes in the recorded order.  The model figures are the training model's on the sim's chip from the
 * recorded ones (train_evaluate_stages), and so is what an over-full group streams: on the chip it was
 * recorded on, the result is sim_train_evaluate's.  MP_INPUT naming the line when the actions are not a
 * mini-batch the simulator can run (a pass differing from the first of its kind, a backward before its
 * forward, ...), MP_USAGE for an inference trace.  res is caller-owned (sim_train_result_clear). */
mp_status sim_train_replay(sim *s, const trace *tr, sim_train_result *res, mp_error *err);

void sim_train_result_clear(sim_train_result *r);

/* The `simulate --mode train --json` object; owned, NULL if out of memory. */
cJSON *sim_train_result_to_json(const sim_train_result *r);

#endif
