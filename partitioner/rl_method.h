/* rl_method: the defaults of the `rl` partitioner and the training configuration it and `meshpipe
 * train` start from.  The method itself, method_rl, is declared with the table's methods
 * (method_int.h); it searches on the simulator lent in method_options.sim, or in a forked child
 * process with an engine of its own when none is lent (SimGrid starts one engine per process). */
#ifndef MESHPIPE_RL_METHOD_H
#define MESHPIPE_RL_METHOD_H

#include <stdint.h>

#include "rl_train.h"

/* Defaults of the rl method (chosen so a plain `-m rl` meets the targets in partitioner/README.md):
 * episodes on up to 16 cores / more, and the polish rounds that end every run. */
#define RL_METHOD_EPISODES_SMALL 64
#define RL_METHOD_EPISODES 64
#define RL_METHOD_POLISH_ROUNDS 4
/* Rounds of the pair polish (rl_search_polish_pairs) on the analytical model after the warm-up. */
#define RL_METHOD_MODEL_PAIR_ROUNDS 64
/* The model-side search after the warm-up: regrouping rounds (rl_search_regroup), then kicks of
 * up to RL_METHOD_MODEL_KICK_MOVES random moves each (rl_search_kick), then regrouping again. */
#define RL_METHOD_MODEL_REGROUP_ROUNDS 100
#define RL_METHOD_MODEL_KICKS 5000
#define RL_METHOD_MODEL_KICK_MOVES 16
/* Kicks between two progress reports of the model search (on 32x32 its 312 kicks took minutes). */
#define RL_METHOD_KICKS_REPORTED 25
/* Episodes of the warm-up on the analytical model that precedes the simulator's episodes (of twice
 * the simulator episodes' length). */
#define RL_METHOD_WARMUP_EPISODES 400
/* The simulator's and the warm-up's default episodes and the model search's kicks for a core count:
 * the figures above up to 64 cores, scaled by 64 / n_cores beyond (at least 8, 50 and 50).  A kick's
 * ascent scores every allowed move at each step, and a plan's moves and their model evaluations grow
 * with the mesh: on 16x16 5 000 kicks scored 7.4 million plans of ResNet-50 in 87 s (of 116 s with one
 * simulator episode) and found no better one. */
long rl_method_default_episodes(int n_cores);
long rl_method_warmup_episodes(int n_cores);
long rl_method_model_kicks(int n_cores);

/* The training configuration the rl method and `meshpipe train` start from. */
void rl_method_config(rl_train_config *cfg, int n_cores, uint64_t seed);

#endif
