/* rl_env: the decision process of the RL partitioner, on the arranged_core form of a plan.
 *
 * A state is an arranged_core list (see plan.h): n_cores entries, none negative, summing to
 * n_layers, the last one > 0.  The policy sees it as 2·n_cores features, normalised so that one
 * network serves every graph on the same core count:
 *   x[i]           = arranged[i] · n_cores / n_layers          (1 for every core of an even split)
 *   x[n_cores + i] = macs of the layers entry i takes · n_cores / total macs   (0 if the graph has none)
 * There are 4·(n_cores − 1) actions, four per pair of neighbouring cores (i, i+1), numbered
 * 4·i + k, each a literal edit of the list:
 *   k = 0 (a) merge both into i+1's group:  arranged[i+1] += arranged[i], arranged[i] = 0
 *   k = 1 (b) merge both into i's group:    arranged[i] += arranged[i+1], arranged[i+1] = 0
 *             (core i+1 then joins i+2's group; never for i+1 = the last core)
 *   k = 2 (c) give the last layer of i to i+1:   arranged[i] −= 1, arranged[i+1] += 1
 *   k = 3 (d) give the first layer of i+1 to i:  arranged[i+1] −= 1, arranged[i] += 1
 * An action applies when it changes the list and keeps it a valid plan (the entries it takes from
 * are positive; the last entry stays positive); one that cannot apply leaves the state unchanged
 * and is masked out of the policy.  An rl_env is immutable after rl_env_new. */
#ifndef MESHPIPE_RL_ENV_H
#define MESHPIPE_RL_ENV_H

#include <stdint.h>

#include "err.h"
#include "graph.h"

enum { RL_ACT_MERGE_RIGHT = 0, RL_ACT_MERGE_LEFT = 1, RL_ACT_GIVE_RIGHT = 2, RL_ACT_TAKE_RIGHT = 3 };

typedef struct rl_env {
  int n_cores, n_layers;
  int n_actions;    /* 4 · (n_cores − 1) */
  int n_features;   /* 2 · n_cores */
  double *cum_macs; /* n_layers + 1 prefix sums of the layers' MACs, owned */
} rl_env;

/* Builds the process for n_cores >= 2 cores and n_layers >= 1 layers whose MACs are layer_macs
 * (borrowed, copied; may be NULL for all zero).  *out is owned by the caller (rl_env_free). */
mp_status rl_env_new(int n_cores, int n_layers, const uint64_t *layer_macs, rl_env **out, mp_error *err);

/* The same for a graph (borrowed): its layers and their MACs. */
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

/* Fills x[n_features] (caller-owned) with the normalised features of arranged. */
void rl_env_features(const rl_env *e, const int *arranged, double *x);

#endif
