/* rl_reward: the plan reward of the RL trainer from the simulator or the analytical model.  See
 * rl_reward.h.  Each backend turns a plan into the same figures (period, memory and link figures,
 * balance, feasibility); one formula and one set of weights turn those into the reward.  The model
 * backends keep their recent scores in a memo: the searches around a best plan (rl_search.h) propose
 * the same plans again and again, and the model's contention term walks every link of every stage. */
#include "rl_reward.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "cost.h"
#include "plan.h"
#include "sim.h"
#include "sim_train.h"
#include "train.h"

void rl_reward_weights_default(rl_reward_weights *w, int simulated) {
  w->period = 1.0;
  w->memory = 0.0; /* both backends charge a core that does not fit the streams of its excess */
  (void)simulated;
  w->storage = 0.0;
  w->routing = 0.0;
  w->objective = OBJECTIVE_TIME;
}

double rl_reward_combine(const rl_reward_weights *w, double value, double ref, double mem_ratio, double link_util) {
  double over = mem_ratio > 1.0 ? mem_ratio - 1.0 : 0.0;
  return -w->period * (value / ref) - w->memory * over - w->storage * mem_ratio - w->routing * link_util;
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

/* What a backend says about one plan, before the weights combine it. */
typedef struct figures {
  double period;    /* seconds per micro-batch */
  double energy;    /* joules per micro-batch (0 on the training backends, on chips without energy figures
                       and, on the model, when the objective is time) */
  double mem_ratio; /* largest per-core memory over its (usable) SRAM */
  double link_util; /* busiest NoC link's utilisation (0 on the model, which has no links) */
  double balance;   /* rl_reward_balance against ref, 0 when ref <= 0 */
  int feasible;
} figures;

/* The figures every backend derives alike from its per-stage times and memory ratios (buf: n of each,
 * both consumed here): the largest memory ratio and the balance against ref (0 when ref <= 0). */
static void stage_figures(figures *f, const double *buf, int n, double ref) {
  f->mem_ratio = 0;
  for (int i = 0; i < n; i++) f->mem_ratio = buf[n + i] > f->mem_ratio ? buf[n + i] : f->mem_ratio;
  f->balance = ref > 0 ? rl_reward_balance(buf, buf + n, n, ref) : 0.0;
}

/* arranged as a plan in r's scratch (plan_view), once checked: the callback takes any list. */
static mp_status view_of(const rl_reward *r, const int *arranged, plan *view, mp_error *err) {
  mp_status st = plan_validate(arranged, r->n_cores, r->n_layers, NULL, err);
  if (st == MP_OK) plan_view(arranged, r->n_cores, r->n_layers, r->stages, view);
  return st;
}

/* Evaluates arranged on the model, the balance against ref (or 0 when ref <= 0). */
static mp_status model_figures(const rl_reward *r, const int *arranged, double ref, figures *f, mp_error *err) {
  plan p;
  mp_status st = view_of(r, arranged, &p, err);
  if (st != MP_OK) return st;
  double *buf = r->buf;
  int fits = 1;
  double worst = cost_model_period(r->model, &p, buf, buf + p.n_stages, &fits, NULL);
  if (worst < 0) return err_nomem(err);
  f->period = worst;
  /* the energy only when the reward needs it: this runs for every plan the trainer proposes */
  f->energy = r->w.objective == OBJECTIVE_TIME ? 0.0 : cost_model_energy(r->model, worst);
  f->link_util = 0.0;
  f->feasible = fits;
  stage_figures(f, buf, p.n_stages, ref);
  if (!(f->period > 0) || !isfinite(f->period))
    return err_set(err, MP_RUN, "rl: the cost model gave a bottleneck of %g s for a plan", f->period);
  return MP_OK;
}

/* Simulates arranged: the period, the memory and routing figures, and the balance figures (per-stage
 * times and memory ratios, against ref when ref > 0). */
static mp_status sim_figures(const rl_reward *r, const int *arranged, double ref, figures *f, mp_error *err) {
  plan p;
  mp_status st = view_of(r, arranged, &p, err);
  if (st != MP_OK) return st;
  sim_result res;
  memset(&res, 0, sizeof res);
  double *buf = r->buf;
  st = sim_evaluate(r->sim, r->g, &p, &res, err);
  if (st != MP_OK) goto cleanup;
  if (!(res.period_s > 0) || !isfinite(res.period_s)) {
    st = err_set(err, MP_RUN, "rl: the simulator gave a period of %g s for a plan", res.period_s);
    goto cleanup;
  }
  const chip *c = sim_chip(r->sim);
  for (int i = 0; i < res.n_stages; i++) {
    const sim_stage_result *sr = &res.stages[i];
    double busy = sr->compute_s + sr->dram_s > sr->comm_s ? sr->compute_s + sr->dram_s : sr->comm_s;
    buf[i] = busy; /* per micro-batch */
    uint64_t sram = chip_group_of(c, sr->first_core, sr->n_cores).sram_bytes;
    buf[res.n_stages + i] = sram > 0 ? (double)sr->sram_bytes / (double)sram : 0.0;
  }
  double u = 0;
  for (int l = 0; l < res.n_links; l++) u = res.links[l].utilisation > u ? res.links[l].utilisation : u;
  f->period = res.period_s;
  f->energy = energy_sum(&res.energy_microbatch);
  f->link_util = u;
  f->feasible = res.feasible;
  stage_figures(f, buf, res.n_stages, ref);
cleanup:
  sim_result_clear(&res);
  return st;
}

/* Training on the model: the period is the mini-batch over M, stage times its forward and backward. */
static mp_status train_model_figures(const rl_reward *r, const int *arranged, double ref, figures *f, mp_error *err) {
  plan p;
  train_result *res = NULL;
  double *buf = r->buf;
  mp_status st = view_of(r, arranged, &p, err);
  if (st == MP_OK) st = train_evaluate(r->train, r->chip, &p, &res, err);
  if (st != MP_OK) goto cleanup;
  for (int i = 0; i < res->n_stages; i++) {
    const train_stage *s = &res->stages[i];
    buf[i] = s->cs.time_s;
    buf[res->n_stages + i] = s->cs.mem_bytes / s->cs.sram_bytes;
  }
  f->period = res->minibatch_s / res->microbatches;
  f->energy = 0.0;
  f->link_util = 0.0;
  f->feasible = res->feasible;
  stage_figures(f, buf, res->n_stages, ref);
  if (!(f->period > 0) || !isfinite(f->period))
    st = err_set(err, MP_RUN, "rl: the training model gave a mini-batch of %g s for a plan", res->minibatch_s);
cleanup:
  train_result_free(res);
  return st;
}

/* Training on the simulator: one mini-batch; stage times its forward and backward per micro-batch. */
static mp_status train_sim_figures(const rl_reward *r, const int *arranged, double ref, figures *f, mp_error *err) {
  plan p;
  sim_train_result res;
  memset(&res, 0, sizeof res);
  double *buf = r->buf;
  mp_status st = view_of(r, arranged, &p, err);
  if (st == MP_OK) st = sim_train_evaluate(r->sim, r->train, &p, &res, err);
  if (st != MP_OK) goto cleanup;
  if (!(res.minibatch_s > 0) || !isfinite(res.minibatch_s)) {
    st = err_set(err, MP_RUN, "rl: the simulator gave a mini-batch of %g s for a plan", res.minibatch_s);
    goto cleanup;
  }
  for (int i = 0; i < res.n_stages; i++) {
    const sim_train_stage *s = &res.stages[i];
    buf[i] = (s->fwd_s + s->bwd_s) / res.microbatches;
    buf[res.n_stages + i] = s->sram_capacity > 0 ? (double)s->sram_peak_bytes / (double)s->sram_capacity : 0.0;
  }
  f->period = res.minibatch_s / res.microbatches;
  f->energy = 0.0;
  f->link_util = 0.0;
  f->feasible = res.feasible;
  stage_figures(f, buf, res.n_stages, ref);
cleanup:
  sim_train_result_clear(&res);
  return st;
}

static mp_status figures_of(const rl_reward *r, const int *arranged, double ref, figures *f, mp_error *err) {
  switch (r->backend) {
  case RL_REWARD_SIM: return sim_figures(r, arranged, ref, f, err);
  case RL_REWARD_TRAIN_SIM: return train_sim_figures(r, arranged, ref, f, err);
  case RL_REWARD_TRAIN_MODEL: return train_model_figures(r, arranged, ref, f, err);
  default: return model_figures(r, arranged, ref, f, err);
  }
}

/* ---- the memo of the model backends ---- */

/* A direct-mapped table of scores keyed by the plan: a new plan replaces whatever sat in its slot.
 * Like the simulator's cache (sim.h) it trusts 64 bits of key to tell two plans apart; the model is a
 * function of the plan, so an answer from the memo is the one evaluating again would give, bit for bit. */
#define MEMO_SLOTS (1 << 16)

typedef struct memo_entry {
  uint64_t key;
  int used;
  rl_eval ev;
} memo_entry;

struct rl_reward_memo {
  memo_entry e[MEMO_SLOTS];
};

/* The key of a plan: its group ends and their layer counts (the nonzero entries), mixed. */
static uint64_t memo_key(const int *arranged, int n_cores) {
  uint64_t h = UINT64_C(0x9e3779b97f4a7c15);
  for (int c = 0; c < n_cores; c++)
    if (arranged[c] != 0) {
      h ^= (uint64_t)c << 32 | (uint32_t)arranged[c];
      h ^= h >> 33;
      h *= UINT64_C(0xff51afd7ed558ccd);
      h ^= h >> 33;
    }
  return h;
}

/* Both inits: the fields every backend has, then T_ref from the reference plan. */
static mp_status init_common(rl_reward *r, int simulated, const int *ref, const rl_reward_weights *w, mp_error *err) {
  if (w)
    r->w = *w;
  else
    rl_reward_weights_default(&r->w, simulated);
  int trained = r->backend == RL_REWARD_TRAIN_SIM || r->backend == RL_REWARD_TRAIN_MODEL;
  if (r->w.objective != OBJECTIVE_TIME && trained)
    return err_set(err, MP_USAGE, "rl: --objective %s is for inference: the training model has no energy",
                   objective_name(r->w.objective));
  size_t n = r->n_cores > 0 ? (size_t)r->n_cores : 1;
  r->stages = malloc(n * sizeof *r->stages);
  r->buf = malloc(2 * n * sizeof *r->buf);
  if (!simulated) r->memo = calloc(1, sizeof *r->memo);
  if (!r->stages || !r->buf || (!simulated && !r->memo)) {
    rl_reward_clear(r);
    return err_nomem(err);
  }
  figures f;
  mp_status st = figures_of(r, ref, 0.0, &f, err);
  if (st == MP_OK) {
    r->ref_period_s = f.period;
    r->ref_value = objective_value(r->w.objective, f.period, f.energy);
    if (!(r->ref_value > 0) || !isfinite(r->ref_value))
      st = err_set(err, MP_USAGE, "rl: the reference plan's %s is %g: --objective %s needs a chip with energy figures",
                   objective_name(r->w.objective), r->ref_value, objective_name(r->w.objective));
  }
  if (st != MP_OK) rl_reward_clear(r);
  return st;
}

void rl_reward_clear(rl_reward *r) {
  free(r->stages);
  free(r->buf);
  free(r->memo);
  memset(r, 0, sizeof *r);
}

mp_status rl_reward_init_sim(rl_reward *r, sim *s, const graph *g, const int *ref, const rl_reward_weights *w,
                             mp_error *err) {
  memset(r, 0, sizeof *r);
  r->backend = RL_REWARD_SIM;
  r->sim = s;
  r->g = g;
  r->n_cores = sim_chip(s)->n_cores;
  r->n_layers = g->n_ops;
  return init_common(r, 1, ref, w, err);
}

mp_status rl_reward_init_model(rl_reward *r, cost_model *m, int n_cores, int n_layers, const int *ref,
                               const rl_reward_weights *w, mp_error *err) {
  memset(r, 0, sizeof *r);
  r->backend = RL_REWARD_MODEL;
  r->model = m;
  r->n_cores = n_cores;
  r->n_layers = n_layers;
  return init_common(r, 0, ref, w, err);
}

mp_status rl_reward_init_train_sim(rl_reward *r, sim *s, train *t, const int *ref, const rl_reward_weights *w,
                                   mp_error *err) {
  memset(r, 0, sizeof *r);
  r->backend = RL_REWARD_TRAIN_SIM;
  r->sim = s;
  r->train = t;
  r->n_cores = sim_chip(s)->n_cores;
  r->n_layers = t->g->n_ops;
  return init_common(r, 1, ref, w, err);
}

mp_status rl_reward_init_train_model(rl_reward *r, train *t, const chip *c, int n_layers, const int *ref,
                                     const rl_reward_weights *w, mp_error *err) {
  memset(r, 0, sizeof *r);
  r->backend = RL_REWARD_TRAIN_MODEL;
  r->train = t;
  r->chip = c;
  r->n_cores = c->n_cores;
  r->n_layers = n_layers;
  return init_common(r, 0, ref, w, err);
}

/* Rounds x to a multiple of 1e-6.  The simulator's figures of one plan differ in their last bits
 * (about 1e-11 relative) with the engine's clock, i.e. with how many evaluations ran before, so ranks
 * (each with an engine of its own) would see slightly different rewards for one plan and drift apart
 * bit by bit (a resumed run restores its checkpoint's clock instead: sim_restore).  Rewards are O(1)
 * (periods relative to the initial plan's), so a grid of 1e-6 keeps every real difference and makes a
 * jitter-induced flip about a one-in-a-million event per evaluation. */
static double snap(double x) { return round(x * 1e6) / 1e6; }

/* The figure (samples/s) to 9 significant digits, for the same reason: so that the best plan's figure
 * is the same whichever process, with whatever history, simulated it (resumed runs, MPI ranks). */
static double snap_figure(double x) {
  if (!(x > 0) || !isfinite(x)) return x;
  double scale = pow(10.0, 8 - floor(log10(x)));
  return round(x * scale) / scale;
}

mp_status rl_reward_eval(void *ctx, const int *arranged, rl_eval *out, mp_error *err) {
  rl_reward *r = ctx;
  memo_entry *m = NULL;
  uint64_t key = 0;
  if (r->memo) {
    key = memo_key(arranged, r->n_cores);
    m = &r->memo->e[key % MEMO_SLOTS];
    if (m->used && m->key == key) {
      *out = m->ev;
      r->memo_hits++;
      return MP_OK;
    }
  }
  figures f;
  mp_status st = figures_of(r, arranged, r->ref_period_s, &f, err);
  if (st != MP_OK) return st;
  double reward = rl_reward_combine(&r->w, objective_value(r->w.objective, f.period, f.energy), r->ref_value,
                                    f.mem_ratio, f.link_util);
  if (r->backend == RL_REWARD_SIM || r->backend == RL_REWARD_TRAIN_SIM) {
    out->reward = snap(reward);
    out->balance = snap(f.balance);
    out->figure = snap_figure(1.0 / f.period);
  } else {
    out->reward = reward;
    out->balance = f.balance;
    out->figure = 1.0 / f.period;
  }
  out->feasible = f.feasible;
  if (m) *m = (memo_entry){key, 1, *out};
  return MP_OK;
}
