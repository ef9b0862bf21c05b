/* baseline: the naive splits users compare against.
 *
 * even (GPipe's default): equal numbers of layers per core.  With L >= C layers every core is a stage
 *   of floor(L/C) or ceil(L/C) layers (the longer ones first); with L < C every layer is a stage and
 *   the cores are shared out equally (the first stages get the remainder).
 * balanced (torchgpipe's balance by flops): k = min(L, C) contiguous blocks minimising the largest
 *   block's flops (exact: binary search on the bound with a greedy packing, then the fewest cuts
 *   forced so that there are exactly k blocks); the cores are shared in proportion to the blocks'
 *   flops (one each when k = C). */
#include <stdint.h>
#include <stdlib.h>

#include "method_int.h"

mp_status method_even(const graph *g, const chip *c, const method_options *o, plan **out, method_report *rep,
                      mp_error *err) {
  (void)o;
  int L = g->n_ops, C = c->n_cores;
  int k = L < C ? L : C;
  int *layers = calloc((size_t)k, sizeof *layers);
  if (!layers) return err_nomem(err);
  for (int i = 0; i < k; i++) layers[i] = L / k + (i < L % k ? 1 : 0);
  mp_status st = method_plan_with_shares(layers, NULL, k, C, out, err);
  free(layers);
  if (st == MP_OK)
    method_note(rep, "even: %d stages of %d-%d layers on %d-%d cores each.", k, L / k, (L + k - 1) / k, C / k,
                (C + k - 1) / k);
  return st;
}

/* Whether the layers pack into at most k blocks of at most bound flops each. */
static int packs(const graph *g, int k, uint64_t bound) {
  int blocks = 1;
  uint64_t cur = 0;
  for (int j = 0; j < g->n_ops; j++) {
    uint64_t f = g->ops[j].flops;
    if (f > bound) return 0;
    if (cur + f > bound) {
      blocks++;
      cur = 0;
    }
    cur += f;
  }
  return blocks <= k;
}

mp_status method_balanced(const graph *g, const chip *c, const method_options *o, plan **out, method_report *rep,
                          mp_error *err) {
  (void)o;
  int L = g->n_ops, C = c->n_cores;
  int k = L < C ? L : C;
  uint64_t lo = 0, hi = 0; /* the least bound that packs lies in (lo, hi] (or is 0) */
  for (int j = 0; j < L; j++) hi += g->ops[j].flops;
  if (packs(g, k, 0)) hi = 0;
  while (hi > 0 && hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (packs(g, k, mid))
      hi = mid;
    else
      lo = mid;
  }
  int *layers = malloc((size_t)k * sizeof *layers);
  double *weight = malloc((size_t)k * sizeof *weight);
  mp_status st = MP_OK;
  if (!layers || !weight) {
    st = err_nomem(err);
    goto cleanup;
  }
  /* Pack greedily under hi, cutting early when the layers left are just enough for the blocks left. */
  int b = 0;
  uint64_t cur = g->ops[0].flops;
  layers[0] = 1;
  for (int j = 1; j < L; j++) {
    uint64_t f = g->ops[j].flops;
    if (cur + f > hi || L - j == k - (b + 1)) {
      weight[b] = (double)cur;
      b++;
      layers[b] = 0;
      cur = 0;
    }
    layers[b]++;
    cur += f;
  }
  weight[b] = (double)cur;
  /* b + 1 == k: the packing under hi needs at most k blocks and the forced cuts supply the rest. */
  st = method_plan_with_shares(layers, weight, k, C, out, err);
  if (st == MP_OK)
    method_note(rep, "balanced: %d blocks, the largest %.6g flops; cores in proportion to block flops.", k,
                (double)hi);
cleanup:
  free(layers);
  free(weight);
  return st;
}
