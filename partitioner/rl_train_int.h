/* rl_train internals shared by the trainer (rl_train.c), the local searches on its best plans
 * (rl_search.c) and its checkpoints (rl_ckpt.c).  Not a public header.
 * Invariant: inst[i].best is a valid state of inst[i].in.env and best_eval its evaluation, the best
 * (rl_trainer_better) of every plan evaluated on instance i. */
#ifndef MESHPIPE_RL_TRAIN_INT_H
#define MESHPIPE_RL_TRAIN_INT_H

#include "rl_train.h"
#include "rng.h"
#include "strbuf.h"

/* One instance and what the trainer found on it. */
typedef struct rl_inst_state {
  rl_instance in;
  rl_eval init_eval, best_eval;
  int *best; /* owned, n_cores entries */
} rl_inst_state;

struct rl_trainer {
  rl_train_config cfg;
  int n_inst, n_cores, n_in, n_out; /* n_in, n_out: numbers per state (all rows), actions per state */
  int rows;                          /* policy rows per state (neighbour pairs) */
  rl_inst_state *inst;
  rl_policy *policy;
  rng rng;
  long episodes_done, iterations, evaluations, steps;
  double mean_final, entropy, grad_norm;
  /* batch buffers, grown on demand */
  int cap_rows, n_rows;
  double *X, *rew, *ret, *adv;
  unsigned char *masks;
  int *act, *ep_start;
  double *base_sum;
  int *base_cnt;
  int *cur, *next, *cand;
  double *probs;
  rl_policy_ws ws, pws; /* training passes; single-state passes */
  double *grad;
  /* the batch's draws and start plans, fixed before any episode is played */
  unsigned char *ep_from_best; /* batch: 1 when episode e starts from the best plan */
  rng *ep_rng;                 /* batch: episode e's own stream */
  int *snap_best;              /* n_inst x n_cores: the best plans when the batch began */
  rl_eval *snap_eval;          /* n_inst */
  /* episode records: this process's, and where each episode's starts in the gathered bytes */
  strbuf rec;
  const unsigned char **ep_rec; /* batch */
  double *px;                   /* n_in: one state's features while playing */
  unsigned char *pmask;         /* n_out */
  int rank, ranks;
  rl_gather_fn gather;
  void *gather_ctx;
};

/* Scores a plan of instance i (borrowed, a valid state) into *ev, counts the evaluation and keeps the
 * plan as the instance's best when it is better.  The reward callback's error, or MP_RUN when the
 * reward or balance is not finite. */
mp_status rl_trainer_evaluate(rl_trainer *t, int i, const int *arranged, rl_eval *ev, mp_error *err);

/* rl_trainer_evaluate of every plan one allowed action leads to from `from` (borrowed, a valid state of
 * instance i), in action order: allowed[a] says whether action a applies and evs[a] is its plan's
 * evaluation when it does (both n_out entries, caller-owned).  A distributed trainer
 * (rl_trainer_distribute) scores the actions a with a mod ranks == rank and gathers the others' scores,
 * so every process counts and keeps alike, as one that scored them all. */
mp_status rl_trainer_evaluate_actions(rl_trainer *t, int i, const int *from, unsigned char *allowed, rl_eval *evs,
                                      mp_error *err);

#endif
