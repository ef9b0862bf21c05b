/* optimal_repair: the starts beside the relaxations' plans, the local search that takes optimal's
 * best start to a better plan on the full model (optimal.c; the relaxations ignore what only whole plans
 * have: per-destination Sends, latencies, contention), and the deep search that continues from it where
 * that stops far from the bound (rl's search of the model, rl_search.h).  Moves keep a plan valid (every
 * stage at least one layer and one core), so every plan it returns is one the model can cost. */
#include <stdlib.h>
#include <string.h>

#include "method_int.h"
#include "optimal_int.h"
#include "plan.h"
#include "rl_env.h"
#include "rl_reward.h"
#include "rl_search.h"


mp_status optimal_cost_candidate(cost_model *m, candidate *x, double *stage_s, mp_error *err) {
  plan *p = NULL;
  mp_status st = plan_from_stages(x->layers, x->cores, x->n, &p, err);
  if (st != MP_OK) return st;
  x->period = cost_model_period(m, p, stage_s, NULL, &x->fits, NULL);
  plan_free(p);
  if (x->period < 0) return err_nomem(err);
  x->value = x->obj == OBJECTIVE_TIME ? x->period : objective_value(x->obj, x->period, cost_model_energy(m, x->period));
  double s8 = 0;
  for (int i = 0; i < x->n; i++) {
    double r = stage_s[i] / x->period;
    s8 += r * r * r * r * r * r * r * r;
  }
  x->norm = s8;
  return MP_OK;
}

int optimal_better(const candidate *a, const candidate *b) {
  if (a->mem_first && a->fits != b->fits) return a->fits;
  return a->value < b->value || (a->value == b->value && a->norm < b->norm);
}

int optimal_clearly_better(const candidate *a, const candidate *b) {
  if (a->mem_first && a->fits != b->fits) return a->fits;
  return a->value < b->value;
}

/* Merges stages i and i + 1 of x (keep 0) or splits stage i in two halves of its layers and cores
 * (keep 1; x has room for one more stage).  0 when the stage cannot be split. */
static int restructure(candidate *x, int i, int split) {
  if (!split) {
    x->layers[i] += x->layers[i + 1];
    x->cores[i] += x->cores[i + 1];
    memmove(x->layers + i + 1, x->layers + i + 2, (size_t)(x->n - i - 2) * sizeof(int));
    memmove(x->cores + i + 1, x->cores + i + 2, (size_t)(x->n - i - 2) * sizeof(int));
    x->n--;
    return 1;
  }
  if (x->layers[i] < 2 || x->cores[i] < 2) return 0;
  memmove(x->layers + i + 1, x->layers + i, (size_t)(x->n - i) * sizeof(int));
  memmove(x->cores + i + 1, x->cores + i, (size_t)(x->n - i) * sizeof(int));
  x->layers[i] /= 2;
  x->cores[i] /= 2;
  x->layers[i + 1] -= x->layers[i];
  x->cores[i + 1] -= x->cores[i];
  x->n++;
  return 1;
}

/* 1 when one of stages [i, i + k) of x alone, stage-local and without contention (a lower bound on its
 * time in the full model), takes longer than period: then x cannot be better than a plan at period. */
static int hopeless(cost_model *m, const candidate *x, int i, int k, double period) {
  int fl = 0, fc = 0;
  for (int j = 0; j < i; j++) {
    fl += x->layers[j];
    fc += x->cores[j];
  }
  for (int j = i; j < i + k && j < x->n; j++) {
    cost_stage cs;
    cost_model_stage(m, fl, x->layers[j], fc, x->cores[j], &cs);
    if (cs.time_s > period) return 1;
    fl += x->layers[j];
    fc += x->cores[j];
  }
  return 0;
}

void optimal_candidate_of(candidate *x, const plan *p) {
  x->n = p->n_stages;
  for (int i = 0; i < p->n_stages; i++) {
    x->layers[i] = p->stages[i].n_layers;
    x->cores[i] = p->stages[i].n_cores;
  }
}

void optimal_copy_candidate(candidate *to, const candidate *from) {
  to->n = from->n;
  memcpy(to->layers, from->layers, (size_t)from->n * sizeof(int));
  memcpy(to->cores, from->cores, (size_t)from->n * sizeof(int));
  to->period = from->period;
  to->value = from->value;
  to->obj = from->obj;
  to->norm = from->norm;
  to->fits = from->fits;
  to->mem_first = from->mem_first;
}

/* Local search from *best on the full model, judged by best->obj: sweeps over the stage boundaries trying every move of one
 * layer or one core across each, taking a move as soon as it gives a strictly better plan (first
 * improvement: on hundreds of stages a sweep makes many moves for the cost of one steepest step); when
 * a sweep improves nothing, a sweep of merges of neighbouring stages and splits of a stage in halves,
 * then moves again; until neither improves (or max_rounds sweeps).  *best has room for cap stages.
 * Returns the sweeps run, or -1 on an error (err set). */
int optimal_repair(cost_model *m, candidate *best, int cap, int max_rounds, mp_error *err) {
  int rounds = 0, structural = 0;
  candidate trial = {.layers = malloc((size_t)cap * sizeof(int)), .cores = malloc((size_t)cap * sizeof(int))};
  double *stage_s = malloc((size_t)cap * sizeof *stage_s);
  if (!trial.layers || !trial.cores || !stage_s) {
    rounds = -1;
    err_nomem(err);
    goto cleanup;
  }
  optimal_copy_candidate(&trial, best);
  /* a stage slower than the best period rules a plan out only when the period is what is minimised */
  int timed = best->obj == OBJECTIVE_TIME;
  while (rounds < max_rounds) {
    rounds++;
    double before = best->value;
    if (!structural) {
      for (int i = 0; i + 1 < best->n; i++)
        for (int move = 0; move < 4; move++) {
          int *v = move < 2 ? trial.layers : trial.cores, from = move % 2 ? i + 1 : i, to = move % 2 ? i : i + 1;
          if (v[from] < 2) continue;
          v[from]--;
          v[to]++;
          int skip = timed && hopeless(m, &trial, i, 2, best->period);
          if (!skip && optimal_cost_candidate(m, &trial, stage_s, err) != MP_OK) {
            rounds = -1;
            goto cleanup;
          }
          if (!skip && optimal_better(&trial, best)) {
            optimal_copy_candidate(best, &trial);
          } else { /* undo */
            v[from]++;
            v[to]--;
          }
        }
    } else {
      for (int i = 0; i < best->n; i++)
        for (int split = 0; split < 2; split++) {
          if ((!split && i + 1 >= best->n) || (split && best->n >= cap)) continue;
          if (!restructure(&trial, i, split)) continue;
          int skip = timed && hopeless(m, &trial, i, 1 + split, best->period);
          if (!skip && optimal_cost_candidate(m, &trial, stage_s, err) != MP_OK) {
            rounds = -1;
            goto cleanup;
          }
          if (!skip && optimal_better(&trial, best)) {
            optimal_copy_candidate(best, &trial);
          } else {
            optimal_copy_candidate(&trial, best);
          }
        }
    }
    int faster = best->value < before;
    if (structural && !faster) break;
    structural = !faster; /* moves that only even out the rest: time to restructure */
  }
cleanup:
  free(trial.layers);
  free(trial.cores);
  free(stage_s);
  return rounds;
}

static int same_plan(const candidate *a, const candidate *b) {
  return a->n == b->n && memcmp(a->layers, b->layers, (size_t)a->n * sizeof *a->layers) == 0 &&
         memcmp(a->cores, b->cores, (size_t)a->n * sizeof *a->cores) == 0;
}

int optimal_deep_starts(cost_model *m, const graph *g, const chip *c, candidate *cand, int n_cand, int *pick,
                        double enough, int *searched, mp_error *err) {
  int first = *pick, changed = 0, n = 0, *order = malloc(2 * (size_t)n_cand * sizeof *order), *dup = order + n_cand;
  if (!order) {
    err_nomem(err);
    return -1;
  }
  for (int i = 0; i < n_cand; i++) { /* the repaired best first, then the others by their value */
    if (i != first && optimal_repair(m, &cand[i], g->n_ops, OPTIMAL_REPAIR_ROUNDS, err) < 0) {
      free(order);
      return -1;
    }
    int k = n++;
    while (k > 0 && (i == first || (order[k - 1] != first && cand[i].value < cand[order[k - 1]].value))) {
      order[k] = order[k - 1];
      k--;
    }
    order[k] = i;
  }
  for (int k = 0; k < n; k++) { /* a repaired plan met before would be searched again */
    dup[k] = 0;
    for (int q = 0; q < k && !dup[k]; q++) dup[k] = same_plan(&cand[order[k]], &cand[order[q]]);
  }
  *searched = 0;
  for (int k = 0; k < n && cand[*pick].period > enough; k++) {
    int i = order[k];
    if (dup[k]) continue;
    (*searched)++;
    int r = optimal_deep_repair(m, g, c, i == first, &cand[i], err);
    if (r < 0) {
      changed = -1;
      break;
    }
    if (i == first && r == 1) changed = 1;
    if (i != *pick && optimal_better(&cand[i], &cand[*pick])) {
      *pick = i;
      changed = 1;
    }
  }
  free(order);
  return changed;
}

/* The fast methods whose plans join the relaxations' as starts of the repair: the model's best start
 * may come from anywhere (a relaxation's plan ignores the link loads). */
const char *const optimal_other_starts[OPTIMAL_OTHER_STARTS] = {"even", "balanced", "seed-split", "greedy"};

mp_status optimal_method_starts(const graph *g, const chip *c, candidate *cand, int *n, mp_error *err) {
  method_options mo;
  method_options_default(&mo);
  for (size_t k = 0; k < (size_t)OPTIMAL_OTHER_STARTS; k++) {
    plan *p = NULL;
    method_report rep;
    mp_status st = method_run(optimal_other_starts[k], g, c, &mo, &p, &rep, err);
    if (st != MP_OK) return st;
    optimal_candidate_of(&cand[(*n)++], p);
    plan_free(p);
  }
  return MP_OK;
}

/* ---- the deep search: rl's search of the model, from the repaired plan ------------------------------- */

int optimal_deep_search(const graph *g, int n_cores, uint64_t seed, int kick, rl_reward *r, candidate *x,
                        mp_error *err) {
  int C = n_cores, rc = -1;
  int *arranged = malloc((size_t)C * sizeof *arranged);
  plan_stage *stages = malloc((size_t)C * sizeof *stages);
  rl_env *env = NULL;
  rl_trainer *t = NULL;
  if (!arranged || !stages) {
    err_nomem(err);
    goto cleanup;
  }
  plan_arranged_of_stages(x->layers, x->cores, x->n, arranged);
  rl_train_config cfg;
  rl_train_config_default(&cfg, C);
  cfg.seed = seed;
  cfg.feasible_first = x->mem_first;
  if (rl_env_from_graph(g, C, &env, err) != MP_OK) goto cleanup;
  rl_instance in = {env, arranged, rl_reward_eval, r, cfg.seed};
  int kicks = !kick                                   ? 0
              : OPTIMAL_DEEP_KICK_BUDGET / C < OPTIMAL_DEEP_KICKS ? OPTIMAL_DEEP_KICK_BUDGET / C
                                                                  : OPTIMAL_DEEP_KICKS;
  if (rl_trainer_new(&cfg, &in, 1, NULL, &t, err) != MP_OK ||
      rl_search_regroup(t, 0, OPTIMAL_DEEP_REGROUP_ROUNDS, err) != MP_OK)
    goto cleanup;
  /* the kicks, a few at a time, until they are done or have scored OPTIMAL_DEEP_EVALS plans */
  rl_train_stats ts;
  rl_trainer_get_stats(t, &ts);
  long stop = ts.evaluations + OPTIMAL_DEEP_EVALS;
  for (int done = 0; done < kicks && ts.evaluations < stop; done += OPTIMAL_DEEP_KICK_CHUNK) {
    int now = kicks - done < OPTIMAL_DEEP_KICK_CHUNK ? kicks - done : OPTIMAL_DEEP_KICK_CHUNK;
    if (rl_search_kick(t, 0, now, OPTIMAL_DEEP_KICK_MOVES, err) != MP_OK) goto cleanup;
    rl_trainer_get_stats(t, &ts);
  }
  if (rl_search_regroup(t, 0, OPTIMAL_DEEP_REGROUP_ROUNDS, err) != MP_OK ||
      rl_search_polish_pairs(t, 0, OPTIMAL_DEEP_PAIR_ROUNDS, err) != MP_OK)
    goto cleanup;
  plan best;
  plan_view(rl_trainer_best(t, 0, NULL), C, g->n_ops, stages, &best);
  optimal_candidate_of(x, &best);
  rc = 0;
cleanup:
  rl_trainer_free(t);
  rl_env_free(env);
  free(stages);
  free(arranged);
  return rc;
}

int optimal_deep_repair(cost_model *m, const graph *g, const chip *c, int kick, candidate *best, mp_error *err) {
  int changed = -1;
  int *arranged = malloc((size_t)c->n_cores * sizeof *arranged);
  double *stage_s = malloc(((size_t)g->n_ops + 1) * sizeof *stage_s);
  candidate found = *best;
  found.layers = malloc((size_t)g->n_ops * sizeof(int));
  found.cores = malloc((size_t)g->n_ops * sizeof(int));
  rl_reward r = {0};
  if (!arranged || !stage_s || !found.layers || !found.cores) {
    err_nomem(err);
    goto cleanup;
  }
  optimal_copy_candidate(&found, best);
  plan_arranged_of_stages(best->layers, best->cores, best->n, arranged);
  if (rl_reward_init_model(&r, m, c->n_cores, g->n_ops, arranged, NULL, err) != MP_OK ||
      optimal_deep_search(g, c->n_cores, optimal_deep_seed(g, c), kick, &r, &found, err) < 0 ||
      optimal_cost_candidate(m, &found, stage_s, err) != MP_OK)
    goto cleanup;
  changed = 0;
  if (optimal_better(&found, best) && optimal_repair(m, &found, g->n_ops, OPTIMAL_REPAIR_ROUNDS, err) < 0)
    changed = -1;
  else if (optimal_clearly_better(&found, best)) {
    optimal_copy_candidate(best, &found);
    changed = 1;
  }
cleanup:
  rl_reward_clear(&r);
  free(found.layers);
  free(found.cores);
  free(stage_s);
  free(arranged);
  return changed;
}
