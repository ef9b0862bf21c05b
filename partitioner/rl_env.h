/* rl_env: the decision process of the RL partitioner, on the arranged_core form of a plan.
 *
 * A state is an arranged_core list (see plan.h): n_cores entries, none negative, summing to
 * n_layers, the last one > 0.  There are 4·(n_cores − 1) actions, four per pair of neighbouring
 * cores (i, i+1), numbered 4·i + k, each a literal edit of the list:
 *   k = 0 (a) merge both into i+1's group:  arranged[i+1] += arranged[i], arranged[i] = 0
 *   k = 1 (b) merge both into i's group:    arranged[i] += arranged[i+1], arranged[i+1] = 0
 *             (core i+1 then joins i+2's group; never for i+1 = the last core)
 *   k = 2 (c) give the last layer of i to i+1:   arranged[i] −= 1, arranged[i+1] += 1
 *   k = 3 (d) give the first layer of i+1 to i:  arranged[i+1] −= 1, arranged[i] += 1
 * An action applies when it changes the list and keeps it a valid plan (the entries it takes from
 * are positive; the last entry stays positive); one that cannot apply leaves the state unchanged
 * and is masked out of the policy.
 *
 * Features.  Per core c, in the group G of k cores (ending at core g1) that holds it:
 *   f0 = arranged[c] · n_cores / n_layers               arranged_core, normalised (1 = even split)
 *   f1 = MACs of the layers entry c takes · n_cores / total MACs       arranged_macs, normalised
 *   f2 = (MACs of G / k) / the largest such figure over the groups     compute load (1 = heaviest)
 *   f3 = (weight bytes of G / k) / the largest such figure             memory load (1 = heaviest)
 *   f4 = 1 when c ends its group (arranged[c] > 0), else 0
 *   f5 = k · (number of groups) / n_cores                              group size (1 = average)
 * all derived from arranged_core and the layers' MACs and weights.  The policy sees one row per
 * neighbour pair i: the core features of cores i−1, i, i+1, i+2 (zeros off the chip) and two flags
 * (core i−1 exists, core i+2 exists): RL_PAIR_FEATURES numbers that decide the pair's four action
 * logits.  A row means the same on any graph and any core count, so one policy serves them all.
 * An rl_env is read-only after rl_env_new except for its feature scratch space: one thread at a time. */
#ifndef MESHPIPE_RL_ENV_H
#define MESHPIPE_RL_ENV_H

#include <stdint.h>

#include "err.h"
#include "graph.h"

enum { RL_ACT_MERGE_RIGHT = 0, RL_ACT_MERGE_LEFT = 1, RL_ACT_GIVE_RIGHT = 2, RL_ACT_TAKE_RIGHT = 3 };

#define RL_CORE_FEATURES 6
#define RL_PAIR_FEATURES (4 * RL_CORE_FEATURES + 2)
#define RL_PAIR_ACTIONS 4

typedef struct rl_env {
  int n_cores, n_layers;
  int n_actions;       /* 4 · (n_cores − 1) */
  int n_pairs;         /* n_cores − 1 rows of features per state */
  int n_features;      /* n_pairs · RL_PAIR_FEATURES numbers per state */
  double *cum_macs;    /* n_layers + 1 prefix sums of the layers' MACs, owned */
  double *cum_weights; /* n_layers + 1 prefix sums of their weight bytes, owned */
  double *core;        /* owned scratch: n_cores × RL_CORE_FEATURES */
} rl_env;

/* Builds the process for n_cores >= 2 cores and n_layers >= 1 layers whose MACs and weight bytes
 * are layer_macs and layer_weights (borrowed, copied; either may be NULL for all zero).  *out is
 * owned by the caller (rl_env_free). */
mp_status rl_env_new(int n_cores, int n_layers, const uint64_t *layer_macs, const uint64_t *layer_weights,
                     rl_env **out, mp_error *err);

/* The same for a graph (borrowed): its layers, their MACs and weight bytes. */
mp_status rl_env_from_graph(const graph *g, int n_cores, rl_env **out, mp_error *err);

/* Frees e; rl_env_free(NULL) is a no-op. */
void rl_env_free(rl_env *e);

/* 1 when arranged (n_cores entries, borrowed) is a valid state of e, else 0. */
int rl_env_valid_state(const rl_env *e, const int *arranged);

/* 1 when action applies to the valid state arranged, 0 when it cannot (or is out of range). */
int rl_env_can_apply(const rl_env *e, const int *arranged, int action);

/* Writes the successor of arranged under action into next (n_cores entries, caller-owned; it may be
 * the same array as arranged).  Returns 1 when the action applied, 0 when next is an unchanged copy. */
int rl_env_apply(const rl_env *e, const int *arranged, int action, int *next);

/* Fills mask[n_actions] (caller-owned) with 1 for the actions that apply; returns how many do. */
int rl_env_mask(const rl_env *e, const int *arranged, unsigned char *mask);

/* Fills x[n_features] (caller-owned; n_pairs rows of RL_PAIR_FEATURES) with the features of the
 * valid state arranged. */
void rl_env_features(rl_env *e, const int *arranged, double *x);

#endif
