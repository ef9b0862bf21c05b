/* sim: the SimGrid pipeline simulator — runs a plan of a graph on a chip and reports its runtime.
 *
 * One sim per process: SimGrid's engine can be started only once per process and its clock never
 * resets, so sim_new starts the engine in a thread of its own, with a controller actor that runs
 * one evaluation per request (it creates the stage actors, joins them and takes clock differences)
 * and sim_evaluate is a plain blocking call from ordinary C code.  A second sim_new in the same
 * process (while or after the first lives) fails with MP_RUN.  Results are rounded to 12
 * significant digits and cached by (graph hash, plan hash, M), so a repeated plan gives the same
 * figures; a plan first evaluated after hundreds of others may differ from a fresh process's in
 * the 12th digit, unless sim_options.isolate is set (then bit-identical, slower).
 *
 * The work simulated is that of the analytical model (cost.h: compute and all-gathers, DRAM streams,
 * one Send per tensor per destination group), played out with link contention and pipeline fill; where
 * nothing contends, the steady-state period equals the model's.  Details: the comments at the top of
 * sim.c and sim_program.c.
 *
 * Not thread-safe: one caller thread at a time per sim.  Call sim_free before the process exits
 * (the engine's thread must end before SimGrid's exit handlers run). */
#ifndef MESHPIPE_SIM_H
#define MESHPIPE_SIM_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "chip.h"
#include "energy.h"
#include "err.h"
#include "graph.h"
#include "optimes.h"
#include "plan.h"
#include "timeline.h"
#include "trace.h"

typedef struct sim sim;

/* How SimGrid finds routes (sim_options.routing).  Routes and figures are the same either way. */
enum {
  SIM_ROUTING_AUTO,    /* a full table on chips of up to 64 cores; on bigger ones the mesh as part of a
                          torus, whose routes SimGrid computes, when the cores have one speed and no
                          Paje trace is asked for, else Dijkstra */
  SIM_ROUTING_FULL,    /* every route listed: ~1.35x the evaluations per CPU-second on 8x8, ~1.5x on
                          16x16, but start-up grows as cores^2 (16x16: ~0.6 s instead of 0.01 s) */
  SIM_ROUTING_DIJKSTRA, /* routes found on a graph and cached: 32x32 starts in well under a second */
  SIM_ROUTING_MANY,     /* for a sim that will run many evaluations (learning methods): the full table up to
                           256 cores, whose start-up (16x16: ~0.6 s) the evaluations repay (16x16: 1.34x the
                           steady-state evaluations per CPU-second of Dijkstra), as AUTO beyond */
  SIM_ROUTING_TORUS     /* the mesh as part of a torus twice its size (sim_int.h): needs cores of one speed */
};

typedef struct sim_options {
  int microbatches;     /* 0 (default): run until the pipeline is in steady state (sim_result.period_s);
                           M >= 1: exactly M micro-batches */
  int max_microbatches; /* steady-state runs stop at this many micro-batches if they have not settled
                           (0, the default: 4p + 32 for a plan of p stages, doubled twice at most
                           while the mean it measures is below the busiest link's bytes / bandwidth),
                           or half as many more after their window closes (sim_int.h, "Steady state") */
  int first_window; /* steady-state runs: micro-batches in flight at first (0, the default: what the
                       model's period says the groups and senders hold, plus two; sim_int.h, "Steady
                       state"); the window grows from there while no group or sender is saturated, up
                       to 2p + 2, and a run that does not settle runs again at 2p + 2.  It changes how
                       soon a run settles and, where DRAM streams contend, may change which of several
                       periodic schedules it settles into */
  int verbose;      /* 1: SimGrid's own log lines go to stderr; default 0 (silent) */
  int top_links;    /* how many of the busiest NoC links a result lists; default 8 */
  int cache_size;   /* results kept for repeated plans (0: no cache); default 4096 */
  int fast_gather;  /* 0 (default): an all-gather loads every link of its group's chain as the
                       model says ((k+1)/c of the bytes on k->k+1, the rest on k+1->k);
                       1: only the chain's two busiest links, (c-1)/c of the bytes each — the same
                       time when no other transfer crosses the group, but transfers crossing the
                       group contend only at its ends.  Since the default leaves out the links that
                       cannot bind (full_gather), this saves a fifth at most: ResNet-50, random plans
                       of 1..16 stages, 328.7 against 271.5 steady-state evaluations per CPU-second on
                       16x16, 117.6 against 108.0 on 32x32 with 8 MiB per core.  Reported link traffic
                       is the full chain either way. */
  int fast_streams; /* 0 (default): a group that does not fit streams each core's DRAM bytes as a
                       transfer of its own, each one activity on the links it crosses;
                       1: the cores of one port as one parallel task, one activity per port and
                       group (sim_int.h, "DRAM streams") — alone it lasts what the model's stream
                       term says, but it gets one share of a contended link where its cores got one
                       each.  Hundreds of streams at once on a big mesh then cost the solver little:
                       ResNet-50 on 32x32 with 1 MiB, 7.5 against 1.5 evaluations per CPU-second;
                       the fidelity matrix's worst ratio falls from 0.875 to 0.820. */
  int full_gather;  /* 0 (default): an all-gather's ptasks leave out the chain links that cannot bind
                       (sim_int.h, "All-gathers"): the same figures, bit for bit, at a fraction of the
                       work; 1: every link of the chain (what the tests compare the default with) */
  int rerun_private; /* 0 (default): a transfer no other group's or sender's transfer can slow runs once
                         as its ptasks, and then takes the time it took (sim_int.h, "Private
                         transfers"): the same figures up to the engine's rounding (periods
                         within 2.4e-9 relative), with fewer activities; 1: every transfer runs every time (what the tests compare the
                         default with) */
  int simgrid_waits; /* 0 (default): the waits nothing can change (executions, private transfers taking
                         the time they took) go to one timer actor, so SimGrid's engine holds one sleep
                         instead of one activity per busy group (sim_int.h, "Timer"); 1: each is a
                         SimGrid execution or sleep (what the tests compare the default with; implied
                         by paje_file, whose trace then shows the executions) */
  int isolate;      /* 0 (default): evaluations run one after the other in the engine, whose clock
                       keeps growing, so after many evaluations a figure may differ from a fresh
                       process's in its 12th digit; 1: each runs in a fork() of the idle engine and
                       every figure is bit-identical to a fresh process's (slower: see sim_speed) */
  const char *paje_file;   /* NULL (default), or a file for SimGrid's own Paje trace of everything the
                              sim simulates (written when the sim is freed; tracing slows SimGrid down) */
  const optimes *op_times; /* NULL (default), or measured op times (borrowed, must outlive the sim):
                              they replace the flop-based compute of the ops they name in the simulated
                              work only (optimes.h); the model figures of a result keep the flops.  The
                              front end instead simulates optimes_apply's graph, so that the model, the
                              partitioners and the simulator see the same times */
  int routing;             /* SIM_ROUTING_* (default AUTO) */
} sim_options;

/* Sets the defaults above. */
void sim_options_init(sim_options *o);

typedef struct sim_stage_result {
  int first_layer, n_layers, first_core, n_cores;
  /* Per micro-batch, in seconds of simulated time (means over the micro-batches after the warm-up; over
   * all of them in a fixed run): */
  double compute_s;      /* its layers' work and all-gathers */
  double comm_s;         /* its outgoing Send transfers in flight (they overlap compute) */
  double dram_s;         /* waiting for weights streamed from DRAM */
  double idle_s;         /* period - compute_s - dram_s (at least 0): waiting for inputs */
  double analytical_t_s; /* t_i = max(compute_i + dram_i, send_i) of the analytical model (cost.h) */
  uint64_t sram_bytes;   /* s_i = W_i / c_i + max a_j: bytes each core of the group must hold */
  uint64_t dram_bytes;   /* bytes read from and written to DRAM per micro-batch (0 when the group fits) */
  int fits;              /* s_i <= SRAM of every core of the group */
  int n_sends, n_recvs;  /* Send / Recv nodes of its subgraph */
  double energy_j;       /* joules per sample: what its segments, all-gathers, Sends and DRAM streams spend
                            and its cores' static energy over the simulated period (energy.h) */
  double energy_microbatch_j; /* the same per micro-batch */
} sim_stage_result;

typedef struct sim_core_result {
  uint64_t sram_bytes;    /* bytes resident: its group's s_i (0 for a core outside every group) */
  uint64_t sram_capacity; /* the core's SRAM */
  int fits;
} sim_core_result;

typedef struct sim_link_result {
  char name[48];      /* "x0y0>x1y0" for the NoC link from (0,0) to (1,0), "dram0>x3y0" for a DRAM port */
  uint64_t bytes;     /* carried per micro-batch */
  double utilisation; /* bytes / (bandwidth * period): the share of the steady state it is busy */
} sim_link_result;

/* How a result's period was measured. */
typedef enum sim_period_kind {
  SIM_PERIOD_STEADY,    /* the completions became periodic: the steady-state period */
  SIM_PERIOD_UNSETTLED, /* a steady-state run hit its cap first: the mean interval of its second half */
  SIM_PERIOD_FIXED      /* a run of a fixed number of micro-batches: (c[M-1] - c[0]) / (M - 1) */
} sim_period_kind;

/* "steady", "unsettled" or "fixed" (the JSON's period_kind). */
const char *sim_period_kind_name(sim_period_kind k);

typedef struct sim_result {
  int microbatches;               /* micro-batches simulated and counted */
  sim_period_kind period_kind;
  int warmup_microbatches;        /* steady runs: the micro-batches before the first that started in a
                                     full pipeline (after the first completion); 0 in fixed runs */
  int cycle;                      /* steady runs: completions repeat every `cycle` micro-batches (1 mostly) */
  int batch;                      /* samples per micro-batch (graph_batch: the graph's batch size) */
  double microbatches_per_s;      /* 1 / period_s */
  double samples_per_s;           /* batch / period_s: the throughput */
  double period_s;                /* interval between consecutive micro-batch completions: in steady state,
                                     the mean over the last cycle (sim_int.h says how it is found); in a
                                     fixed run (c[M-1] - c[0]) / (M - 1), the makespan when M == 1 */
  double makespan_s;              /* until the last micro-batch counted is complete */
  double latency_s;               /* fill latency: completion of the first micro-batch, pipeline empty */
  int bottleneck_stage;           /* stage with the largest max(compute_s + dram_s, comm_s) (ties: lowest) */
  double model_period_s;          /* the analytical model's period of the same work (cost.h) */
  const char *model_binding;      /* what sets it: "compute", "dram", "send", "link" or "port" (static) */
  int feasible;                   /* every core's SRAM holds its share */
  uint64_t dram_bytes;            /* bytes streamed from DRAM per micro-batch */
  long activities;                /* SimGrid activities (executions, transfers) this evaluation ran */
  int cached;                     /* 1 when the figures came from the cache */
  int op_times_overridden;        /* ops whose compute came from measured times (sim_options.op_times, or
                                     set by the caller that simulated optimes_apply's graph) */
  uint64_t graph_hash, plan_hash, chip_hash;
  energy_parts energy_microbatch; /* joules per micro-batch by kind, over every stage */
  double flops_microbatch;        /* the arithmetic of one micro-batch (for TOPS/W) */
  energy_summary energy;          /* per sample, at the simulated period (sim_result_set_batch); all 0 on a
                                     chip without energy figures */
  int has_energy;                 /* the chip has energy figures (chip.has_energy): the JSON shows them */
  int n_stages;
  sim_stage_result *stages; /* owned */
  int n_cores;
  sim_core_result *cores; /* owned, indexed by core id */
  int n_links;
  sim_link_result *links; /* owned: the busiest links, most bytes first (ties: lowest link index) */
} sim_result;

typedef struct sim_stats {
  long evaluations; /* sim_evaluate calls that succeeded */
  long cache_hits;  /* of those, answered from the cache */
  long activities;  /* SimGrid activities simulated in total */
  double startup_s; /* wall time sim_new took (platform generation and loading) */
  double engine_s;  /* wall time spent simulating */
} sim_stats;

/* Starts SimGrid on a platform generated from the chip.  c is borrowed and must outlive the sim; o
 * may be NULL for defaults.  MP_RUN if an engine was already started in this process. */
mp_status sim_new(const chip *c, const sim_options *o, sim **out, mp_error *err);

/* Simulates plan p of graph g (both borrowed) as the sim's options say (steady state by default).
 * res is caller-owned and filled (clear it with sim_result_clear).  MP_INPUT if the plan does not fit
 * the graph or chip. */
mp_status sim_evaluate(sim *s, const graph *g, const plan *p, sim_result *res, mp_error *err);

/* Same with an explicit number of micro-batches: >= 1 for a fixed run, 0 for steady state. */
mp_status sim_evaluate_m(sim *s, const graph *g, const plan *p, int microbatches, sim_result *res, mp_error *err);

/* Sets r's batch, its samples_per_s = batch x microbatches_per_s and its energy per sample (sim_evaluate
 * and sim_replay do). */
void sim_result_set_batch(sim_result *r, int batch);

/* Frees what a result owns and zeroes it; r may be NULL. */
void sim_result_clear(sim_result *r);

/* The `simulate --json` object (with energy_j_per_sample, power_w, samples_per_j, tops_per_w, energy by
 * kind, and per stage energy_j when the chip has energy figures), owned by the caller; NULL if out of
 * memory. */
cJSON *sim_result_to_json(const sim_result *r);

void sim_get_stats(const sim *s, sim_stats *out);

/* The chip the sim runs (borrowed). */
const chip *sim_chip(const sim *s);

/* Checkpoints of a long run (train).  A figure's last digits depend on the engine's history: on the
 * clock its evaluation started at and on whether the cache answered.  sim_checkpoint empties the cache
 * and gives the engine's clock (seconds); sim_restore, in a fresh process whose evaluations so far are a
 * prefix of the checkpointed process's, empties the cache and advances the idle engine to that clock.
 * From then on both give every plan the same figures bit for bit.  sim_restore: MP_INPUT when clock is
 * not in 0 .. SIM_CLOCK_MAX or is earlier than the engine's; both: MP_RUN if the engine has stopped. */
#define SIM_CLOCK_MAX 1e9
mp_status sim_checkpoint(sim *s, double *clock, mp_error *err);
mp_status sim_restore(sim *s, double clock, mp_error *err);

/* The names of the links SimGrid routes from core a to core b ("x0y0>x1y0" ...), for tests: writes
 * up to max names into names (each up to 47 characters) and returns how many there are, or -1 on bad
 * ids.  The platform's internal zero-cost links are left out. */
int sim_route_links(sim *s, int a, int b, char (*names)[48], int max);

/* Like sim_evaluate_m, never cached, and adds what happens to tl (borrowed, made for the sim's chip):
 * each segment of layers on its group's cores, each transfer (Send/Recv, DRAM weights) on its route,
 * and each core's SRAM occupancy.  The figures are those of sim_evaluate_m. */
mp_status sim_evaluate_timeline(sim *s, const graph *g, const plan *p, int microbatches, timeline *tl,
                                sim_result *res, mp_error *err);

/* The program sim_evaluate_m runs for plan p of g, as a time-independent trace (trace.h; nothing is
 * simulated).  *out is owned by the caller. */
mp_status sim_record(sim *s, const graph *g, const plan *p, int microbatches, trace **out, mp_error *err);

/* Runs a trace whose core ids are the sim chip's (trace_map places a recorded trace) and fills res
 * like sim_evaluate: on the chip it was recorded on, with the same figures.  t is borrowed.  MP_INPUT
 * for a trace this simulator cannot run as recorded (groups of non-consecutive ids, micro-batches
 * that differ, DRAM reads on a chip without DRAM ports). */
mp_status sim_replay(sim *s, const trace *t, sim_result *res, mp_error *err);

/* Stops the engine and frees s; sim_free(NULL) is a no-op.  No new sim can start afterwards. */
void sim_free(sim *s);

#endif
