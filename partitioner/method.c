/* method: the table of partitioners and what they share.  See method.h. */
#include "method.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "method_int.h"
#include "train.h"
#include "proc.h"

/* The partitioners, in the order help and compare list them: name, summary, function, learning,
 * objectives. */
static const method_info methods[] = {
    {"optimal", "least analytical period (DP, certified bound); least energy or mini-batch with --objective, --mode train",
     method_optimal, 0, 1},
    {"seed-split", "the model-splitting paper: flops shares by speed, split_compare, finetune_maximum",
     method_seed_split, 0, 0},
    {"greedy", "TensorFlow's simulated placement: each op where it finishes earliest", method_greedy, 0, 0},
    {"even", "equal numbers of layers per core (GPipe's default)", method_even, 0, 0},
    {"balanced", "contiguous blocks balancing flops (torchgpipe's balance)", method_balanced, 0, 0},
    {"rl", "REINFORCE policy-guided search on the simulator's runtime (best plan seen)", method_rl, 1, 1},
};
#define N_METHODS ((int)(sizeof methods / sizeof methods[0]))

void method_options_default(method_options *o) {
  memset(o, 0, sizeof *o);
  o->seed = 1;
  o->tau = 1e-6;
  o->max_step = 100;
  o->episodes = -1;
  o->ranks = 1;
}

int method_count(void) { return N_METHODS; }

const method_info *method_at(int i) { return i >= 0 && i < N_METHODS ? &methods[i] : NULL; }

const method_info *method_find(const char *name) {
  for (int i = 0; i < N_METHODS; i++)
    if (strcmp(methods[i].name, name) == 0) return &methods[i];
  return NULL;
}

void method_note(method_report *rep, const char *fmt, ...) {
  size_t used = strlen(rep->notes);
  if (used + 2 >= sizeof rep->notes) return;
  if (used > 0) {
    rep->notes[used++] = ' ';
    rep->notes[used] = '\0';
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rep->notes + used, sizeof rep->notes - used, fmt, ap);
  va_end(ap);
}

mp_status method_run(const char *name, const graph *g, const chip *c, const method_options *o, plan **out,
                     method_report *rep, mp_error *err) {
  *out = NULL;
  memset(rep, 0, sizeof *rep);
  const method_info *m = method_find(name);
  if (!m) {
    char known[256] = "";
    for (int i = 0; i < N_METHODS; i++) {
      size_t used = strlen(known);
      snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", methods[i].name);
    }
    return err_set(err, MP_USAGE, "no method '%s' (known: %s)", name, known);
  }
  objective obj = o ? o->objective : OBJECTIVE_TIME;
  if (obj != OBJECTIVE_TIME && !c->has_energy)
    return err_set(err, MP_USAGE,
                   "--objective %s needs a chip with energy figures, and %s has none (platforms/README.md, "
                   "\"Energy\")", objective_name(obj), c->name);
  if (obj != OBJECTIVE_TIME && o->train)
    return err_set(err, MP_USAGE, "--objective %s is for inference: the training model has no energy (use time)",
                   objective_name(obj));
  double t0 = proc_now_s();
  plan *p = NULL;
  mp_status st = m->run(g, c, o, &p, rep, err);
  rep->solve_s = proc_now_s() - t0;
  if (st != MP_OK) return st;
  if (o && o->train) { /* training: does the plan fit with the stashes its stages hold (train.h) */
    train *t = NULL;
    st = train_new(g, o->train, &t, err);
    if (st == MP_OK && train_model_period(t, c, p, NULL, NULL, &rep->feasible, err) < 0) st = err->status;
    train_free(t);
    if (st != MP_OK) {
      plan_free(p);
      return st;
    }
  } else {
    cost_model *cm = NULL;
    st = cost_model_new(g, c, &cm, err);
    if (st != MP_OK) {
      plan_free(p);
      return st;
    }
    if (cost_model_period(cm, p, NULL, NULL, &rep->feasible, NULL) < 0) {
      cost_model_free(cm);
      plan_free(p);
      return err_nomem(err);
    }
    cost_model_free(cm);
  }
  if (obj != OBJECTIVE_TIME && !m->objectives)
    method_note(rep, "%s splits by its own rule: --objective %s does not apply to it.", m->name, objective_name(obj));
  if (!rep->feasible && !strstr(rep->notes, "memory")) method_note(rep, "The plan does not fit memory.");
  *out = p;
  return MP_OK;
}

void method_share_cores(const double *weight, int n, int n_cores, int *out) {
  double total = 0;
  for (int i = 0; i < n; i++) total += weight ? weight[i] : 0;
  int spare = n_cores - n; /* every stage has one core already */
  int given = 0;
  for (int i = 0; i < n; i++) {
    double share = total > 0 ? (double)spare * weight[i] / total : (double)spare / n;
    out[i] = 1 + (int)share;
    given += (int)share;
  }
  /* Largest remainders: hand out what flooring left, one core each, biggest fraction first. */
  while (given < spare) {
    int best = -1;
    double best_frac = -1;
    for (int i = 0; i < n; i++) {
      double share = total > 0 ? (double)spare * weight[i] / total : (double)spare / n;
      double frac = share - (double)(out[i] - 1);
      if (frac > best_frac) {
        best_frac = frac;
        best = i;
      }
    }
    out[best]++;
    given++;
  }
  /* Rounding can make the floors overshoot by a core: take it back from the largest stage. */
  while (given > spare) {
    int big = 0;
    for (int i = 1; i < n; i++)
      if (out[i] > out[big]) big = i;
    out[big]--;
    given--;
  }
}

mp_status method_plan_with_shares(const int *stage_layers, const double *weight, int n_stages, int n_cores, plan **out,
                                  mp_error *err) {
  int *cores = malloc((size_t)n_stages * sizeof *cores);
  if (!cores) return err_nomem(err);
  method_share_cores(weight, n_stages, n_cores, cores);
  mp_status st = plan_from_stages(stage_layers, cores, n_stages, out, err);
  free(cores);
  return st;
}
