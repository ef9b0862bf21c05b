/* method_int: what the partitioner files (optimal.c, seed_split.c, greedy.c, baseline.c,
 * rl_method.c) share with the table in method.c.  Not part of the public API. */
#ifndef MESHPIPE_METHOD_INT_H
#define MESHPIPE_METHOD_INT_H

#include "method.h"

/* When no plan fits SRAM, optimal returns the plan with the least bottleneck among those whose
 * largest per-core memory ratio is within this fraction of the least possible ratio.  Without the
 * slack the ratio alone decides, and where it is set by an activation no core count can shrink
 * (VGG-16's first layers), a few bytes of weight share less on one stage outweigh any stage time:
 * VGG-16 on 16x16 got 210 cores on its first stage and one core, 7.4 ms, on the next. */
#define OPTIMAL_MEM_SLACK 0.01

/* The methods of the table (see method.c for their one-line summaries). */
mp_status method_optimal(const graph *g, const chip *c, const method_options *o, plan **out, method_report *rep,
                         mp_error *err);
mp_status method_seed_split(const graph *g, const chip *c, const method_options *o, plan **out, method_report *rep,
                            mp_error *err);
mp_status method_greedy(const graph *g, const chip *c, const method_options *o, plan **out, method_report *rep,
                        mp_error *err);
mp_status method_even(const graph *g, const chip *c, const method_options *o, plan **out, method_report *rep,
                      mp_error *err);
mp_status method_balanced(const graph *g, const chip *c, const method_options *o, plan **out, method_report *rep,
                          mp_error *err);
/* rl (rl_method.c): from o->init's plan (default "even"), a warm-up of RL_METHOD_WARMUP_EPISODES
 * episodes on the analytical model (thousands of evaluations a second), then o->episodes episodes
 * (-1: the default) on the simulator, continuing the warm-up's policy (or fine-tuning o->policy) from
 * the warm-up's best plan as well as the initial one; returns the best plan seen on the simulator.
 * With 0 episodes it only plays the policy (o->policy, or a fresh one) greedily from the initial
 * plan, then polishes.  It simulates on o->sim, or in a child process when that is NULL; its defaults
 * are in rl_method.h. */
mp_status method_rl(const graph *g, const chip *c, const method_options *o, plan **out, method_report *rep,
                    mp_error *err);

/* Splits n_cores cores over n stages in proportion to weight[i] >= 0 (all equal when every weight is
 * 0), each stage getting at least one (n <= n_cores): largest remainders, ties to the lower index.
 * out has n entries. */
void method_share_cores(const double *weight, int n, int n_cores, int *out);

/* Builds the plan of stages with the given layer counts (each >= 1) whose cores are shared by
 * method_share_cores over weight (NULL: equal shares).  n_stages <= n_cores. */
mp_status method_plan_with_shares(const int *stage_layers, const double *weight, int n_stages, int n_cores, plan **out,
                                  mp_error *err);

#endif
