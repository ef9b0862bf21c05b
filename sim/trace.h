/* trace: a time-independent trace — what each core group of a partitioned network does, action by
 * action, with no times in it, so that the run can be replayed on another chip.
 *
 * A trace is the simulator's compiled program: per group (pipeline stage) of cores, its ordered
 * actions for every micro-batch: compute (the flops of a run of its layers split over the group,
 * then their outputs all-gathered among the group's cores), send (bytes of a tensor from one core of
 * the group to a core of another group), recv (wait for such a tensor) and dram (weights read into
 * one core from the nearest DRAM port).  The header names the graph, plan, chip and meshpipe version it was recorded
 * with, and carries each group's static figures (the analytical model's inputs), so a replay can report the same result
 * as the simulation that recorded it.  The text format (traces/README.md) is line-oriented, one action per line "cACTOR
 * ACTION ARGS...", close to SimGrid's time-independent traces.  Reading is strict: every problem is MP_INPUT "FILE:
 * line N: what".
 *
 * Invariants of a trace that was read or built and checked (trace_check): groups own disjoint core
 * lists; every action's cores are in range; every send has matching recvs (same tensor, micro-batch
 * and pair of cores: the first receives it, any later one in the group waits for the same arrival)
 * and every recv exactly one send; a compute depends only on earlier computes of its group and
 * micro-batch; and the actions cannot deadlock when sends are asynchronous and receives wait.  A
 * trace owns all its arrays and strings.
 *
 * A training trace (trace.training) records one mini-batch of a trained plan (sim_train.h): per group its
 * schedule's passes in order - a forward of a micro-batch is its segments as above (recv, compute,
 * send), a backward its segments in reverse order, each as the gradients it waits for (grecv), its
 * backward and the gradients of what it received sent back (gsend) - then one update; each group also
 * carries its training figures (train_range).  Its extra invariants: every gsend has its grecv and every
 * grecv one gsend; each group ends with exactly one update and nothing follows it; an inference trace has
 * no backward, gsend, grecv or update, a training trace no dram. */
#ifndef MESHPIPE_TRACE_H
#define MESHPIPE_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "chip.h"
#include "err.h"
#include "train.h"

#define TRACE_FORMAT "meshpipe-trace"
#define TRACE_VERSION 1
#define TRACE_MAX_AMOUNT 18446744073709551616.0 /* 2^64: the most flops or bytes a group figure or an action
                                                   carries (a graph's totals are 64-bit) */
#define TRACE_MIN_ACTION_BYTES 8                /* the shortest action line ("c0 dram 0 0 %" is 13) */

typedef enum trace_kind {
  TRACE_COMPUTE, /* flops over the group's cores, then bytes all-gathered among them */
  TRACE_SEND,    /* bytes from core to peer (a core of group peer_group); does not wait */
  TRACE_RECV,    /* waits for the matching send from peer to core */
  TRACE_DRAM,    /* bytes of weights read into core from the DRAM port nearest the group's first core */
  /* training traces only (trace.training): */
  TRACE_BACKWARD, /* a segment's backward: flops over the group's cores, then its input-gradients all-gathered */
  TRACE_GSEND,    /* the gradient of a received tensor, bytes from core (the group's first) back to peer */
  TRACE_GRECV,    /* waits for the gradient of a tensor the group sent, from peer */
  TRACE_UPDATE,   /* the weight update: flops over the group's cores, once, the group's last action */
  TRACE_WGRAD     /* zb only: a micro-batch's weight-gradient pass, flops over the group's cores; bytes: what
                     the micro-batch holds from its backward (B) to it, per core (train_range.wstash_bytes) */
} trace_kind;

typedef struct trace_action {
  trace_kind kind;
  int microbatch; /* update: the last, M - 1 */
  int core;       /* send, gsend: the sending core; recv, grecv, dram: the receiving core; compute, backward,
                     wgrad, update: the group's first */
  int peer;       /* send, gsend: the receiving core; recv, grecv: the sending core; else -1 */
  int peer_group; /* send/recv/gsend/grecv: the group of peer; else -1 */
  double flops;   /* compute, backward, update: the work on the whole group */
  double bytes;   /* compute, backward: bytes all-gathered after it; send, gsend, dram: bytes moved; else 0 */
  int name;       /* index into trace.names: the op (compute), tensor (send/recv) or "weights" (dram) */
  int n_deps;     /* compute: the earlier computes of its group and micro-batch whose outputs it reads, */
  int first_dep;  /* as indices (0 = the micro-batch's first compute) at trace.deps[first_dep ..] */
  int line;       /* line of the file it was read from; 0 when built in memory */
} trace_action;

typedef struct trace_group {
  int n_cores;
  int *cores; /* owned; recorded traces hold consecutive ids */
  int first_layer, n_layers;
  /* The stage's figures in the analytical model (model/cost.h): */
  double flops, gather_bytes, send_bytes, weight_bytes, max_act_bytes; /* flops: the work its chip's core
                                                                          model gave (opcost.h) */
  double macs, ops, traffic; /* its layers' MACs, flops (the arithmetic done) and SRAM bytes, for energy.h
                                (0 in a trace recorded before they were) */
  uint64_t sram_bytes; /* bytes each core of the group holds */
  uint64_t dram_bytes; /* weight bytes streamed per micro-batch */
  train_range train;   /* training traces: the stage's training figures (train.h) for one micro-batch */
  int n_sends, n_recvs;
  int n_actions, cap_actions;
  trace_action *actions; /* owned, in execution order */
} trace_group;

typedef struct trace {
  char *file;    /* where it was read from, or "trace" */
  char *version; /* meshpipe version that recorded it */
  char *graph_name, *chip_name;
  uint64_t graph_hash, plan_hash, chip_hash;
  int graph_layers;
  int batch;         /* samples per micro-batch (graph_batch of the recorded graph; 1 by default) */
  int n_plan;        /* entries of the plan's arranged_core list (the recorded chip's cores) */
  int *plan;         /* owned */
  int width, height; /* the recorded chip's mesh */
  int microbatches;
  int steady; /* 1: recorded from a steady-state run whose cap was `microbatches`; a replay looks for
                 the steady state within as many (sim.h) */
  int training;        /* 1: a training trace (one mini-batch of `microbatches`, below) */
  train_options train; /* training traces: the schedule, optimizer and recompute it was recorded with */
  int n_groups;
  trace_group *groups; /* owned */
  int n_names;
  char **names; /* owned, distinct */
  int n_deps, cap_deps;
  int *deps;   /* owned: the computes' dependency lists */
  void *index; /* owned name index (internal) */
} trace;

/* An empty trace with the given header (strings copied).  *out is owned (trace_free). */
mp_status trace_new(const char *version, const char *graph_name, uint64_t graph_hash, int graph_layers,
                    const int *arranged, int n_plan, uint64_t plan_hash, const char *chip_name, uint64_t chip_hash,
                    int width, int height, int microbatches, trace **out, mp_error *err);

/* Appends a group of n_cores cores (copied) with its static figures (g's cores, actions and counts
 * other than those listed are ignored); returns its index in *index. */
mp_status trace_add_group(trace *t, const int *cores, int n_cores, const trace_group *figures, int *index,
                          mp_error *err);

/* Appends an action (copied; a->name, n_deps and first_dep are ignored: name is interned, and a
 * compute's n_deps dependencies are copied from deps) to group g. */
mp_status trace_add_action(trace *t, int g, const trace_action *a, const char *name, const int *deps, int n_deps,
                           mp_error *err);

/* Checks the invariants above against a chip of n_cores cores (a recorded trace against its own
 * mesh): MP_INPUT naming the line (when known) and the cores.  trace_load runs it. */
mp_status trace_check(const trace *t, int n_cores, mp_error *err);

/* The text format, as an owned NUL-terminated string (free()); *len (may be NULL) excludes the NUL. */
mp_status trace_to_string(const trace *t, char **out, size_t *len, mp_error *err);

/* Writes the text format atomically. */
mp_status trace_write(const trace *t, const char *path, mp_error *err);

/* Reads and checks a trace file / text (len bytes, file labels messages).  *out is owned. */
mp_status trace_load(const char *path, trace **out, mp_error *err);
mp_status trace_parse(const char *file, const char *text, size_t len, trace **out, mp_error *err);

/* Places the trace's cores on chip c (borrowed) and returns a new trace *out whose core ids are c's:
 *   map NULL or ""     the same ids; c must have exactly the recorded number of cores;
 *   "snake" / "snake:K" core k becomes core k + K of c (snake order), so groups stay contiguous;
 *   "xy" / "xy:X,Y"    the core at (x, y) of the recorded mesh goes to (x + X, y + Y) of c, keeping
 *                      the recorded geometry (group ids are then no longer consecutive).
 * MP_USAGE for a malformed map, MP_INPUT when the cores do not fit c. */
mp_status trace_map(const trace *t, const chip *c, const char *map, trace **out, mp_error *err);

/* The action's word in the text format ("compute", "gsend", ...). */
const char *trace_kind_name(trace_kind k);

/* Number of actions over all groups. */
long trace_count_actions(const trace *t);

/* Frees t; trace_free(NULL) is a no-op. */
void trace_free(trace *t);

#endif
