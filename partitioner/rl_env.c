/* rl_env: states, actions and features of the RL partitioner.  See rl_env.h. */
#include "rl_env.h"

#include <stdlib.h>
#include <string.h>

mp_status rl_env_new(int n_cores, int n_layers, const uint64_t *layer_macs, rl_env **out, mp_error *err) {
  *out = NULL;
  if (n_cores < 2) return err_set(err, MP_INPUT, "rl_env: the RL partitioner needs at least 2 cores, got %d", n_cores);
  if (n_layers < 1) return err_set(err, MP_INPUT, "rl_env: the graph has no layers");
  rl_env *e = calloc(1, sizeof *e);
  if (!e) return err_nomem(err);
  e->n_cores = n_cores;
  e->n_layers = n_layers;
  e->n_actions = 4 * (n_cores - 1);
  e->n_features = 2 * n_cores;
  e->cum_macs = malloc(((size_t)n_layers + 1) * sizeof *e->cum_macs);
  if (!e->cum_macs) {
    rl_env_free(e);
    return err_nomem(err);
  }
  e->cum_macs[0] = 0;
  for (int l = 0; l < n_layers; l++) e->cum_macs[l + 1] = e->cum_macs[l] + (layer_macs ? (double)layer_macs[l] : 0.0);
  *out = e;
  return MP_OK;
}

mp_status rl_env_from_graph(const graph *g, int n_cores, rl_env **out, mp_error *err) {
  *out = NULL;
  uint64_t *macs = malloc(((size_t)g->n_ops > 0 ? (size_t)g->n_ops : 1) * sizeof *macs);
  if (!macs) return err_nomem(err);
  for (int l = 0; l < g->n_ops; l++) macs[l] = g->ops[l].macs;
  mp_status st = rl_env_new(n_cores, g->n_ops, macs, out, err);
  free(macs);
  return st;
}

void rl_env_free(rl_env *e) {
  if (!e) return;
  free(e->cum_macs);
  free(e);
}

int rl_env_valid_state(const rl_env *e, const int *arranged) {
  long sum = 0;
  for (int i = 0; i < e->n_cores; i++) {
    if (arranged[i] < 0) return 0;
    sum += arranged[i];
  }
  return sum == e->n_layers && arranged[e->n_cores - 1] > 0;
}

int rl_env_can_apply(const rl_env *e, const int *arranged, int action) {
  if (action < 0 || action >= e->n_actions) return 0;
  int i = action / 4, last = e->n_cores - 1;
  switch (action % 4) {
  case RL_ACT_MERGE_RIGHT:
  case RL_ACT_GIVE_RIGHT:
    return arranged[i] > 0;
  case RL_ACT_MERGE_LEFT:
    return i + 1 < last && arranged[i + 1] > 0;
  default: /* RL_ACT_TAKE_RIGHT */
    return arranged[i + 1] > (i + 1 == last ? 1 : 0);
  }
}

int rl_env_apply(const rl_env *e, const int *arranged, int action, int *next) {
  int ok = rl_env_can_apply(e, arranged, action);
  if (next != arranged) memcpy(next, arranged, (size_t)e->n_cores * sizeof *next);
  if (!ok) return 0;
  int i = action / 4;
  switch (action % 4) {
  case RL_ACT_MERGE_RIGHT:
    next[i + 1] += next[i];
    next[i] = 0;
    break;
  case RL_ACT_MERGE_LEFT:
    next[i] += next[i + 1];
    next[i + 1] = 0;
    break;
  case RL_ACT_GIVE_RIGHT:
    next[i]--;
    next[i + 1]++;
    break;
  default:
    next[i + 1]--;
    next[i]++;
    break;
  }
  return 1;
}

int rl_env_mask(const rl_env *e, const int *arranged, unsigned char *mask) {
  int n = 0;
  for (int a = 0; a < e->n_actions; a++) n += mask[a] = (unsigned char)rl_env_can_apply(e, arranged, a);
  return n;
}

void rl_env_features(const rl_env *e, const int *arranged, double *x) {
  int n = e->n_cores;
  double total = e->cum_macs[e->n_layers];
  int start = 0;
  for (int i = 0; i < n; i++) {
    x[i] = (double)arranged[i] * n / e->n_layers;
    double m = e->cum_macs[start + arranged[i]] - e->cum_macs[start];
    x[n + i] = total > 0 ? m * n / total : 0.0;
    start += arranged[i];
  }
}
