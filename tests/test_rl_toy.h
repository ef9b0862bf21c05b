/* The toy partitioning instance the RL suites share (test_rl_train, test_rl_search, test_rl_ckpt): a
 * synthetic cost whose stage time is F / c + 0.3 · layers · (c − 1) / c, a reward callback over it
 * that can be told to fail, its brute-force optimum, and a trainer set-up around it.  Not a suite:
 * the functions are static inline so that each suite compiles only the ones it uses. */
#ifndef MESHPIPE_TEST_RL_TOY_H
#define MESHPIPE_TEST_RL_TOY_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rl_train.h"
#include "testutil.h"

typedef struct toy {
  int n_cores, n_layers;
  double flops[16];
  int fail_at_sum_first; /* when >= 0: fail for plans whose arranged[0] equals it */
  int fail_after; /* when > 0: fail every call after that many */
  int calls;
} toy;

static inline double toy_period(const toy *t, const int *a) {
  double worst = 0;
  int layer = 0, first_core = 0;
  for (int c = 0; c < t->n_cores; c++) {
    if (a[c] == 0) continue;
    int cores = c - first_core + 1;
    double f = 0;
    for (int l = layer; l < layer + a[c]; l++) f += t->flops[l];
    double time = f / cores + 0.3 * a[c] * (cores - 1) / cores;
    worst = time > worst ? time : worst;
    layer += a[c];
    first_core = c + 1;
  }
  return worst;
}

static inline mp_status toy_reward(void *ctx, const int *a, rl_eval *out, mp_error *err) {
  toy *t = ctx;
  t->calls++;
  if (t->fail_after > 0 && t->calls > t->fail_after) return err_set(err, MP_RUN, "toy: refusing call %d", t->calls);
  if (t->fail_at_sum_first >= 0 && a[0] == t->fail_at_sum_first)
    return err_set(err, MP_RUN, "toy: refusing plans with %d layers on core 0", a[0]);
  double p = toy_period(t, a);
  out->reward = -p;
  out->balance = 0;
  out->figure = 1.0 / p;
  out->feasible = 1;
  return MP_OK;
}

static inline toy make_toy(int n_cores, int n_layers) {
  toy t;
  memset(&t, 0, sizeof t);
  t.n_cores = n_cores;
  t.n_layers = n_layers;
  for (int l = 0; l < n_layers; l++) t.flops[l] = 1.0 + (double)((l * 7) % 5) + (l == 2 ? 6.0 : 0.0);
  t.fail_at_sum_first = -1;
  return t;
}

/* Best reward over every plan of the toy, by enumeration. */
static inline double toy_brute_force(const toy *t) {
  int cur[16] = {0}, n = t->n_cores, L = t->n_layers;
  double best = -INFINITY;
  for (;;) {
    int sum = 0;
    for (int i = 0; i < n; i++) sum += cur[i];
    if (sum == L && cur[n - 1] > 0) {
      double r = -toy_period(t, cur);
      best = r > best ? r : best;
    }
    int i = 0;
    while (i < n && ++cur[i] > L) cur[i++] = 0;
    if (i == n) return best;
  }
}

typedef struct setup {
  toy t;
  rl_env *env;
  int init[16];
  rl_instance inst;
  rl_train_config cfg;
} setup;

/* The toy of n_cores and n_layers from its even split, and the default configuration with seed. */
static inline void setup_toy(setup *s, int n_cores, int n_layers, uint64_t seed) {
  memset(s, 0, sizeof *s);
  s->t = make_toy(n_cores, n_layers);
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(rl_env_new(n_cores, n_layers, NULL, NULL, &s->env, &err), MP_OK);
  for (int i = 0; i < n_cores; i++) s->init[i] = n_layers / n_cores + (i >= n_cores - n_layers % n_cores);
  s->inst = (rl_instance){s->env, s->init, toy_reward, &s->t, 0x1234};
  rl_train_config_default(&s->cfg, n_cores);
  s->cfg.seed = seed;
  s->cfg.hidden = 16;
}

static inline void run_all(rl_trainer *t) {
  mp_error err;
  while (!rl_trainer_done(t)) CU_ASSERT_EQUAL_FATAL(rl_trainer_iterate(t, &err), MP_OK);
}

#endif
