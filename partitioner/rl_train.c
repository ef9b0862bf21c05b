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

#include "cost.h"
#include "fileio.h"

/* ---- rewards ---- */

void rl_reward_weights_default(rl_reward_weights *w, int simulated) {
  w->period = 1.0;
  w->memory = simulated ? 0.0 : 1.0;
  w->storage = 0.0;
  w->routing = 0.0;
}

double rl_reward_combine(const rl_reward_weights *w, double period, double ref, double mem_ratio, double link_util) {
  double over = mem_ratio > 1.0 ? mem_ratio - 1.0 : 0.0;
  return -w->period * (period / ref) - w->memory * over - w->storage * mem_ratio - w->routing * link_util;
}

double rl_reward_balance(const double *stage_s, const double *stage_mem_ratio, int n_stages, double ref_period_s) {
  double worst = 0;
  for (int i = 0; i < n_stages; i++) worst = stage_s[i] > worst ? stage_s[i] : worst;
  double ss = 0, over = 0;
  for (int i = 0; i < n_stages; i++) {
    double q = worst > 0 ? stage_s[i] / worst : 0;
    q *= q, q *= q, q *= q;
    ss += q;
    if (stage_mem_ratio && stage_mem_ratio[i] > 1) over += stage_mem_ratio[i] - 1;
  }
  return -(worst * pow(ss, 1.0 / 8)) / ref_period_s - over;
}

/* Evaluates arranged on the model: period, balance (against ref, or 0 when ref <= 0), memory. */
static mp_status cost_figures(const rl_cost_reward *r, const int *arranged, double ref, double *period,
                              double *balance, double *mem, int *feasible, mp_error *err) {
  plan *p = NULL;
  mp_status st = plan_new(arranged, r->n_cores, r->n_layers, &p, err);
  if (st != MP_OK) return st;
  double *buf = malloc(2 * (size_t)p->n_stages * sizeof *buf);
  if (!buf) {
    plan_free(p);
    return err_nomem(err);
  }
  double worst = 0, mem_max = 0;
  int fits = 1;
  for (int i = 0; i < p->n_stages; i++) {
    cost_stage cs;
    const plan_stage *ps = &p->stages[i];
    cost_model_stage(r->model, ps->first_layer, ps->n_layers, ps->first_core, ps->n_cores, &cs);
    buf[i] = cs.time_s;
    buf[p->n_stages + i] = cs.mem_bytes / (cs.sram_bytes * r->mem_limit);
    worst = cs.time_s > worst ? cs.time_s : worst;
    mem_max = buf[p->n_stages + i] > mem_max ? buf[p->n_stages + i] : mem_max;
    fits &= r->mem_limit == 1.0 ? cs.fits : buf[p->n_stages + i] <= 1.0;
  }
  *period = worst;
  *mem = mem_max;
  *feasible = fits;
  *balance = ref > 0 ? rl_reward_balance(buf, buf + p->n_stages, p->n_stages, ref) : 0.0;
  free(buf);
  plan_free(p);
  if (!(*period > 0) || !isfinite(*period))
    return err_set(err, MP_RUN, "rl: the cost model gave a bottleneck of %g s for a plan", *period);
  return MP_OK;
}

mp_status rl_cost_reward_init(rl_cost_reward *r, const cost_model *m, int n_cores, int n_layers, const int *ref,
                              const rl_reward_weights *w, mp_error *err) {
  memset(r, 0, sizeof *r);
  r->model = m;
  r->n_cores = n_cores;
  r->n_layers = n_layers;
  r->mem_limit = 1.0;
  if (w)
    r->w = *w;
  else
    rl_reward_weights_default(&r->w, 0);
  double mem, balance;
  int feasible;
  return cost_figures(r, ref, 0.0, &r->ref_period_s, &balance, &mem, &feasible, err);
}

mp_status rl_cost_reward_fn(void *ctx, const int *arranged, rl_eval *out, mp_error *err) {
  rl_cost_reward *r = ctx;
  double period, mem, balance;
  int feasible;
  mp_status st = cost_figures(r, arranged, r->ref_period_s, &period, &balance, &mem, &feasible, err);
  if (st != MP_OK) return st;
  out->reward = rl_reward_combine(&r->w, period, r->ref_period_s, mem, 0.0);
  out->balance = balance;
  out->figure = 1.0 / period;
  out->feasible = feasible;
  return MP_OK;
}

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
  c->feasible_first = 1;
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

typedef struct inst_state {
  rl_instance in;
  rl_eval init_eval, best_eval;
  int *best; /* owned, n_cores entries */
} inst_state;

struct rl_trainer {
  rl_train_config cfg;
  int n_inst, n_cores, n_in, n_out; /* n_in, n_out: numbers per state (all rows), actions per state */
  int rows;                          /* policy rows per state (neighbour pairs) */
  inst_state *inst;
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
  unsigned char *rec;
  size_t rec_len, rec_cap;
  const unsigned char **ep_rec; /* batch */
  double *px;                   /* n_in: one state's features while playing */
  unsigned char *pmask;         /* n_out */
  int rank, ranks;
  rl_gather_fn gather;
  void *gather_ctx;
};

/* One proposal of a played episode: its action and its plan's evaluation.  An episode's record is an
 * ep_head followed by n_steps x samples of these, in the order they were drawn. */
typedef struct ep_move {
  int32_t action, feasible;
  double reward, balance, figure;
} ep_move;

typedef struct ep_head {
  int32_t episode, n_steps;
} ep_head;

static int better(const rl_trainer *t, const rl_eval *a, const rl_eval *b) {
  if (t->cfg.feasible_first && a->feasible != b->feasible) return a->feasible > b->feasible;
  if (a->reward != b->reward) return a->reward > b->reward;
  return a->balance > b->balance;
}

static double signal(const rl_trainer *t, const rl_eval *e) { return e->reward + t->cfg.balance_weight * e->balance; }

/* Asks instance i's reward callback about a plan. */
static mp_status score(const rl_trainer *t, int i, const int *arranged, rl_eval *ev, mp_error *err) {
  const inst_state *s = &t->inst[i];
  mp_status st = s->in.reward(s->in.ctx, arranged, ev, err);
  if (st != MP_OK) return st;
  if (!isfinite(ev->reward) || !isfinite(ev->balance))
    return err_set(err, MP_RUN, "rl: the reward of a plan is not a finite number");
  return MP_OK;
}

/* Counts an evaluated plan of instance i and keeps it when it beats the best. */
static void keep(rl_trainer *t, int i, const int *arranged, const rl_eval *ev) {
  inst_state *s = &t->inst[i];
  t->evaluations++;
  if (better(t, ev, &s->best_eval)) {
    s->best_eval = *ev;
    memcpy(s->best, arranged, (size_t)t->n_cores * sizeof *s->best);
  }
}

static mp_status evaluate(rl_trainer *t, int i, const int *arranged, rl_eval *ev, mp_error *err) {
  mp_status st = score(t, i, arranged, ev, err);
  if (st == MP_OK) keep(t, i, arranged, ev);
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
  free(t->rec);
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
    inst_state *s = &t->inst[i];
    s->in = inst[i];
    s->best = malloc((size_t)n_cores * sizeof *s->best);
    if (!s->best) {
      st = err_nomem(err);
      goto cleanup;
    }
    memcpy(s->best, inst[i].init, (size_t)n_cores * sizeof *s->best);
    s->best_eval = (rl_eval){.reward = -INFINITY, .balance = -INFINITY, .figure = 0, .feasible = 0};
    st = evaluate(t, i, inst[i].init, &s->init_eval, err);
    if (st != MP_OK) goto cleanup;
  }
  *out = t;
  return MP_OK;
cleanup:
  rl_trainer_free(t);
  return st;
}

static mp_status rec_put(rl_trainer *t, const void *p, size_t n, mp_error *err) {
  if (t->rec_len + n > t->rec_cap) {
    size_t cap = t->rec_cap ? t->rec_cap : 4096;
    while (cap < t->rec_len + n) cap *= 2;
    unsigned char *b = realloc(t->rec, cap);
    if (!b) return err_nomem(err);
    t->rec = b;
    t->rec_cap = cap;
  }
  memcpy(t->rec + t->rec_len, p, n);
  t->rec_len += n;
  return MP_OK;
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
  size_t head_at = t->rec_len;
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
  if (st == MP_OK) memcpy(t->rec + head_at, &h, sizeof h);
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
  t->rec_len = 0;
  mp_status st = MP_OK;
  for (int e = t->rank; st == MP_OK && e < B; e += t->ranks)
    st = play_episode(t, e, (int)((t->episodes_done + e) % t->n_inst), err);
  if (st != MP_OK) return st;
  void *gathered = NULL;
  const unsigned char *all = t->rec;
  size_t all_len = t->rec_len;
  if (t->ranks > 1) {
    st = t->gather(t->gather_ctx, t->rec, t->rec_len, &gathered, &all_len, err);
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
  return evaluate(t, i, arranged, &ev, err);
}

mp_status rl_trainer_greedy(rl_trainer *t, int i, int steps, mp_error *err) {
  inst_state *s = &t->inst[i];
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
    st = evaluate(t, i, cur, &ev, err);
    if (st != MP_OK) break;
  }
cleanup:
  free(x);
  free(mask);
  free(cur);
  return st;
}

mp_status rl_trainer_polish(rl_trainer *t, int i, int max_rounds, mp_error *err) {
  inst_state *s = &t->inst[i];
  int *from = malloc((size_t)t->n_cores * sizeof *from), *cand = malloc((size_t)t->n_cores * sizeof *cand);
  mp_status st = MP_OK;
  if (!from || !cand) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int round = 0; round < max_rounds; round++) {
    memcpy(from, s->best, (size_t)t->n_cores * sizeof *from);
    rl_eval before = s->best_eval;
    for (int a = 0; a < t->n_out && st == MP_OK; a++) {
      rl_eval ev;
      if (rl_env_apply(s->in.env, from, a, cand)) st = evaluate(t, i, cand, &ev, err);
    }
    if (st != MP_OK || !better(t, &s->best_eval, &before)) break;
  }
cleanup:
  free(from);
  free(cand);
  return st;
}

mp_status rl_trainer_polish_pairs(rl_trainer *t, int i, int max_rounds, mp_error *err) {
  inst_state *s = &t->inst[i];
  size_t bytes = (size_t)t->n_cores * sizeof(int);
  int *from = malloc(bytes), *mid = malloc(bytes), *cand = malloc(bytes);
  mp_status st = MP_OK;
  if (!from || !mid || !cand) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int round = 0; round < max_rounds; round++) {
    memcpy(from, s->best, bytes);
    rl_eval before = s->best_eval;
    for (int a = 0; a < t->n_out && st == MP_OK; a++) {
      rl_eval ev;
      if (!rl_env_apply(s->in.env, from, a, mid)) continue;
      st = evaluate(t, i, mid, &ev, err);
      /* the second move: every allowed action from mid, except the one that undoes the first */
      for (int b = 0; b < t->n_out && st == MP_OK; b++)
        if (rl_env_apply(s->in.env, mid, b, cand) && memcmp(cand, from, bytes) != 0)
          st = evaluate(t, i, cand, &ev, err);
    }
    if (st != MP_OK || !better(t, &s->best_eval, &before)) break;
  }
cleanup:
  free(from);
  free(mid);
  free(cand);
  return st;
}

mp_status rl_trainer_kick(rl_trainer *t, int i, int kicks, int kick_moves, mp_error *err) {
  inst_state *s = &t->inst[i];
  size_t bytes = (size_t)t->n_cores * sizeof(int);
  int *cur = malloc(bytes), *cand = malloc(bytes), *pick = malloc(bytes);
  unsigned char *mask = malloc((size_t)t->n_out);
  mp_status st = MP_OK;
  if (!cur || !cand || !pick || !mask) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int k = 0; k < kicks && st == MP_OK; k++) {
    memcpy(cur, s->best, bytes);
    int moves = 1 + (int)rng_below(&t->rng, (uint64_t)(kick_moves > 1 ? kick_moves : 1));
    for (int m = 0; m < moves; m++) { /* the kick: 1..kick_moves random allowed moves */
      int n = rl_env_mask(s->in.env, cur, mask);
      if (n == 0) break;
      int r = (int)rng_below(&t->rng, (uint64_t)n);
      for (int a = 0; a < t->n_out; a++)
        if (mask[a] && r-- == 0) {
          rl_env_apply(s->in.env, cur, a, cur);
          break;
        }
    }
    rl_eval cur_ev;
    st = evaluate(t, i, cur, &cur_ev, err);
    for (int improved = 1; improved && st == MP_OK;) { /* steepest ascent from the kicked plan */
      improved = 0;
      rl_eval pick_ev = cur_ev;
      for (int a = 0; a < t->n_out && st == MP_OK; a++) {
        rl_eval ev;
        if (!rl_env_apply(s->in.env, cur, a, cand)) continue;
        st = evaluate(t, i, cand, &ev, err);
        if (st == MP_OK && better(t, &ev, &pick_ev)) {
          pick_ev = ev;
          memcpy(pick, cand, bytes);
          improved = 1;
        }
      }
      if (improved) {
        memcpy(cur, pick, bytes);
        cur_ev = pick_ev;
      }
    }
  }
cleanup:
  free(cur);
  free(cand);
  free(pick);
  free(mask);
  return st;
}

/* Evaluates every way of laying the cores a..b and their layers (n_layers, ending at core b) out as
 * one group or two (every split of cores and layers), on a copy of from. */
static mp_status regroup_span(rl_trainer *t, int i, const int *from, int a, int b, int n_layers, int *cand,
                              mp_error *err) {
  size_t bytes = (size_t)t->n_cores * sizeof(int);
  mp_status st = MP_OK;
  rl_eval ev;
  memcpy(cand, from, bytes);
  for (int k = a; k <= b; k++) cand[k] = 0;
  cand[b] = n_layers;
  st = evaluate(t, i, cand, &ev, err);
  for (int c = a; c < b && st == MP_OK; c++) /* the first group ends at core c with l layers */
    for (int l = 1; l < n_layers && st == MP_OK; l++) {
      cand[c] = l;
      cand[b] = n_layers - l;
      st = evaluate(t, i, cand, &ev, err);
      cand[c] = 0;
    }
  return st;
}

mp_status rl_trainer_regroup(rl_trainer *t, int i, int max_rounds, mp_error *err) {
  inst_state *s = &t->inst[i];
  size_t bytes = (size_t)t->n_cores * sizeof(int);
  int *from = malloc(bytes), *cand = malloc(bytes), *ends = malloc(bytes);
  mp_status st = MP_OK;
  if (!from || !cand || !ends) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int round = 0; round < max_rounds && st == MP_OK; round++) {
    memcpy(from, s->best, bytes);
    rl_eval before = s->best_eval;
    int n_groups = 0;
    for (int c = 0; c < t->n_cores; c++)
      if (from[c] > 0) ends[n_groups++] = c;
    for (int g = 0; g < n_groups && st == MP_OK; g++) {
      int a = g > 0 ? ends[g - 1] + 1 : 0;
      /* the group alone (split in two), then the group with the next one (merged or re-split) */
      st = regroup_span(t, i, from, a, ends[g], from[ends[g]], cand, err);
      if (st == MP_OK && g + 1 < n_groups)
        st = regroup_span(t, i, from, a, ends[g + 1], from[ends[g]] + from[ends[g + 1]], cand, err);
    }
    if (st != MP_OK || !better(t, &s->best_eval, &before)) break;
  }
cleanup:
  free(from);
  free(cand);
  free(ends);
  return st;
}

/* ---- checkpoints: little-endian fields, see partitioner/README.md ---- */

#define CKPT_MAGIC "MPRLCKP1"
#define CKPT_VERSION 2

typedef struct wbuf {
  unsigned char *b;
  size_t len, cap;
  int oom;
} wbuf;

static void put_bytes(wbuf *w, const void *p, size_t n) {
  if (w->oom) return;
  if (w->len + n > w->cap) {
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < w->len + n) cap *= 2;
    unsigned char *nb = realloc(w->b, cap);
    if (!nb) {
      w->oom = 1;
      return;
    }
    w->b = nb;
    w->cap = cap;
  }
  memcpy(w->b + w->len, p, n);
  w->len += n;
}
static void put_u64(wbuf *w, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
  put_bytes(w, b, 8);
}
static void put_u32(wbuf *w, uint32_t v) {
  unsigned char b[4];
  for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
  put_bytes(w, b, 4);
}
static void put_f64(wbuf *w, double d) {
  uint64_t v;
  memcpy(&v, &d, 8);
  put_u64(w, v);
}

typedef struct rbuf {
  const unsigned char *b;
  size_t len, pos;
  int short_read;
} rbuf;

static uint64_t get_u64(rbuf *r) {
  if (r->pos + 8 > r->len) {
    r->short_read = 1;
    return 0;
  }
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)r->b[r->pos + i] << (8 * i);
  r->pos += 8;
  return v;
}
static uint32_t get_u32(rbuf *r) {
  if (r->pos + 4 > r->len) {
    r->short_read = 1;
    return 0;
  }
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)r->b[r->pos + i] << (8 * i);
  r->pos += 4;
  return v;
}
static double get_f64(rbuf *r) {
  uint64_t v = get_u64(r);
  double d;
  memcpy(&d, &v, 8);
  return d;
}

/* The configuration fields a resumed run must share with the checkpoint, in file order. */
static void put_config(wbuf *w, const rl_train_config *c) {
  put_u64(w, c->seed);
  put_u32(w, (uint32_t)c->batch);
  put_u32(w, (uint32_t)c->max_steps);
  put_u32(w, (uint32_t)c->hidden);
  put_u32(w, (uint32_t)c->n_hidden);
  put_u32(w, (uint32_t)c->samples);
  put_u32(w, (uint32_t)c->feasible_first);
  put_f64(w, c->lr);
  put_f64(w, c->entropy);
  put_f64(w, c->gamma);
  put_f64(w, c->clip_norm);
  put_f64(w, c->restart_best);
  put_f64(w, c->balance_weight);
  put_f64(w, c->target_reward);
}

mp_status rl_trainer_save(const rl_trainer *t, const char *path, mp_error *err) {
  wbuf w = {0};
  put_bytes(&w, CKPT_MAGIC, 8);
  put_u32(&w, CKPT_VERSION);
  put_config(&w, &t->cfg);
  put_u32(&w, (uint32_t)t->n_inst);
  put_u32(&w, (uint32_t)t->n_cores);
  for (int i = 0; i < t->n_inst; i++) {
    const inst_state *s = &t->inst[i];
    put_u64(&w, s->in.key);
    put_u32(&w, (uint32_t)s->in.env->n_layers);
    for (int c = 0; c < t->n_cores; c++) put_u32(&w, (uint32_t)s->best[c]);
    put_f64(&w, s->best_eval.reward);
    put_f64(&w, s->best_eval.balance);
    put_f64(&w, s->best_eval.figure);
    put_u32(&w, (uint32_t)s->best_eval.feasible);
  }
  for (int k = 0; k < 4; k++) put_u64(&w, t->rng.s[k]);
  put_u64(&w, (uint64_t)t->episodes_done);
  put_u64(&w, (uint64_t)t->iterations);
  put_u64(&w, (uint64_t)t->evaluations);
  put_u64(&w, (uint64_t)t->steps);
  put_f64(&w, t->mean_final);
  put_f64(&w, t->entropy);
  put_f64(&w, t->grad_norm);
  strbuf img = {0};
  mp_status st = rl_policy_to_bytes(t->policy, 1, &img, err);
  if (st != MP_OK) {
    free(w.b);
    return st;
  }
  put_u64(&w, img.len);
  put_bytes(&w, img.s, img.len);
  strbuf_clear(&img);
  if (!w.oom) put_u64(&w, fileio_hash(FILEIO_HASH_INIT, w.b, w.len));
  if (w.oom) {
    free(w.b);
    return err_nomem(err);
  }
  st = fileio_write_atomic(path, w.b, w.len, err);
  free(w.b);
  return st;
}

mp_status rl_trainer_resume(const rl_train_config *cfg, const rl_instance *inst, int n_inst, const char *path,
                            rl_trainer **out, mp_error *err) {
  *out = NULL;
  char *data = NULL;
  size_t len = 0;
  mp_status st = fileio_read_all(path, &data, &len, err);
  if (st != MP_OK) return st;
  rl_trainer *t = NULL;
  rl_policy *pol = NULL;
  rbuf r = {(const unsigned char *)data, len, 0, 0};
  if (len < 8 + 4 + 8 || memcmp(data, CKPT_MAGIC, 8) != 0) {
    st = err_at(err, MP_INPUT, path, NULL, "not a meshpipe RL checkpoint (no %s header)", CKPT_MAGIC);
    goto cleanup;
  }
  if (get_u64(&(rbuf){r.b + len - 8, 8, 0, 0}) != fileio_hash(FILEIO_HASH_INIT, r.b, len - 8)) {
    st = err_at(err, MP_INPUT, path, "checksum", "checksum mismatch: the checkpoint is damaged");
    goto cleanup;
  }
  r.len = len - 8;
  r.pos = 8;
  uint32_t version = get_u32(&r);
  if (version != CKPT_VERSION) {
    st = err_at(err, MP_INPUT, path, "version", "checkpoint format version %u, this meshpipe reads %d", version,
                CKPT_VERSION);
    goto cleanup;
  }
  wbuf want = {0};
  put_config(&want, cfg);
  if (want.oom) {
    st = err_nomem(err);
    goto cleanup;
  }
  int same = r.pos + want.len <= r.len && memcmp(r.b + r.pos, want.b, want.len) == 0;
  r.pos += want.len;
  free(want.b);
  if (!same) {
    st = err_at(err, MP_INPUT, path, "config",
                "the checkpoint was written with another configuration (seed, batch, steps, policy shape or rates); "
                "resume with the options of the interrupted run");
    goto cleanup;
  }
  st = rl_trainer_new(cfg, inst, n_inst, NULL, &t, err);
  if (st != MP_OK) goto cleanup;
  uint32_t ni = get_u32(&r), nc = get_u32(&r);
  if (r.short_read || ni != (uint32_t)n_inst || nc != (uint32_t)t->n_cores) {
    st = err_at(err, MP_INPUT, path, "instances", "the checkpoint is of %u graphs on %u cores, not %d on %d", ni, nc,
                n_inst, t->n_cores);
    goto cleanup;
  }
  for (int i = 0; i < n_inst; i++) {
    inst_state *s = &t->inst[i];
    uint64_t key = get_u64(&r);
    uint32_t layers = get_u32(&r);
    if (r.short_read || key != s->in.key || layers != (uint32_t)s->in.env->n_layers) {
      st = err_at(err, MP_INPUT, path, "instances", "graph %d differs from the one the checkpoint was trained on", i);
      goto cleanup;
    }
    for (int c = 0; c < t->n_cores; c++) s->best[c] = (int)get_u32(&r);
    s->best_eval.reward = get_f64(&r);
    s->best_eval.balance = get_f64(&r);
    s->best_eval.figure = get_f64(&r);
    s->best_eval.feasible = (int)get_u32(&r);
    if (!r.short_read && !rl_env_valid_state(s->in.env, s->best)) {
      st = err_at(err, MP_INPUT, path, "instances", "the best plan of graph %d is not a valid arranged_core list", i);
      goto cleanup;
    }
  }
  for (int k = 0; k < 4; k++) t->rng.s[k] = get_u64(&r);
  t->episodes_done = (long)get_u64(&r);
  t->iterations = (long)get_u64(&r);
  t->evaluations = (long)get_u64(&r);
  t->steps = (long)get_u64(&r);
  t->mean_final = get_f64(&r);
  t->entropy = get_f64(&r);
  t->grad_norm = get_f64(&r);
  uint64_t img_len = get_u64(&r);
  if (r.short_read || img_len > r.len - r.pos) {
    st = err_at(err, MP_INPUT, path, NULL, "truncated checkpoint");
    goto cleanup;
  }
  size_t used = 0;
  st = rl_policy_from_bytes(r.b + r.pos, (size_t)img_len, path, &pol, &used, err);
  if (st != MP_OK) goto cleanup;
  if (used != img_len || r.pos + img_len != r.len || pol->n_params != t->policy->n_params ||
      pol->n_in != RL_PAIR_FEATURES || pol->n_out != RL_PAIR_ACTIONS) {
    st = err_at(err, MP_INPUT, path, "policy", "the policy in the checkpoint does not fit this run");
    goto cleanup;
  }
  rl_policy_free(t->policy);
  t->policy = pol;
  pol = NULL;
  *out = t;
  t = NULL;
cleanup:
  rl_policy_free(pol);
  rl_trainer_free(t);
  free(data);
  return st;
}
