/* method_int: what the partitioner files (optimal.c, seed_split.c, greedy.c, baseline.c,
 * rl_method.c) share with the table in method.c.  Not part of the public API. */
#ifndef MESHPIPE_METHOD_INT_H
#define MESHPIPE_METHOD_INT_H

#include "method.h"

/* What optimal found (optimal.c): its plan's period in the full model, the certified lower bound on
 * every plan's period (the optimum of its lower relaxation), and whether the two are equal. */
typedef struct optimal_result {
  double period_s, lower_s; /* the plan's period in the model, and the certified lower bound on any plan's */
  double value, lower_value; /* the plan's objective (the period for time), and its certified lower bound */
  int exact;                 /* value <= lower_value: nothing can be better */
} optimal_result;

/* method_optimal minimising obj, with its figures in *res (caller-owned). */
mp_status optimal_solve(const graph *g, const chip *c, objective obj, plan **out, optimal_result *res,
                        method_report *rep, mp_error *err);

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
