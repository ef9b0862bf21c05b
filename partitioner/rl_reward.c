/* rl_reward: the plan reward of the RL trainer from the simulator or the analytical model.  See
 * rl_reward.h.  Each backend turns a plan into the same figures (period, memory and link figures,
 * balance, feasibility); one formula and one set of weights turn those into the reward. */
#include "rl_reward.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "cost.h"
#include "plan.h"
#include "sim.h"

void rl_reward_weights_default(rl_reward_weights *w, int simulated) {
  w->period = 1.0;
  w->memory = 0.0; /* both backends charge a core that does not fit the streams of its excess */
  (void)simulated;
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

/* What a backend says about one plan, before the weights combine it. */
typedef struct figures {
  double period;    /* seconds per sample */
  double mem_ratio; /* largest per-core memory over its (usable) SRAM */
  double link_util; /* busiest NoC link's utilisation (0 on the model, which has no links) */
  double balance;   /* rl_reward_balance against ref, 0 when ref <= 0 */
  int feasible;
} figures;

/* Evaluates arranged on the model, the balance against ref (or 0 when ref <= 0). */
static mp_status model_figures(const rl_reward *r, const int *arranged, double ref, figures *f, mp_error *err) {
  plan *p = NULL;
  mp_status st = plan_new(arranged, r->n_cores, r->n_layers, &p, err);
  if (st != MP_OK) return st;
  double *buf = malloc(2 * (size_t)p->n_stages * sizeof *buf);
  if (!buf) {
    plan_free(p);
    return err_nomem(err);
  }
  int fits = 1;
  double worst = cost_model_period(r->model, p, buf, buf + p->n_stages, &fits, NULL), mem_max = 0;
  if (worst < 0) {
    free(buf);
    plan_free(p);
    return err_nomem(err);
  }
  for (int i = 0; i < p->n_stages; i++) mem_max = buf[p->n_stages + i] > mem_max ? buf[p->n_stages + i] : mem_max;
  f->period = worst;
  f->mem_ratio = mem_max;
  f->link_util = 0.0;
  f->feasible = fits;
  f->balance = ref > 0 ? rl_reward_balance(buf, buf + p->n_stages, p->n_stages, ref) : 0.0;
  free(buf);
  plan_free(p);
  if (!(f->period > 0) || !isfinite(f->period))
    return err_set(err, MP_RUN, "rl: the cost model gave a bottleneck of %g s for a plan", f->period);
  return MP_OK;
}

/* Simulates arranged: the period, the memory and routing figures, and the balance figures (per-stage
 * times and memory ratios, against ref when ref > 0). */
static mp_status sim_figures(const rl_reward *r, const int *arranged, double ref, figures *f, mp_error *err) {
  plan *p = NULL;
  mp_status st = plan_new(arranged, r->n_cores, r->n_layers, &p, err);
  if (st != MP_OK) return st;
  sim_result res;
  memset(&res, 0, sizeof res);
  double *buf = NULL;
  st = sim_evaluate(r->sim, r->g, p, &res, err);
  if (st != MP_OK) goto cleanup;
  if (!(res.period_s > 0) || !isfinite(res.period_s)) {
    st = err_set(err, MP_RUN, "rl: the simulator gave a period of %g s for a plan", res.period_s);
    goto cleanup;
  }
  buf = malloc(2 * (size_t)(res.n_stages > 0 ? res.n_stages : 1) * sizeof *buf);
  if (!buf) {
    st = err_nomem(err);
    goto cleanup;
  }
  const chip *c = sim_chip(r->sim);
  double m = 0;
  for (int i = 0; i < res.n_stages; i++) {
    const sim_stage_result *sr = &res.stages[i];
    double busy = sr->compute_s + sr->dram_s > sr->comm_s ? sr->compute_s + sr->dram_s : sr->comm_s;
    buf[i] = busy; /* per micro-batch */
    uint64_t sram = chip_group_of(c, sr->first_core, sr->n_cores).sram_bytes;
    buf[res.n_stages + i] = sram > 0 ? (double)sr->sram_bytes / (double)sram : 0.0;
    m = buf[res.n_stages + i] > m ? buf[res.n_stages + i] : m;
  }
  double u = 0;
  for (int l = 0; l < res.n_links; l++) u = res.links[l].utilisation > u ? res.links[l].utilisation : u;
  f->period = res.period_s;
  f->mem_ratio = m;
  f->link_util = u;
  f->feasible = res.feasible;
  f->balance = ref > 0 ? rl_reward_balance(buf, buf + res.n_stages, res.n_stages, ref) : 0.0;
cleanup:
  free(buf);
  sim_result_clear(&res);
  plan_free(p);
  return st;
}

static mp_status figures_of(const rl_reward *r, const int *arranged, double ref, figures *f, mp_error *err) {
  return r->backend == RL_REWARD_SIM ? sim_figures(r, arranged, ref, f, err) : model_figures(r, arranged, ref, f, err);
}

/* Both inits: the fields every backend has, then T_ref from the reference plan. */
static mp_status init_common(rl_reward *r, int simulated, const int *ref, const rl_reward_weights *w, mp_error *err) {
  if (w)
    r->w = *w;
  else
    rl_reward_weights_default(&r->w, simulated);
  figures f;
  mp_status st = figures_of(r, ref, 0.0, &f, err);
  if (st == MP_OK) r->ref_period_s = f.period;
  return st;
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

/* Rounds x to a multiple of 1e-6.  The simulator's figures of one plan differ in their last bits
 * (about 1e-11 relative) with the engine's clock, i.e. with how many evaluations ran before, so ranks
 * (each with an engine of its own) would see slightly different rewards for one plan and drift apart
 * bit by bit (a resumed run restores its checkpoint's clock instead: sim_restore).  Rewards are O(1) (periods relative to the initial plan's), so a grid
 * of 1e-6 keeps every real difference and makes a jitter-induced flip about a one-in-a-million
 * event per evaluation. */
static double snap(double x) { return round(x * 1e6) / 1e6; }

/* The figure (samples/s) to 9 significant digits, for the same reason: so that the best plan's figure
 * is the same whichever process, with whatever history, simulated it (resumed runs, MPI ranks). */
static double snap_figure(double x) {
  if (!(x > 0) || !isfinite(x)) return x;
  double scale = pow(10.0, 8 - floor(log10(x)));
  return round(x * scale) / scale;
}

mp_status rl_reward_eval(void *ctx, const int *arranged, rl_eval *out, mp_error *err) {
  const rl_reward *r = ctx;
  figures f;
  mp_status st = figures_of(r, arranged, r->ref_period_s, &f, err);
  if (st != MP_OK) return st;
  double reward = rl_reward_combine(&r->w, f.period, r->ref_period_s, f.mem_ratio, f.link_util);
  if (r->backend == RL_REWARD_SIM) {
    out->reward = snap(reward);
    out->balance = snap(f.balance);
    out->figure = snap_figure(1.0 / f.period);
  } else {
    out->reward = reward;
    out->balance = f.balance;
    out->figure = 1.0 / f.period;
  }
  out->feasible = f.feasible;
  return MP_OK;
}
