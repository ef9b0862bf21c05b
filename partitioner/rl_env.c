/* rl_env: states, actions and features of the RL partitioner.  See rl_env.h. */
#include "rl_env.h"

#include <stdlib.h>
#include <string.h>

mp_status rl_env_new(int n_cores, int n_layers, const uint64_t *layer_macs, const uint64_t *layer_weights,
                     rl_env **out, mp_error *err) {
  *out = NULL;
  if (n_cores < 2) return err_set(err, MP_INPUT, "rl_env: the RL partitioner needs at least 2 cores, got %d", n_cores);
  if (n_layers < 1) return err_set(err, MP_INPUT, "rl_env: the graph has no layers");
  rl_env *e = calloc(1, sizeof *e);
  if (!e) return err_nomem(err);
  e->n_cores = n_cores;
  e->n_layers = n_layers;
  e->n_actions = RL_PAIR_ACTIONS * (n_cores - 1);
  e->n_pairs = n_cores - 1;
  e->n_features = e->n_pairs * RL_PAIR_FEATURES;
  e->cum_macs = malloc(((size_t)n_layers + 1) * sizeof *e->cum_macs);
  e->cum_weights = malloc(((size_t)n_layers + 1) * sizeof *e->cum_weights);
  e->core = malloc((size_t)n_cores * RL_CORE_FEATURES * sizeof *e->core);
  if (!e->cum_macs || !e->cum_weights || !e->core) {
    rl_env_free(e);
    return err_nomem(err);
  }
  e->cum_macs[0] = e->cum_weights[0] = 0;
  for (int l = 0; l < n_layers; l++) {
    e->cum_macs[l + 1] = e->cum_macs[l] + (layer_macs ? (double)layer_macs[l] : 0.0);
    e->cum_weights[l + 1] = e->cum_weights[l] + (layer_weights ? (double)layer_weights[l] : 0.0);
  }
  *out = e;
  return MP_OK;
}

mp_status rl_env_from_graph(const graph *g, int n_cores, rl_env **out, mp_error *err) {
  *out = NULL;
  size_t n = g->n_ops > 0 ? (size_t)g->n_ops : 1;
  uint64_t *macs = malloc(n * sizeof *macs), *weights = malloc(n * sizeof *weights);
  mp_status st;
  if (!macs || !weights) {
    st = err_nomem(err);
  } else {
    for (int l = 0; l < g->n_ops; l++) macs[l] = g->ops[l].macs, weights[l] = g->ops[l].weight_bytes;
    st = rl_env_new(n_cores, g->n_ops, macs, weights, out, err);
  }
  free(macs);
  free(weights);
  return st;
}

void rl_env_free(rl_env *e) {
  if (!e) return;
  free(e->cum_macs);
  free(e->cum_weights);
  free(e->core);
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

void rl_env_features(rl_env *e, const int *arranged, double *x) {
  const int n = e->n_cores, F = RL_CORE_FEATURES;
  const double total = e->cum_macs[e->n_layers];
  double *core = e->core;
  /* Pass 1: per group, its per-core MACs and weights (kept in f2, f3 of its cores), the maxima. */
  double max_m = 0, max_w = 0;
  int n_groups = 0, start_layer = 0, g0 = 0;
  for (int c = 0; c < n; c++) {
    core[c * F + 0] = (double)arranged[c] * n / e->n_layers;
    double m = e->cum_macs[start_layer + arranged[c]] - e->cum_macs[start_layer];
    core[c * F + 1] = total > 0 ? m * n / total : 0.0;
    core[c * F + 4] = arranged[c] > 0;
    if (arranged[c] == 0) continue;
    int k = c - g0 + 1;
    double gm = m / k, gw = (e->cum_weights[start_layer + arranged[c]] - e->cum_weights[start_layer]) / k;
    for (int d = g0; d <= c; d++) core[d * F + 2] = gm, core[d * F + 3] = gw, core[d * F + 5] = k;
    max_m = gm > max_m ? gm : max_m;
    max_w = gw > max_w ? gw : max_w;
    n_groups++;
    start_layer += arranged[c];
    g0 = c + 1;
  }
  /* Pass 2: normalise. */
  for (int c = 0; c < n; c++) {
    core[c * F + 2] = max_m > 0 ? core[c * F + 2] / max_m : 0.0;
    core[c * F + 3] = max_w > 0 ? core[c * F + 3] / max_w : 0.0;
    core[c * F + 5] = core[c * F + 5] * n_groups / n;
  }
  /* Rows: cores i-1 .. i+2 of each pair, then the two edge flags. */
  for (int i = 0; i < e->n_pairs; i++) {
    double *row = x + (size_t)i * RL_PAIR_FEATURES;
    for (int w = 0; w < 4; w++) {
      int c = i - 1 + w;
      for (int f = 0; f < F; f++) row[w * F + f] = c >= 0 && c < n ? core[c * F + f] : 0.0;
    }
    row[4 * F] = i - 1 >= 0;
    row[4 * F + 1] = i + 2 < n;
  }
}
