/* rl_train: REINFORCE with a batch-mean baseline over the rl_env decision process.  See rl_train.h.
 *
 * Why these choices (training on a simulator's runtime is noisy and the action space is large):
 * - step rewards are differences of plan rewards, so the policy is credited for improving a plan
 *   from wherever it starts, and the same policy serves any start plan;
 * - a discount below 1 (gamma) keeps credit near the move that earned it;
 * - the baseline is the batch mean of the return at the same step index (returns shrink along an
 *   episode, so one mean for all steps would bias early steps), and advantages are scaled by their
 *   standard deviation so the learning rate does not depend on the reward's units;
 * - the entropy bonus and the near-uniform initial policy keep every allowed move in play, and the
 *   clipped gradient bounds any single update;
 * - restarting most episodes from the best plan so far turns the episodes into a policy-guided
 *   local search that can travel far from the initial plan, while the episodes that restart from
 *   the initial plan keep the policy honest on the states a fresh run sees. */
#include "rl_train.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rl_train_int.h"

/* ---- configuration ---- */

void rl_train_config_default(rl_train_config *c, int n_cores) {
  memset(c, 0, sizeof *c);
  c->seed = 1;
  c->episodes = 0;
  c->batch = 8;
  c->max_steps = 2 * n_cores < 16 ? (2 * n_cores > 2 ? 2 * n_cores : 2) : 16;
  c->hidden = 16;
  c->n_hidden = 2;
  c->lr = 3e-3;
  c->entropy = 0.01;
  c->gamma = 0.9;
  c->clip_norm = 1.0;
  c->restart_best = 0.75;
  c->balance_weight = 1.0;
  c->samples = 8;
  c->feasible_first = 0;
  c->target_reward = INFINITY;
}

mp_status rl_train_config_check(const rl_train_config *c, mp_error *err) {
  if (c->episodes < 0) return err_set(err, MP_USAGE, "rl: episodes must be >= 0, got %ld", c->episodes);
  if (c->batch < 2) return err_set(err, MP_USAGE, "rl: the batch must hold at least 2 episodes, got %d", c->batch);
  if (c->max_steps < 1) return err_set(err, MP_USAGE, "rl: max_steps must be >= 1, got %d", c->max_steps);
  if (c->n_hidden < 0 || c->n_hidden > RL_POLICY_MAX_HIDDEN || (c->n_hidden > 0 && c->hidden < 1))
    return err_set(err, MP_USAGE, "rl: bad policy shape: %d hidden layers of %d", c->n_hidden, c->hidden);
  if (!(c->lr > 0) || !isfinite(c->lr)) return err_set(err, MP_USAGE, "rl: the learning rate must be > 0");
  if (!(c->entropy >= 0) || !isfinite(c->entropy)) return err_set(err, MP_USAGE, "rl: the entropy bonus must be >= 0");
  if (!(c->gamma >= 0 && c->gamma <= 1)) return err_set(err, MP_USAGE, "rl: gamma must be in [0, 1]");
  if (!(c->clip_norm >= 0) || !isfinite(c->clip_norm)) return err_set(err, MP_USAGE, "rl: clip_norm must be >= 0");
  if (!(c->restart_best >= 0 && c->restart_best <= 1))
    return err_set(err, MP_USAGE, "rl: restart_best must be a probability in [0, 1]");
  if (c->samples < 1 || c->samples > 1024)
    return err_set(err, MP_USAGE, "rl: samples per state must be in 1..1024, got %d", c->samples);
  if (!(c->balance_weight >= 0) || !isfinite(c->balance_weight))
    return err_set(err, MP_USAGE, "rl: balance_weight must be >= 0");
  if (isnan(c->target_reward)) return err_set(err, MP_USAGE, "rl: the target reward is not a number");
  return MP_OK;
}

/* ---- the trainer ---- */

/* One proposal of a played episode: its action and its plan's evaluation.  An episode's record is an
 * ep_head followed by n_steps x samples of these, in the order they were drawn. */
typedef struct ep_move {
  int32_t action, feasible;
  double reward, balance, figure;
} ep_move;

typedef struct ep_head {
  int32_t episode, n_steps;
} ep_head;

int rl_trainer_better(const rl_trainer *t, const rl_eval *a, const rl_eval *b) {
  if (t->cfg.feasible_first && a->feasible != b->feasible) return a->feasible > b->feasible;
  if (a->reward != b->reward) return a->reward > b->reward;
  return a->balance > b->balance;
}

static double signal(const rl_trainer *t, const rl_eval *e) { return e->reward + t->cfg.balance_weight * e->balance; }

/* Asks instance i's reward callback about a plan. */
static mp_status score(const rl_trainer *t, int i, const int *arranged, rl_eval *ev, mp_error *err) {
  const rl_inst_state *s = &t->inst[i];
  mp_status st = s->in.reward(s->in.ctx, arranged, ev, err);
  if (st != MP_OK) return st;
  if (!isfinite(ev->reward) || !isfinite(ev->balance))
    return err_set(err, MP_RUN, "rl: the reward of a plan is not a finite number");
  return MP_OK;
}

/* Counts an evaluated plan of instance i and keeps it when it beats the best. */
static void keep(rl_trainer *t, int i, const int *arranged, const rl_eval *ev) {
  rl_inst_state *s = &t->inst[i];
  t->evaluations++;
  if (rl_trainer_better(t, ev, &s->best_eval)) {
    s->best_eval = *ev;
    memcpy(s->best, arranged, (size_t)t->n_cores * sizeof *s->best);
  }
}

mp_status rl_trainer_evaluate(rl_trainer *t, int i, const int *arranged, rl_eval *ev, mp_error *err) {
  mp_status st = score(t, i, arranged, ev, err);
  if (st == MP_OK) keep(t, i, arranged, ev);
  return st;
}

mp_status rl_round_begin(const rl_trainer *t, rl_round *r, mp_error *err) {
  memset(r, 0, sizeof *r);
  r->plan = malloc((size_t)t->n_cores * sizeof *r->plan);
  return r->plan ? MP_OK : err_nomem(err);
}

mp_status rl_round_score(rl_trainer *t, int i, rl_round *r, uint64_t order, const int *plan, mp_error *err) {
  rl_eval ev;
  mp_status st = score(t, i, plan, &ev, err);
  if (st != MP_OK) return st;
  r->scored++;
  if (rl_trainer_better(t, &ev, r->found ? &r->ev : &t->inst[i].best_eval)) {
    r->ev = ev;
    r->order = order;
    r->found = 1;
    memcpy(r->plan, plan, (size_t)t->n_cores * sizeof *r->plan);
  }
  return MP_OK;
}

/* A rank's part of a round as the ranks exchange it, followed by its plan (n_cores int32). */
typedef struct round_part {
  uint64_t order;
  int64_t scored;
  int32_t rank, found, feasible, pad;
  double reward, balance, figure;
} round_part;

/* Folds part x (with its plan) into r: a better candidate, or an equal one earlier in the round. */
static void round_fold(const rl_trainer *t, rl_round *r, const round_part *x, const int32_t *plan) {
  r->scored += (long)x->scored;
  if (!x->found) return;
  rl_eval ev = {.feasible = x->feasible, .reward = x->reward, .balance = x->balance, .figure = x->figure};
  if (r->found && !rl_trainer_better(t, &ev, &r->ev) && (rl_trainer_better(t, &r->ev, &ev) || r->order < x->order))
    return;
  r->ev = ev;
  r->order = x->order;
  r->found = 1;
  for (int c = 0; c < t->n_cores; c++) r->plan[c] = plan[c];
}

/* Every rank's part of round r, gathered and folded into r (its plan buffer reused): each rank once. */
static mp_status round_gather(rl_trainer *t, rl_round *r, mp_error *err) {
  size_t one = sizeof(round_part) + (size_t)t->n_cores * sizeof(int32_t);
  unsigned char *mine = malloc(one), *seen = calloc((size_t)t->ranks, 1);
  int32_t *plan = malloc((size_t)t->n_cores * sizeof *plan);
  void *all = NULL;
  size_t all_len = 0;
  mp_status st = mine && seen && plan ? MP_OK : err_nomem(err);
  if (st == MP_OK) {
    round_part x = {r->order, r->scored, t->rank, r->found, r->ev.feasible, 0, r->ev.reward, r->ev.balance,
                    r->ev.figure};
    memcpy(mine, &x, sizeof x);
    for (int c = 0; c < t->n_cores; c++) plan[c] = r->found ? r->plan[c] : 0;
    memcpy(mine + sizeof x, plan, (size_t)t->n_cores * sizeof *plan);
    st = t->gather(t->gather_ctx, mine, one, &all, &all_len, err);
  }
  if (st == MP_OK && all_len != one * (size_t)t->ranks)
    st = err_set(err, MP_RUN, "rl: the gathered round is damaged (%zu bytes for %d ranks)", all_len, t->ranks);
  rl_round merged = {.plan = r->plan};
  for (int k = 0; st == MP_OK && k < t->ranks; k++) {
    round_part x;
    const unsigned char *at = (const unsigned char *)all + (size_t)k * one;
    memcpy(&x, at, sizeof x);
    if (x.rank < 0 || x.rank >= t->ranks || seen[x.rank]) {
      st = err_set(err, MP_RUN, "rl: the gathered round is damaged (rank %d)", (int)x.rank);
      break;
    }
    seen[x.rank] = 1;
    memcpy(plan, at + sizeof x, (size_t)t->n_cores * sizeof *plan);
    round_fold(t, &merged, &x, plan);
  }
  if (st == MP_OK) *r = merged;
  free(mine);
  free(seen);
  free(plan);
  free(all);
  return st;
}

mp_status rl_round_end(rl_trainer *t, int i, rl_round *r, mp_error *err) {
  mp_status st = t->ranks > 1 ? round_gather(t, r, err) : MP_OK;
  if (st == MP_OK) {
    t->evaluations += r->scored;
    rl_inst_state *s = &t->inst[i];
    if (r->found && rl_trainer_better(t, &r->ev, &s->best_eval)) {
      s->best_eval = r->ev;
      memcpy(s->best, r->plan, (size_t)t->n_cores * sizeof *s->best);
    }
  }
  free(r->plan);
  r->plan = NULL;
  return st;
}

/* One scored action of rl_trainer_evaluate_actions, as the ranks exchange them. */
typedef struct action_score {
  int32_t action, feasible;
  double reward, balance, figure;
} action_score;

mp_status rl_trainer_evaluate_actions(rl_trainer *t, int i, const int *from, unsigned char *allowed, rl_eval *evs,
                                      mp_error *err) {
  const rl_env *env = t->inst[i].in.env;
  int *cand = t->cand;
  mp_status st = MP_OK;
  if (t->ranks <= 1) {
    for (int a = 0; a < t->n_out && st == MP_OK; a++) /* asked first: applying copies the whole plan */
      if ((allowed[a] = (unsigned char)rl_env_can_apply(env, from, a)) != 0) {
        rl_env_apply(env, from, a, cand);
        st = rl_trainer_evaluate(t, i, cand, &evs[a], err);
      }
    return st;
  }
  /* this rank's share, gathered; then every rank keeps every plan in action order */
  action_score *mine = malloc(((size_t)t->n_out / (size_t)t->ranks + 1) * sizeof *mine);
  if (!mine) return err_nomem(err);
  size_t n = 0;
  for (int a = t->rank; a < t->n_out && st == MP_OK; a += t->ranks) {
    rl_eval ev;
    if (!rl_env_can_apply(env, from, a)) continue;
    rl_env_apply(env, from, a, cand);
    st = score(t, i, cand, &ev, err);
    mine[n++] = (action_score){a, ev.feasible, ev.reward, ev.balance, ev.figure};
  }
  void *all = NULL;
  size_t all_len = 0;
  if (st == MP_OK) st = t->gather(t->gather_ctx, mine, n * sizeof *mine, &all, &all_len, err);
  free(mine);
  if (st != MP_OK) return st;
  memset(allowed, 0, (size_t)t->n_out);
  const action_score *x = all;
  for (size_t k = 0; k < all_len / sizeof *x && st == MP_OK; k++) {
    if (x[k].action < 0 || x[k].action >= t->n_out || allowed[x[k].action])
      st = err_set(err, MP_RUN, "rl: the gathered scores are damaged (action %d)", (int)x[k].action);
    else {
      allowed[x[k].action] = 1;
      evs[x[k].action] = (rl_eval){.reward = x[k].reward, .balance = x[k].balance, .figure = x[k].figure,
                                   .feasible = x[k].feasible};
    }
  }
  if (st == MP_OK && all_len % sizeof *x != 0) st = err_set(err, MP_RUN, "rl: the gathered scores are truncated");
  for (int a = 0; a < t->n_out && st == MP_OK; a++) {
    int applies = rl_env_can_apply(env, from, a);
    if (applies != allowed[a])
      st = err_set(err, MP_RUN, "rl: the gathered scores %s action %d", applies ? "miss" : "add", a);
    else if (applies) {
      rl_env_apply(env, from, a, cand);
      keep(t, i, cand, &evs[a]);
    }
  }
  free(all);
  return st;
}

void rl_trainer_free(rl_trainer *t) {
  if (!t) return;
  if (t->inst)
    for (int i = 0; i < t->n_inst; i++) free(t->inst[i].best);
  free(t->inst);
  rl_policy_free(t->policy);
  free(t->X);
  free(t->rew);
  free(t->ret);
  free(t->adv);
  free(t->masks);
  free(t->act);
  free(t->ep_start);
  free(t->base_sum);
  free(t->base_cnt);
  free(t->cur);
  free(t->next);
  free(t->cand);
  free(t->probs);
  rl_policy_ws_free(&t->ws);
  rl_policy_ws_free(&t->pws);
  free(t->grad);
  free(t->ep_from_best);
  free(t->ep_rng);
  free(t->snap_best);
  free(t->snap_eval);
  strbuf_clear(&t->rec);
  free(t->ep_rec);
  free(t->px);
  free(t->pmask);
  free(t);
}

static mp_status reserve_rows(rl_trainer *t, int rows, mp_error *err) {
  if (rows <= t->cap_rows) return MP_OK;
  int cap = t->cap_rows > 0 ? t->cap_rows : 256;
  while (cap < rows) cap *= 2;
  double *X = realloc(t->X, (size_t)cap * t->n_in * sizeof *X);
  if (X) t->X = X;
  unsigned char *m = realloc(t->masks, (size_t)cap * t->n_out);
  if (m) t->masks = m;
  int *a = realloc(t->act, (size_t)cap * sizeof *a);
  if (a) t->act = a;
  double *r = realloc(t->rew, (size_t)cap * sizeof *r);
  if (r) t->rew = r;
  double *g = realloc(t->ret, (size_t)cap * sizeof *g);
  if (g) t->ret = g;
  double *v = realloc(t->adv, (size_t)cap * sizeof *v);
  if (v) t->adv = v;
  if (!X || !m || !a || !r || !g || !v) return err_nomem(err);
  t->cap_rows = cap;
  return MP_OK;
}

mp_status rl_trainer_new(const rl_train_config *cfg, const rl_instance *inst, int n_inst, const rl_policy *policy,
                         rl_trainer **out, mp_error *err) {
  *out = NULL;
  mp_status st = rl_train_config_check(cfg, err);
  if (st != MP_OK) return st;
  if (n_inst < 1) return err_set(err, MP_USAGE, "rl: nothing to train on (no instances)");
  int n_cores = inst[0].env->n_cores;
  for (int i = 0; i < n_inst; i++) {
    if (inst[i].env->n_cores != n_cores)
      return err_set(err, MP_USAGE, "rl: instance %d has %d cores, instance 0 has %d: one policy needs one core count",
                     i, inst[i].env->n_cores, n_cores);
    if (!rl_env_valid_state(inst[i].env, inst[i].init))
      return err_set(err, MP_INPUT, "rl: the initial plan of instance %d is not a valid arranged_core list", i);
  }
  const rl_env *e0 = inst[0].env;
  if (policy && (policy->n_in != RL_PAIR_FEATURES || policy->n_out != RL_PAIR_ACTIONS))
    return err_set(err, MP_INPUT,
                   "rl: the policy takes %d features per row and gives %d logits, this decision process needs %d and %d",
                   policy->n_in, policy->n_out, RL_PAIR_FEATURES, RL_PAIR_ACTIONS);
  rl_trainer *t = calloc(1, sizeof *t);
  if (!t) return err_nomem(err);
  t->cfg = *cfg;
  t->n_inst = n_inst;
  t->n_cores = n_cores;
  t->n_in = e0->n_features;
  t->n_out = e0->n_actions;
  t->rows = e0->n_pairs;
  rng_seed(&t->rng, cfg->seed);
  t->inst = calloc((size_t)n_inst, sizeof *t->inst);
  t->ep_start = malloc(((size_t)cfg->batch + 1) * sizeof *t->ep_start);
  t->base_sum = malloc((size_t)cfg->max_steps * sizeof *t->base_sum);
  t->base_cnt = malloc((size_t)cfg->max_steps * sizeof *t->base_cnt);
  t->cur = malloc((size_t)n_cores * sizeof *t->cur);
  t->next = malloc((size_t)n_cores * sizeof *t->next);
  t->cand = malloc((size_t)n_cores * sizeof *t->cand);
  t->probs = malloc((size_t)t->n_out * sizeof *t->probs);
  t->ep_from_best = malloc((size_t)cfg->batch);
  t->ep_rng = malloc((size_t)cfg->batch * sizeof *t->ep_rng);
  t->ep_rec = malloc((size_t)cfg->batch * sizeof *t->ep_rec);
  t->snap_best = malloc((size_t)n_inst * (size_t)n_cores * sizeof *t->snap_best);
  t->snap_eval = malloc((size_t)n_inst * sizeof *t->snap_eval);
  t->px = malloc((size_t)t->n_in * sizeof *t->px);
  t->pmask = malloc((size_t)t->n_out);
  t->rank = 0;
  t->ranks = 1;
  if (!t->inst || !t->ep_start || !t->base_sum || !t->base_cnt || !t->cur || !t->next || !t->cand || !t->probs ||
      !t->ep_from_best || !t->ep_rng || !t->ep_rec || !t->snap_best || !t->snap_eval || !t->px || !t->pmask) {
    st = err_nomem(err);
    goto cleanup;
  }
  if (policy) {
    t->policy = rl_policy_clone(policy);
    if (!t->policy) {
      st = err_nomem(err);
      goto cleanup;
    }
  } else {
    rng prng;
    rng_split(&t->rng, &prng);
    st = rl_policy_new(RL_PAIR_FEATURES, RL_PAIR_ACTIONS, cfg->n_hidden, cfg->hidden, cfg->lr, &prng, &t->policy, err);
    if (st != MP_OK) goto cleanup;
  }
  t->policy->adam.lr = cfg->lr;
  t->grad = calloc(t->policy->n_params, sizeof *t->grad);
  if (!t->grad) {
    st = err_nomem(err);
    goto cleanup;
  }
  st = reserve_rows(t, cfg->batch * cfg->max_steps * cfg->samples < 4096 ? cfg->batch * cfg->max_steps * cfg->samples
                                                                          : 4096,
                    err);
  if (st != MP_OK) goto cleanup;
  for (int i = 0; i < n_inst; i++) {
    rl_inst_state *s = &t->inst[i];
    s->in = inst[i];
    s->best = malloc((size_t)n_cores * sizeof *s->best);
    if (!s->best) {
      st = err_nomem(err);
      goto cleanup;
    }
    memcpy(s->best, inst[i].init, (size_t)n_cores * sizeof *s->best);
    s->best_eval = (rl_eval){.reward = -INFINITY, .balance = -INFINITY, .figure = 0, .feasible = 0};
    st = rl_trainer_evaluate(t, i, inst[i].init, &s->init_eval, err);
    if (st != MP_OK) goto cleanup;
  }
  *out = t;
  return MP_OK;
cleanup:
  rl_trainer_free(t);
  return st;
}

/* Appends to this process's episode records. */
static mp_status rec_put(rl_trainer *t, const void *p, size_t n, mp_error *err) {
  strbuf_append(&t->rec, p, n);
  return t->rec.oom ? err_nomem(err) : MP_OK;
}

/* Episode e of the batch, on instance i: its start plan and the evaluation of it. */
static const int *episode_start(const rl_trainer *t, int e, int i, const rl_eval **from) {
  if (t->ep_from_best[e]) {
    *from = &t->snap_eval[i];
    return t->snap_best + (size_t)i * (size_t)t->n_cores;
  }
  *from = &t->inst[i].init_eval;
  return t->inst[i].in.init;
}

/* A move's K proposals: the episode follows the one with the best learning signal (the first of
 * equals); t->next is the proposal just evaluated, t->cand the one to follow. */
static void follow_if_best(rl_trainer *t, const rl_eval *ev, double *step_best, double *step_final) {
  if (signal(t, ev) > *step_best) {
    *step_best = signal(t, ev);
    *step_final = ev->reward;
    memcpy(t->cand, t->next, (size_t)t->n_cores * sizeof *t->cand);
  }
}

/* Plays episode e of the batch on instance i with the episode's own rng, appending its record to
 * t->rec.  Plans are scored by the reward callback only: counters and best plans change when the
 * batch is applied (apply_episode), in episode order, whichever process played the episode. */
static mp_status play_episode(rl_trainer *t, int e, int i, mp_error *err) {
  rl_env *env = t->inst[i].in.env;
  const int K = t->cfg.samples;
  const rl_eval *from;
  memcpy(t->cur, episode_start(t, e, i, &from), (size_t)t->n_cores * sizeof *t->cur);
  size_t head_at = t->rec.len;
  ep_head h = {e, 0};
  mp_status st = rec_put(t, &h, sizeof h, err);
  for (int step = 0; st == MP_OK && step < t->cfg.max_steps; step++) {
    rl_env_features(env, t->cur, t->px);
    if (rl_env_mask(env, t->cur, t->pmask) == 0) break; /* a one-layer graph: nothing to move */
    if (rl_policy_probs(t->policy, &t->pws, t->px, t->rows, t->pmask, t->probs) < 0) return err_nomem(err);
    /* K proposals from one state; the episode follows the best of them. */
    double step_best = -INFINITY, step_final = from->reward;
    for (int k = 0; st == MP_OK && k < K; k++) {
      int a = rl_policy_sample(t->probs, t->n_out, &t->ep_rng[e]);
      rl_env_apply(env, t->cur, a, t->next);
      rl_eval ev;
      st = score(t, i, t->next, &ev, err);
      if (st != MP_OK) break;
      ep_move m = {a, ev.feasible, ev.reward, ev.balance, ev.figure};
      st = rec_put(t, &m, sizeof m, err);
      follow_if_best(t, &ev, &step_best, &step_final);
    }
    h.n_steps++;
    memcpy(t->cur, t->cand, (size_t)t->n_cores * sizeof *t->cur);
    if (step_final >= t->cfg.target_reward) break;
  }
  if (st == MP_OK) memcpy(t->rec.s + head_at, &h, sizeof h);
  return st;
}

/* Adds played episode e (its record at rec, whose length index_records checked) to the batch: its
 * states' features and masks, actions and step rewards become rows, and each evaluation counts and
 * may become the instance's best.  Actions are checked against the replayed states' masks, since
 * the record may come from another process. */
static mp_status apply_episode(rl_trainer *t, int e, int i, const unsigned char *rec, double *final_reward,
                               mp_error *err) {
  rl_env *env = t->inst[i].in.env;
  const int K = t->cfg.samples;
  ep_head h;
  memcpy(&h, rec, sizeof h);
  const rl_eval *from;
  memcpy(t->cur, episode_start(t, e, i, &from), (size_t)t->n_cores * sizeof *t->cur);
  double R = signal(t, from), final = from->reward;
  const unsigned char *mv = rec + sizeof h;
  for (int step = 0; step < h.n_steps; step++) {
    mp_status st = reserve_rows(t, t->n_rows + K, err);
    if (st != MP_OK) return st;
    int row = t->n_rows;
    double *x = t->X + (size_t)row * t->n_in;
    unsigned char *mask = t->masks + (size_t)row * t->n_out;
    rl_env_features(env, t->cur, x);
    rl_env_mask(env, t->cur, mask);
    double step_best = -INFINITY, step_final = final;
    for (int k = 0; k < K; k++, mv += sizeof(ep_move)) {
      int r = row + k;
      if (k > 0) {
        memcpy(t->X + (size_t)r * t->n_in, x, (size_t)t->n_in * sizeof *x);
        memcpy(t->masks + (size_t)r * t->n_out, mask, (size_t)t->n_out);
      }
      ep_move m;
      memcpy(&m, mv, sizeof m);
      if (m.action < 0 || m.action >= t->n_out || !mask[m.action])
        return err_set(err, MP_RUN, "rl: episode %d's record has action %d where it is not allowed (step %d)", e,
                       (int)m.action, step);
      rl_env_apply(env, t->cur, m.action, t->next);
      rl_eval ev = {m.reward, m.balance, m.figure, m.feasible};
      keep(t, i, t->next, &ev);
      t->act[r] = m.action;
      t->rew[r] = signal(t, &ev) - R;
      follow_if_best(t, &ev, &step_best, &step_final);
    }
    t->n_rows += K;
    t->steps++;
    R = step_best;
    final = step_final;
    memcpy(t->cur, t->cand, (size_t)t->n_cores * sizeof *t->cur);
  }
  *final_reward = final;
  return MP_OK;
}

void rl_trainer_distribute(rl_trainer *t, int rank, int ranks, rl_gather_fn gather, void *ctx) {
  t->rank = rank;
  t->ranks = ranks;
  t->gather = gather;
  t->gather_ctx = ctx;
}

/* Finds each episode's record in the gathered bytes; every one of the B must be there once. */
static mp_status index_records(rl_trainer *t, const unsigned char *all, size_t len, int B, mp_error *err) {
  for (int e = 0; e < B; e++) t->ep_rec[e] = NULL;
  for (size_t at = 0; at < len;) {
    ep_head h;
    if (len - at < sizeof h) return err_set(err, MP_RUN, "rl: the gathered episode records are truncated");
    memcpy(&h, all + at, sizeof h);
    size_t size = sizeof h + (size_t)h.n_steps * (size_t)t->cfg.samples * sizeof(ep_move);
    if (h.episode < 0 || h.episode >= B || t->ep_rec[h.episode] || h.n_steps < 0 || h.n_steps > t->cfg.max_steps ||
        size > len - at)
      return err_set(err, MP_RUN, "rl: the gathered episode records are damaged (episode %d)", (int)h.episode);
    t->ep_rec[h.episode] = all + at;
    at += size;
  }
  for (int e = 0; e < B; e++)
    if (!t->ep_rec[e]) return err_set(err, MP_RUN, "rl: no process played episode %d of the batch", e);
  return MP_OK;
}

mp_status rl_trainer_iterate(rl_trainer *t, mp_error *err) {
  long left = t->cfg.episodes - t->episodes_done;
  if (left <= 0) return MP_OK;
  int B = left < t->cfg.batch ? (int)left : t->cfg.batch;
  /* The batch's random draws and start plans, in one order whatever the number of processes. */
  for (int e = 0; e < B; e++) {
    t->ep_from_best[e] = rng_uniform(&t->rng) < t->cfg.restart_best;
    rng_split(&t->rng, &t->ep_rng[e]);
  }
  for (int i = 0; i < t->n_inst; i++) {
    memcpy(t->snap_best + (size_t)i * (size_t)t->n_cores, t->inst[i].best, (size_t)t->n_cores * sizeof *t->snap_best);
    t->snap_eval[i] = t->inst[i].best_eval;
  }
  strbuf_clear(&t->rec);
  mp_status st = MP_OK;
  for (int e = t->rank; st == MP_OK && e < B; e += t->ranks)
    st = play_episode(t, e, (int)((t->episodes_done + e) % t->n_inst), err);
  if (st != MP_OK) return st;
  void *gathered = NULL;
  const unsigned char *all = (const unsigned char *)t->rec.s;
  size_t all_len = t->rec.len;
  if (t->ranks > 1) {
    st = t->gather(t->gather_ctx, t->rec.s, t->rec.len, &gathered, &all_len, err);
    if (st != MP_OK) return st;
    all = gathered;
  }
  st = index_records(t, all, all_len, B, err);
  t->n_rows = 0;
  double sum_final = 0;
  for (int e = 0; st == MP_OK && e < B; e++) {
    t->ep_start[e] = t->n_rows;
    double fin = 0;
    st = apply_episode(t, e, (int)((t->episodes_done + e) % t->n_inst), t->ep_rec[e], &fin, err);
    sum_final += fin;
  }
  free(gathered);
  if (st != MP_OK) return st;
  t->ep_start[B] = t->n_rows;
  t->episodes_done += B;
  t->iterations++;
  t->mean_final = sum_final / B;
  if (t->n_rows == 0) return MP_OK;

  double ss = 0;
  if (t->cfg.samples > 1) {
    /* Several proposals per state: each one's advantage is its step reward minus the mean of the
     * other proposals from the same state (a leave-one-out baseline, unbiased and free). */
    int K = t->cfg.samples;
    for (int r0 = 0; r0 < t->n_rows; r0 += K) {
      double sum = 0;
      for (int k = 0; k < K; k++) sum += t->rew[r0 + k];
      for (int k = 0; k < K; k++) {
        double a = t->rew[r0 + k] - (sum - t->rew[r0 + k]) / (K - 1);
        t->adv[r0 + k] = a;
        ss += a * a;
      }
    }
  } else {
    /* One action per state: discounted returns, baseline = the batch mean at the same step index. */
    int K = t->cfg.max_steps;
    for (int k = 0; k < K; k++) t->base_sum[k] = 0, t->base_cnt[k] = 0;
    for (int e = 0; e < B; e++) {
      double G = 0;
      for (int r = t->ep_start[e + 1] - 1; r >= t->ep_start[e]; r--) {
        G = t->rew[r] + t->cfg.gamma * G;
        t->ret[r] = G;
        int k = r - t->ep_start[e];
        t->base_sum[k] += G;
        t->base_cnt[k]++;
      }
    }
    for (int e = 0; e < B; e++)
      for (int r = t->ep_start[e]; r < t->ep_start[e + 1]; r++) {
        int k = r - t->ep_start[e];
        t->adv[r] = t->ret[r] - t->base_sum[k] / t->base_cnt[k];
        ss += t->adv[r] * t->adv[r];
      }
  }
  double sd = sqrt(ss / t->n_rows);
  for (int r = 0; r < t->n_rows; r++) t->adv[r] = sd > 1e-12 ? t->adv[r] / sd : 0.0;

  double loss;
  st = rl_policy_loss_grad(t->policy, t->n_rows, t->rows, t->X, t->masks, t->act, t->adv, t->cfg.entropy, &t->ws,
                           &loss, &t->entropy, t->grad, err);
  if (st != MP_OK) return st;
  t->grad_norm = rl_policy_adam_step(t->policy, t->grad, t->cfg.clip_norm);
  return MP_OK;
}

int rl_trainer_done(const rl_trainer *t) { return t->episodes_done >= t->cfg.episodes; }

void rl_trainer_get_stats(const rl_trainer *t, rl_train_stats *out) {
  out->episodes = t->episodes_done;
  out->iterations = t->iterations;
  out->evaluations = t->evaluations;
  out->steps = t->steps;
  out->mean_final_reward = t->mean_final;
  out->entropy = t->entropy;
  out->grad_norm = t->grad_norm;
}

const rl_policy *rl_trainer_policy(const rl_trainer *t) { return t->policy; }

const int *rl_trainer_best(const rl_trainer *t, int i, rl_eval *eval) {
  if (eval) *eval = t->inst[i].best_eval;
  return t->inst[i].best;
}

void rl_trainer_init_eval(const rl_trainer *t, int i, rl_eval *eval) { *eval = t->inst[i].init_eval; }

mp_status rl_trainer_offer(rl_trainer *t, int i, const int *arranged, mp_error *err) {
  if (!rl_env_valid_state(t->inst[i].in.env, arranged))
    return err_set(err, MP_INPUT, "rl: the plan offered for instance %d is not a valid arranged_core list", i);
  rl_eval ev;
  return rl_trainer_evaluate(t, i, arranged, &ev, err);
}

mp_status rl_trainer_greedy(rl_trainer *t, int i, int steps, mp_error *err) {
  rl_inst_state *s = &t->inst[i];
  double *x = malloc((size_t)t->n_in * sizeof *x);
  unsigned char *mask = malloc((size_t)t->n_out);
  int *cur = malloc((size_t)t->n_cores * sizeof *cur);
  mp_status st = MP_OK;
  if (!x || !mask || !cur) {
    st = err_nomem(err);
    goto cleanup;
  }
  memcpy(cur, s->in.init, (size_t)t->n_cores * sizeof *cur);
  for (int step = 0; step < steps; step++) {
    rl_env_features(s->in.env, cur, x);
    if (rl_env_mask(s->in.env, cur, mask) == 0) break;
    if (rl_policy_probs(t->policy, &t->pws, x, t->rows, mask, t->probs) < 0) {
      st = err_nomem(err);
      break;
    }
    rl_env_apply(s->in.env, cur, rl_policy_argmax(t->probs, t->n_out), cur);
    rl_eval ev;
    st = rl_trainer_evaluate(t, i, cur, &ev, err);
    if (st != MP_OK) break;
  }
cleanup:
  free(x);
  free(mask);
  free(cur);
  return st;
}
