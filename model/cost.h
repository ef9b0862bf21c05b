/* cost: the analytical model of a pipeline plan — what each stage computes, streams and sends per
 * micro-batch, what every NoC link and DRAM port carries, and the steady-state period these bound.
 *
 * A stage holds layers l..r on a contiguous group G of c cores (snake order), cores a .. a+c-1.
 * Stage-local terms (they depend on the stage's layers and cores only):
 *   compute = F(c) / speed(G) + ((c-1)/c) A / B  work split evenly; each segment's outputs all-gathered
 *                                                along G's snake chain
 *   mem     = W / c + Y                          per core: its share of the weights and the largest
 *                                                activation (the all-gather leaves all of it on every core)
 *   dram    = in + out                           a core k whose SRAM_k < mem streams its excess
 *                                                e_k = mem - SRAM_k every micro-batch from its nearest
 *                                                DRAM port: weights first, min(e_k, W/c), read only; the
 *                                                rest is activation spilled, written out after the stage
 *                                                and read back before it.  in (out) = the time of the
 *                                                group's reads (writes), all at once: the largest load on
 *                                                one link of their XY routes (port links included) over
 *                                                its bandwidth, plus the longest route's hops x latency
 *   send    = gamma(G) X / B                     X = bytes of the distinct tensors the stage makes that a
 *                                                later stage reads, each once
 *   t       = max(compute + dram, send)          sends overlap the next micro-batch's compute and streams
 * Plan terms (they depend on the other stages too; cost_evaluate, cost_model_period):
 *   compute += n_seg x latency                   when c > 1: one hop per segment's all-gather (split.h)
 *   send     = sum over (tensor t, destination group j) of gamma(G) b_t / B + hops(G's last core,
 *              j's first core) x latency          one Send per tensor per destination group
 *   load_k   = bytes per micro-batch on link k: the all-gathers (link a+i -> a+i+1 of a chain carries
 *              (i+1)/c of A, the reverse link the rest), the sends and the DRAM reads and writes on their
 *              routes
 *   period   = max(max_i t_i, max_k load_k / bandwidth_k)
 * F(c) = the layers' work on c cores (opcost.h: their flops without a core model, else each op's share
 * timed on the core's MAC array, vector lanes and SRAM, as flops at peak), W = weight bytes, A = output bytes of the layers, Y = the largest layer output, speed(G)
 * the sum of G's flop rates, gamma(G) its largest transfer factor, B the NoC link bandwidth.  The
 * simulator runs exactly this work (sim/sim_program.c), so without contention its steady period is
 * this period.  partitioner/README.md derives the model and its relation to the simulator.
 *
 * A cost_model is a graph and a chip prepared for repeated stage and plan queries; it borrows both,
 * which must outlive it.  It keeps scratch space for its queries: one thread at a time per model. */
#ifndef MESHPIPE_COST_H
#define MESHPIPE_COST_H

#include <cjson/cJSON.h>

#include "chip.h"
#include "energy.h"
#include "err.h"
#include "graph.h"
#include "plan.h"

/* The figures of one stage. */
typedef struct cost_stage {
  int first_layer, n_layers;
  int first_core, n_cores;
  /* sums over its layers */
  double flops;         /* their flops */
  double work;          /* F(c): their work on its n_cores (opcost.h), flops at peak; = flops without a core model */
  double macs;          /* their multiply-accumulates (energy.h) */
  double sram_traffic;  /* bytes they read and write in SRAM: inputs, weights, outputs (energy.h) */
  double weight_bytes;  /* W */
  double gather_bytes;  /* A: the layers' output bytes */
  double max_act_bytes; /* Y */
  double send_bytes;    /* X */
  /* its group (chip_group_of) */
  double speed, gamma, sram_bytes;
  /* memory and DRAM, per micro-batch */
  double mem_bytes;                     /* per core */
  int fits;                             /* mem_bytes <= sram_bytes */
  double dram_in_bytes, dram_out_bytes; /* the group's reads and writes */
  double dram_in_s, dram_out_s;
  /* times per micro-batch */
  double compute_s, dram_s, send_s, time_s;
  /* plan terms (0 in stage-local figures) */
  int n_segments;    /* all-gathers that paid a hop's latency */
  int n_transfers;   /* Sends: (tensor, destination group) pairs */
  double sent_bytes; /* bytes of those transfers, before gamma */
  int send_hops;     /* hops of those transfers, summed */
  double send_byte_hops; /* bytes x hops of those transfers (energy.h) */
  double dram_byte_hops; /* bytes x hops of its DRAM streams between port and core (energy.h) */
  double contended_s; /* its time under contention at the plan's period (cost_contended) */
  double energy_j;    /* joules per sample: its dynamic energy and its cores' static energy over the plan's
                         period (energy.h; cost_evaluate) */
} cost_stage;

/* What sets the period (cost_result.binding). */
typedef enum cost_binding {
  COST_BIND_COMPUTE, /* a stage's compute (and all-gathers) */
  COST_BIND_DRAM,    /* a stage's compute and DRAM streams, the streams the larger part */
  COST_BIND_SEND,    /* a stage's Sends */
  COST_BIND_LINK,    /* the load of one NoC link */
  COST_BIND_PORT     /* the load of one DRAM port's link */
} cost_binding;

/* "compute", "dram", "send", "link" or "port". */
const char *cost_binding_name(cost_binding b);

/* What sets a stage's time: "send" when its Sends take longer than the rest, else the largest of
 * "compute" (its work, F(c) / speed), "gather" (its all-gathers) and "dram" (its streams). */
const char *cost_stage_limiter(const cost_stage *s);

/* A whole plan's figures.  Owned by the caller (cost_result_free). */
typedef struct cost_result {
  int n_stages;
  cost_stage *stages;   /* owned, with their plan terms */
  double bottleneck_s;  /* largest t_i */
  int bottleneck_stage; /* its index, the lowest on ties */
  double link_bound_s;  /* largest load / bandwidth over the links (0 when nothing moves) */
  int busiest_link;     /* its link index (chip.h), the lowest on ties; -1 when nothing moves */
  double uncontended_s; /* max(bottleneck_s, link_bound_s) */
  double period_s;      /* the model's period: with contention (cost_contended), at least uncontended_s */
  cost_binding binding;
  int feasible;         /* every stage fits */
  double mem_ratio;     /* largest mem_bytes / sram_bytes over the stages (<= 1 when feasible) */
  int n_links;
  double *link_bytes; /* owned: bytes per micro-batch on every link (chip_n_links entries) */
  energy_summary energy; /* at period_s (energy.h); all 0 on a chip without energy figures */
} cost_result;

/* Lower bounds on the period of any plan (whatever its memory). */
typedef struct cost_bound {
  double flops_s; /* total work / total flop rate of the chip, each op's work unpadded (opcost.h: its
                     largest term with the MACs at the array's peak; its flops without a core model) */
  double layer_s; /* the costliest single layer on its best core group: max over layers j of the
                     min over group sizes c of F_j(c) / (c fastest cores' speed) + ((c-1)/c) a_j / B */
  int layer;      /* that layer */
  double bound_s; /* max(flops_s, layer_s) */
} cost_bound;

/* The model's formulas, one function each, so that every partitioner computes bit-identical figures:
 * compute = work / speed + ((n_cores - 1) / n_cores) * (gather_bytes / bandwidth);
 * send = gamma * (send_bytes / bandwidth); mem = weight_bytes / n_cores + max_act_bytes. */
double cost_compute_s(double work, double speed, double gather_bytes, int n_cores, double bandwidth);
double cost_send_s(double send_bytes, double gamma, double bandwidth);
double cost_mem_bytes(double weight_bytes, double max_act_bytes, int n_cores);

/* The DRAM rule for one core of stage s whose SRAM is sram: *in bytes read and *out bytes written per
 * micro-batch (both 0 when the stage fits it). */
void cost_core_dram(const cost_stage *s, double sram, double *in, double *out);

typedef struct cost_model cost_model;

/* Prepares g on c (both borrowed, must outlive the model; g may be NULL when only cost_stage_complete
 * is wanted).  *out is owned (cost_model_free).  It times ops on c's core model (opcost.h). */
mp_status cost_model_new(const graph *g, const chip *c, cost_model **out, mp_error *err);

/* Frees m; cost_model_free(NULL) is a no-op. */
void cost_model_free(cost_model *m);

/* The work of layer l on n_cores (opcost.h): what a stage's F(c) sums.  The model needs its graph. */
double cost_model_layer_work(cost_model *m, int layer, int n_cores);

/* Stage-local figures of layers [first_layer, first_layer + n_layers) on cores
 * [first_core, first_core + n_cores); the ranges must lie inside the graph and chip and be non-empty.
 * O(n_layers + tensors they write + n_cores x route length when the stage streams). */
void cost_model_stage(cost_model *m, int first_layer, int n_layers, int first_core, int n_cores, cost_stage *out);

/* Fills the stage-local rest of s from its ranges and its sums (flops, work, weight, gather, max_act and
 * send bytes): the group's figures, memory, DRAM streams and times.  How cost_model_stage ends, and
 * how a stage known only by its sums (a recorded trace's) is costed. */
void cost_stage_complete(cost_model *m, cost_stage *s);

/* One Send of a stage: bytes (before gamma) to the first core of a later group. */
typedef struct cost_transfer {
  double bytes;
  int dst_core;
} cost_transfer;

/* Adds the plan terms to a stage with its stage-local figures: its segment count (the all-gathers
 * that pay latency: those with bytes > 0, when c > 1) and its Sends, then recomputes its times.
 * link_bytes (may be NULL; chip_n_links entries) accumulates what its all-gathers, Sends and DRAM
 * streams carry per micro-batch. */
void cost_stage_plan(cost_model *m, cost_stage *s, int n_segments, const cost_transfer *sends, int n_sends,
                     double *link_bytes);

/* Adds to link_bytes (chip_n_links entries) what one pass of stage s streams on its routes: each core's
 * reads from its nearest DRAM port and writes back to it (cost_core_dram); nothing when s fits or the chip
 * has no port.  cost_stage_plan adds it once; a trained stage streams around both of its passes. */
void cost_stage_dram_load(cost_model *m, const cost_stage *s, double *link_bytes);

/* Adds bytes on every link of the route from `from` to `to` (chip_route's ends) into load, listing in
 * touched (when not NULL) the links whose load was 0; returns the route's hops. */
int cost_load_route(const chip *c, double *load, int from, int to, double bytes, int *touched, int *n_touched);

/* Contention (a plan term): an activity (an all-gather, a DRAM stream, a Send) shares its links with
 * the rest of their traffic.  At a period T the rest of a link's load per micro-batch, O, keeps the
 * link busy a share u = O / (bandwidth T) of the time.  The simulator splits a link equally between the
 * activities on it, so the link serves like a processor-sharing queue and stretches the activity's own
 * bytes on it by 1 / (1 - u); the activity lasts the largest of that over its links, plus its latency.  The period is the least T at
 * least every link's load / bandwidth and every stage's time at T (stage times fall as T grows, so
 * there is one, found by bisection).  stages have their plan terms; xfer holds the Sends, stage i's at
 * xfer_off[i] .. xfer_off[i+1]; link_bytes the plan's loads.  Sets every stage's contended_s and
 * returns the period, or a negative value when out of memory. */
double cost_contended(cost_model *m, cost_stage *stages, int n, const cost_transfer *xfer, const int *xfer_off,
                      const double *link_bytes);

/* The model's period of plan p (sized for the model's graph and chip), with every term.  stage_s and
 * stage_mem (each NULL or p->n_stages entries) receive every stage's t_i and mem / SRAM; *feasible and
 * *mem_ratio (either may be NULL) the memory verdict.  No allocation after the first call for a stage
 * range (segment counts are kept): for search loops.  Returns a negative value when out of memory. */
double cost_model_period(cost_model *m, const plan *p, double *stage_s, double *stage_mem, int *feasible,
                         double *mem_ratio);

/* The energy in joules of one micro-batch (energy.h: dynamic, and static over period_s) of the plan the
 * last cost_model_period costed; 0 on a chip without energy figures or before any plan. */
double cost_model_energy(const cost_model *m, double period_s);

/* Full evaluation of a plan (all borrowed; p must match g's layers and c's cores, else MP_INPUT).
 * *out is owned by the caller. */
mp_status cost_evaluate(const graph *g, const chip *c, const plan *p, cost_result **out, mp_error *err);

/* Frees r; cost_result_free(NULL) is a no-op. */
void cost_result_free(cost_result *r);

/* The lower bounds of g on c (borrowed). */
void cost_lower_bound(const graph *g, const chip *c, cost_bound *out);

/* JSON of a result: period_s, binding, bottleneck_s, bottleneck_stage, link_bound_s, busiest_link
 * (its name), feasible, mem_ratio, and per stage its ranges and figures; when c has energy figures also
 * the energy summary (energy_summary_to_json) and per stage energy_j.  c (borrowed) names the link.
 * Owned by the caller; NULL if out of memory. */
cJSON *cost_result_to_json(const cost_result *r, const chip *c);

/* JSON of a bound: flops_s, layer_s, layer, bound_s.  Owned; NULL if out of memory. */
cJSON *cost_bound_to_json(const cost_bound *b);

#endif
