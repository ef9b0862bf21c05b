/* rl_train: REINFORCE training of the RL partitioner's policy, as init / iterate / test steps over a
 * caller-owned trainer, so the caller owns logging, checkpoints (rl_ckpt.h) and stopping.  The local
 * searches that improve a trainer's best plans without learning are in rl_search.h, the rewards in
 * rl_reward.h.
 *
 * An instance is one graph to play on: its rl_env, an initial plan (arranged_core) and a reward
 * callback that scores a plan (higher is better).  One iteration plays `batch` episodes (episode e on
 * instance e mod n_instances), each from a start plan for at most max_steps moves, then makes one
 * Adam step on the REINFORCE loss:
 *   - step reward r = R(s') − R(s), so an episode's rewards add up to its improvement;
 *   - samples = K > 1 (the default): at each move the policy proposes K actions from the same state,
 *     all are evaluated, the episode follows the best, and each proposal's advantage is its step
 *     reward minus the mean of the other K − 1 (a leave-one-out baseline, unbiased and free);
 *   - samples = 1: one action per move, return G_t = Σ_k gamma^k r_{t+k}, baseline = the batch mean
 *     of G at the same step index;
 *   - advantages are normalised by their batch standard deviation, so one learning rate serves every
 *     reward scale; an entropy bonus keeps the policy exploring; the gradient's norm is clipped.
 * Start plans: the instance's initial plan, or with probability restart_best the best plan found
 * before the batch began (so the search can walk further than max_steps from the initial plan).
 * Every evaluated plan is a candidate: the trainer keeps, per instance, the best one seen (with
 * feasible_first, plans that fit memory first; then higher reward, then higher balance; ties keep
 * the earlier).  An episode also ends when its reward reaches target_reward.
 * The learning signal is R + balance_weight · balance: the bottleneck alone is flat across the many
 * moves that leave the slowest stage alone, and the balance term (an 8-norm of the stage times and
 * the memory excess of every stage) tells the policy, and the polish step, which of those moves
 * eases the near-slowest or over-full stages.
 * Determinism: the trainer owns one rng seeded from cfg.seed; at the start of a batch it draws each
 * episode's start and splits off each episode's own rng, so the episodes of a batch are independent
 * and may be played by several processes (rl_trainer_distribute).  The same configuration, instances
 * and rewards give bit-identical policies and plans with any number of processes, and a checkpoint
 * taken between iterations resumes to exactly the state the uninterrupted run has at that point. */
#ifndef MESHPIPE_RL_TRAIN_H
#define MESHPIPE_RL_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "rl_env.h"
#include "rl_policy.h"
#include "rl_reward.h"

typedef struct rl_train_config {
  uint64_t seed;
  long episodes;       /* total episodes (>= 0) */
  int batch;           /* episodes per policy update (>= 2: the baseline is a batch mean) */
  int max_steps;       /* actions per episode (>= 1) */
  int hidden, n_hidden; /* policy shape when the trainer creates the policy */
  double lr, entropy, gamma, clip_norm;
  double restart_best;  /* probability that an episode starts from the best plan so far, in [0, 1] */
  double balance_weight; /* weight of rl_eval.balance in the learning signal (>= 0) */
  int samples;           /* K proposals drawn per state (1..1024); see above */
  int feasible_first;    /* 1: a plan that fits memory beats any plan that does not (default 0) */
  double target_reward; /* an episode ends once its reward reaches this (+inf: never) */
} rl_train_config;

/* Fills the defaults (see partitioner/README.md, "RL partitioner"): seed 1, episodes 0 (the caller
 * decides), batch 8, max_steps min(2·n_cores, 16), hidden 16 × 2 layers, lr 3e-3, entropy
 * 0.01, gamma 0.9, clip_norm 1, restart_best 0.75, balance_weight 1, samples 8, feasible_first 0 (DRAM streams
 * are charged in time, so a plan that does not fit competes on its period), target +inf. */
void rl_train_config_default(rl_train_config *c, int n_cores);

/* MP_USAGE naming the first out-of-range field, else MP_OK. */
mp_status rl_train_config_check(const rl_train_config *c, mp_error *err);

/* One graph to train on.  All pointers borrowed; they must outlive the trainer. */
typedef struct rl_instance {
  rl_env *env; /* its feature scratch is used */
  const int *init; /* initial plan: a valid state of env */
  rl_reward_fn reward;
  void *ctx;
  uint64_t key; /* identifies the instance in checkpoints (e.g. graph hash ^ chip hash) */
} rl_instance;

/* Trainer statistics, for progress lines and reports. */
typedef struct rl_train_stats {
  long episodes, iterations, evaluations, steps;
  double mean_final_reward; /* mean reward of the last batch's final states */
  double entropy;           /* mean policy entropy over the last batch */
  double grad_norm;         /* before clipping, last update */
} rl_train_stats;

typedef struct rl_trainer rl_trainer;

/* Init: a trainer over n_inst >= 1 instances sharing one core count (all borrowed).  policy (borrowed,
 * copied; may be NULL) is the starting policy — any policy of RL_PAIR_FEATURES inputs and
 * RL_PAIR_ACTIONS outputs, trained on any core count; NULL creates one of cfg's shape from the seed.
 * Evaluates each initial plan.  *out is owned (rl_trainer_free). */
mp_status rl_trainer_new(const rl_train_config *cfg, const rl_instance *inst, int n_inst, const rl_policy *policy,
                         rl_trainer **out, mp_error *err);

void rl_trainer_free(rl_trainer *t);

/* Iterate: one batch of episodes and one policy update.  Returns the reward callback's error, if any
 * (the trainer is then left as before the iteration only in its policy; do not continue). */
mp_status rl_trainer_iterate(rl_trainer *t, mp_error *err);

/* Test: 1 once cfg.episodes episodes have been played. */
int rl_trainer_done(const rl_trainer *t);

void rl_trainer_get_stats(const rl_trainer *t, rl_train_stats *out);

/* The policy being trained (borrowed; valid until the trainer is freed). */
const rl_policy *rl_trainer_policy(const rl_trainer *t);

/* 1 when a is a better plan than b: with cfg.feasible_first, fitting memory first; then the higher
 * reward, then the higher balance (equals are not better, so ties keep the earlier plan). */
int rl_trainer_better(const rl_trainer *t, const rl_eval *a, const rl_eval *b);

/* Best plan seen on instance i: arranged (borrowed, n_cores entries) and its evaluation. */
const int *rl_trainer_best(const rl_trainer *t, int i, rl_eval *eval);

/* The evaluation of instance i's initial plan. */
void rl_trainer_init_eval(const rl_trainer *t, int i, rl_eval *eval);

/* Evaluates a candidate plan for instance i (borrowed, a valid state) and keeps it as the best if it
 * is better — e.g. the best plan of a search on a cheaper reward.  Episodes that restart from the
 * best plan then start from it. */
mp_status rl_trainer_offer(rl_trainer *t, int i, const int *arranged, mp_error *err);

/* Plays the policy greedily (most probable allowed action) from instance i's initial plan for
 * `steps` actions, evaluating every plan on the way; improves the best plan like an episode does.
 * Does not change the policy or the rng.  Used to apply a trained policy without training. */
mp_status rl_trainer_greedy(rl_trainer *t, int i, int steps, mp_error *err);

/* Spreading a batch over processes (MPI ranks, say).  A gather callback is called once per
 * iteration by every process, like MPI_Allgatherv: given this process's bytes (mine, len, borrowed)
 * it returns in *all a malloc'd concatenation of every process's bytes, in any order (the trainer
 * frees it), and its length in *all_len.  The processes must run the same machine type. */
typedef mp_status (*rl_gather_fn)(void *ctx, const void *mine, size_t len, void **all, size_t *all_len,
                                  mp_error *err);

/* From the next iteration on, this process plays only the episodes e of each batch with
 * e mod ranks == rank and gathers the others' records through gather (ctx is the callback's,
 * borrowed); every process then adds the whole batch in episode order, so all of them hold the
 * policy, best plans and counters of one process that played every episode (provided the reward
 * callbacks give the same values everywhere).  A new trainer is rank 0 of 1 and needs no gather. */
void rl_trainer_distribute(rl_trainer *t, int rank, int ranks, rl_gather_fn gather, void *ctx);

#endif
