/* rl_train internals shared by the trainer (rl_train.c), the local searches on its best plans
 * (rl_search.c) and its checkpoints (rl_ckpt.c).  Not a public header.
 * Invariant: inst[i].best is a valid state of inst[i].in.env and best_eval its evaluation, the best
 * (rl_trainer_better) of every plan evaluated on instance i. */
#ifndef MESHPIPE_RL_TRAIN_INT_H
#define MESHPIPE_RL_TRAIN_INT_H

#include <stdint.h>
#include <stdlib.h>

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

/* A round of a local search that scores a fixed list of candidate plans (regrouping, pair polish) and
 * then keeps the best of them, spread over a distributed trainer's ranks: each rank scores the
 * candidates it owns and remembers the best of those (the first in the round's order among equals, as
 * one process keeping them one by one would), and the round's end gathers every rank's. */
typedef struct rl_round {
  int *plan;       /* owned, n_cores: the best candidate this rank scored, when found */
  rl_eval ev;      /* its evaluation */
  uint64_t order;  /* its place in the round's order of candidates */
  int found;       /* 1 when it beats the instance's best at the round's start */
  long scored;     /* candidates this rank scored */
} rl_round;

/* Starts a round on trainer t: r is caller-owned and freed by rl_round_end (MP_NOMEM). */
mp_status rl_round_begin(const rl_trainer *t, rl_round *r, mp_error *err);

/* Whether this rank scores the candidates of share k (k mod ranks == rank). */
static inline int rl_round_owns(const rl_trainer *t, uint64_t k) { return k % (uint64_t)t->ranks == (uint64_t)t->rank; }

/* Scores candidate plan (borrowed, a valid state of instance i) at place `order` of the round (orders
 * ascend as the round goes) and remembers it when it beats the best so far.  The reward's error. */
mp_status rl_round_score(rl_trainer *t, int i, rl_round *r, uint64_t order, const int *plan, mp_error *err);

/* Drops round r without ending it (after an error: nothing is kept). */
static inline void rl_round_drop(rl_round *r) {
  free(r->plan);
  r->plan = NULL;
}

/* Ends the round: gathers every rank's best and count, counts every candidate scored as an evaluation
 * and keeps the best (the earliest among equals) as instance i's best when it beats it, so every rank
 * ends as one process that scored every candidate in order.  Frees r's plan; MP_RUN when the gathered
 * bytes are damaged, or the gather's error. */
mp_status rl_round_end(rl_trainer *t, int i, rl_round *r, mp_error *err);

#endif
