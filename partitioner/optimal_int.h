/* optimal_int: what optimal.c (the DPs and the result), optimal_stage.c (a stage's time in a relaxation)
 * and optimal_repair.c (the starts and the local search) share; not part of the method interface.
 *
 * An opt is one graph on one uniform chip prepared for the relaxations (optimal_opt_init ...
 * optimal_opt_free): its tables are owned, the graph and chip borrowed.  A candidate is a plan as stage
 * arrays (layers and cores per stage, arrays owned by whoever made it, with room for as many stages as
 * the graph has layers) with its figures on the full model. */
#ifndef MESHPIPE_OPTIMAL_INT_H
#define MESHPIPE_OPTIMAL_INT_H

#include <stdint.h>

#include "chip.h"
#include "cost.h"
#include "err.h"
#include "graph.h"
#include "objective.h"
#include "opcost.h"
#include "plan.h"
#include "rl_reward.h"

/* Which relaxation a stage is timed in (optimal.c). */
enum { OPT_LOW, OPT_HIGH };

/* A stage's sums, exact (uint64) and converted once, as cost_model_stage takes them. */
typedef struct figs {
  uint64_t flops, gather, weights, max_act, send, send_high;
  int first, n_layers, n_high; /* its first layer and layers; Sends of the HIGH relaxation (a consumer layer each) */
} figs;

/* DRAM streams of c consecutive cores, each streaming the same bytes from its nearest port: per count
 * c in 1..C, the least and largest (over the positions) of the max over links of cores / bandwidth,
 * reads (in) and writes (out), and the longest route's hops; and per c the largest of in_hi, out_hi and
 * of both hops over the counts 1..c (bounds over a range of counts: in_lo and out_lo rise with c). */
typedef struct optimal_dram {
  double *in_lo, *in_hi, *out_lo, *out_hi;
  int *hops_in, *hops_out;
  double *in_hi_max, *out_hi_max;
  int *hops_max;
} optimal_dram;

/* Fills d (owned arrays, C + 1 entries each) for c (borrowed, uniform, with ports); optimal_dram_clear
 * frees them (and is a no-op on a zeroed d).  MP_NOMEM. */
mp_status optimal_dram_tables(const chip *c, optimal_dram *d, mp_error *err);
void optimal_dram_clear(optimal_dram *d);

/* The threshold DPs' building blocks (optimal.c), shared by the inference DP and the training DP
 * (optimal_train.c). */

/* Bit k of a bitset of core totals. */
static inline int optimal_bit(const uint64_t *set, int k) { return (int)((set[k / 64] >> (k % 64)) & 1); }

/* dst |= union over d in [a, b] of (src << d), within bits 0..C (words 64-bit words; tmp is scratch of
 * as many): the run is widened by doubling, then shifted by a. */
void optimal_or_shifted(uint64_t *dst, const uint64_t *src, int a, int b, int C, int words, uint64_t *tmp);

/* Appends the run [a, b] to the n runs of runs (pairs, in increasing order of a), joined to the last when
 * they touch or overlap; returns the number of runs. */
int optimal_runs_add(int *runs, int n, int a, int b);

/* A threshold DP as optimal_search sees it: check(ctx, T) says whether a plan within T exists and keeps
 * its tables; value_within(ctx, T) recovers such a plan after a successful check and returns its value
 * in the relaxation (negative on a failure); candidates(ctx, lo, hi, out) lists the stage values strictly
 * between lo and hi, at most OPTIMAL_MAX_CANDIDATES of them (-1 when there are more).  A DP that can fail
 * otherwise records it in ctx for its caller. */
typedef struct optimal_dp {
  int (*check)(void *ctx, double T);
  double (*value_within)(void *ctx, double T);
  int (*candidates)(void *ctx, double lo, double hi, double *out);
  void *ctx;
} optimal_dp;
#define OPTIMAL_MAX_CANDIDATES 4096

/* The least feasible T of a relaxation, given that lo is infeasible and hi the value of a feasible plan:
 * bisection on T, each feasible midpoint lowering hi to a plan's value, until the candidates between lo
 * and hi are few enough to search exactly.  Returns it, or -1 on a failure of the DP or out of memory;
 * the DP's tables are then those of its last check, which need not be at the result. */
double optimal_search(const optimal_dp *dp, double lo, double hi);

typedef struct opt {
  const graph *g;
  const chip *c;
  opcost *oc; /* the ops' works; tabulated unless flat */
  int flat;   /* no core model: a stage's work is its flops, and compute(c) = A/B + D/c */
  int kind;   /* LOW or HIGH */
  int L, C, words;
  double f, S, gamma, B, lat;
  int max_hops; /* the longest XY route on the mesh */
  optimal_dram dram;          /* of a uniform chip with ports; all NULL otherwise */
  uint64_t *reach;           /* (L + 1) * words: R(r) */
  uint64_t *tmp;             /* words */
  int *up;                   /* L + 1: least element of the upward-closed part of R(r), C + 1 if none */
  int *runs;                 /* scratch: S(l,r) as [a, b] pairs, at most C + 1 of them */
  int *kruns, n_kruns;       /* scratch: the counts whose compute is within T, as [a, b] pairs (core model) */
  long checks;
  int strict; /* a chip without DRAM ports: only counts whose share fits SRAM (memory first) */
} opt;

/* Prepares o for g on c (both borrowed): the ops' works (tabulated on a core model), the DRAM tables
 * of a uniform chip with ports, the DP's bitsets.  optimal_opt_free frees what it holds. */
mp_status optimal_opt_init(opt *o, const graph *g, const chip *c, mp_error *err);
void optimal_opt_free(opt *o);

/* Adds layer r to the right of the stage first..r-1 (its sums in s). */
void optimal_figs_add(const opt *o, figs *s, int first, int r);

/* The stage's time on c cores in o's relaxation (o->kind). */
double optimal_time_at(const opt *o, const figs *s, int c);

/* S(l,r) at T within room cores, as runs [a, b] in o->runs; returns the number of runs, or -1 when
 * neither this stage nor any longer one with the same first layer can be within T (claim 3). */
int optimal_stage_counts(opt *o, const figs *s, double T, int room);

/* A plan as stage arrays, costed on the full model: its period, the value of the objective it is
 * judged by (the period itself for time) and the 8-norm of its stage times over the period (the
 * tie-break: lower means the near-slowest stages have more slack). */
typedef struct candidate {
  int n, *layers, *cores;
  double period, value, norm;
  objective obj; /* what value measures (objective.h) */
  int fits;      /* every stage fits its cores' SRAM */
  int mem_first; /* a plan that fits beats one that does not (chips without DRAM ports: memory has no time) */
} candidate;

/* Costs x on the full model (m borrowed): its period, its value under x->obj and the tie-break norm;
 * stage_s is scratch for x->n entries. */
mp_status optimal_cost_candidate(cost_model *m, candidate *x, double *stage_s, mp_error *err);

/* 1 when a is better than b (both judged by one objective): (with mem_first, fitting first, then) a
 * lower value, or the same value and a lower norm. */
int optimal_better(const candidate *a, const candidate *b);

/* 1 when a is better than b by more than the tie-break: (with mem_first) a fits where b does not, or
 * (fitting alike, or without mem_first) a has the lower value. */
int optimal_clearly_better(const candidate *a, const candidate *b);

/* Sets x's stages (room for p's) to p's (borrowed); its figures are left to cost. */
void optimal_candidate_of(candidate *x, const plan *p);

/* Copies from's stages (to has room for them) and figures into to. */
void optimal_copy_candidate(candidate *to, const candidate *from);

/* Improves *best (room for cap stages) by local search on the full model, at most max_rounds sweeps;
 * returns the sweeps run, or -1 on an error (err set). */
int optimal_repair(cost_model *m, candidate *best, int cap, int max_rounds, mp_error *err);
/* Sweeps of the repair at most (each costs about 4 x stages full evaluations). */
#define OPTIMAL_REPAIR_ROUNDS 64

/* The deep search, where the repaired plan is far from the certified bound (the link and DRAM-port loads
 * bind, and the repair's one-step moves stop in a local optimum): rl's search of a model (rl_search.h:
 * regrouping, random kicks each followed by steepest ascent (with kick 1; none with 0), regrouping
 * again, the pair polish) from x's plan, scored by r (borrowed; initialised on g with n_cores cores),
 * its kicks drawn from a generator seeded by seed.  x (room for g->n_ops stages) becomes the best plan
 * the search scored (x's own included, so never worse by r); its figures are the caller's to cost.
 * Returns 0, or -1 on an error (err set). */
int optimal_deep_search(const graph *g, int n_cores, uint64_t seed, int kick, rl_reward *r, candidate *x,
                        mp_error *err);

/* The seed of g on c: the plan is a function of the inputs. */
static inline uint64_t optimal_deep_seed(const graph *g, const chip *c) {
  return g->hash ^ (c->hash * UINT64_C(0x9e3779b97f4a7c15));
}

/* The deep search for the period (optimal.c; kicks with kick 1): from *best, on the model m of g on c
 * (all borrowed), then the repair from the best plan it finds.  *best becomes that plan when it is better
 * (optimal_better) by more than the tie-break: a lower period, or with mem_first a plan that fits
 * where *best does not.  Returns 1 when *best changed, 0 when the search found nothing better, -1 on
 * an error (err set). */
int optimal_deep_repair(cost_model *m, const graph *g, const chip *c, int kick, candidate *best, mp_error *err);

/* The deep search from every start (optimal.c), where one start's is not enough: its local optimum can
 * be far from another's.  cand holds n_cand costed starts of which cand[*pick] is repaired; the others
 * are repaired, then the deep search (optimal_deep_repair) runs from *pick's plan with its kicks and
 * from the others' without (regrouping and the pair polish find what a second start adds, at a fifth
 * of the time: the transformer encoder on mesh4x4 reached the same plan, 10.8 % faster in the model),
 * in the order of their values, each repaired plan once, until the best plan's period is at most
 * `enough`.  *pick becomes the best (optimal_better), *searched the number of searches run.  Returns 1
 * when the best is better than *pick's repaired plan, 0 when not, -1 on an error (err set). */
int optimal_deep_starts(cost_model *m, const graph *g, const chip *c, candidate *cand, int n_cand, int *pick,
                        double enough, int *searched, mp_error *err);
#define OPTIMAL_DEEP_REGROUP_ROUNDS 100
#define OPTIMAL_DEEP_KICKS 500        /* kicks at most ... */
#define OPTIMAL_DEEP_KICK_BUDGET 8000 /* ... and at most this over the core count (a kick's ascent costs more
                                         moves and longer evaluations on a larger chip) */
#define OPTIMAL_DEEP_KICK_MOVES 16
/* ... and no more kicks, OPTIMAL_DEEP_KICK_CHUNK at a time, once they have scored this many plans (a
 * count, not a clock, so the plan is the same on any machine): about 0.5 s of ResNet-50 on 4x4, 4 s of
 * ResNet-50 at batch 8 on 8x8. */
#define OPTIMAL_DEEP_EVALS 60000L
#define OPTIMAL_DEEP_KICK_CHUNK 10
#define OPTIMAL_DEEP_PAIR_ROUNDS 64
/* When it runs: the repaired period (inference) more than OPTIMAL_DEEP_GAP above the bound, on at most
 * OPTIMAL_DEEP_MAX_CORES cores; for training, on at most OPTIMAL_DEEP_TRAIN_MAX_CORES.  Measured on
 * bench --fidelity's matrix (40 cases per mesh), inference: on 4x4 optimal's plans simulated faster on
 * 14 cases and slower on 1 (by more than 0.5 %; geometric mean +2.9 %, AlexNet with 1 MiB 1.65x), on
 * 8x8 faster on 7 and slower on 9 (geometric mean -0.2 %), where the model is optimistic about the
 * plans it finds (ResNet-50 with 1 MiB: 9.6 % faster in the model, 11 % slower simulated, model /
 * simulated 0.81); training: faster on 10 of 12 cells of 8x8 (README, "Training").  On 8x8 again on
 * 2026-11-30, with the simulator's steady state and link floor (33 of the 40 cases: ViT-B/16's searches
 * were stopped after the first took 406 s): faster on 10 and slower on 6, geometric mean +1.5 %,
 * MobileNet-V2 with 1 MiB +53 % (35 % faster in the model), GoogLeNet with 1 MiB -13.8 %, ResNet-50 with
 * 1 MiB -5.7 % (12 % faster in the model, unsettled both); but solves of up to 39 s (ResNet-50 with
 * 1 MiB, 0.03 s without) where the slowest 8x8 case takes 1.7 s without. */
#define OPTIMAL_DEEP_GAP 0.01
#define OPTIMAL_DEEP_MAX_CORES 16
#define OPTIMAL_DEEP_TRAIN_MAX_CORES 64
/* ... and on more cores when the plan it starts from has at most this many stages: the search scores
 * plans by the tens of thousands and a plan's training model costs about its stage count (with no stage
 * limit, the transformer on 16x16, 1F1B, M = 8: 124 stages, 161 s to find a plan 12 % faster simulated;
 * ResNet-50 there: 25 stages, 3.4 s). */
#define OPTIMAL_DEEP_TRAIN_BIG_STAGES 32

/* The fast methods whose plans join the relaxations' as starts of the repair (the model's best start may
 * come from anywhere: a relaxation's plan ignores the link loads), and how many starts there are. */
#define OPTIMAL_OTHER_STARTS 4
#define N_STARTS (2 + OPTIMAL_OTHER_STARTS)
extern const char *const optimal_other_starts[OPTIMAL_OTHER_STARTS];

/* Appends their plans on g and c (borrowed) to cand, from *n on (room for N_STARTS, each with room for as
 * many stages as g has layers). */
mp_status optimal_method_starts(const graph *g, const chip *c, candidate *cand, int *n, mp_error *err);

#endif
