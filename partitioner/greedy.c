/* greedy: TensorFlow's placement by simulated execution, then contiguous stages derived from it.
 *
 * Placement: walk the layers in topological order and put each on the core where it would finish
 * earliest (ties to the lowest core id): it starts when the core is free and every input has
 * arrived — an input made on another core arrives gamma_src * bytes / B + hops * latency after its
 * producer finished — and runs its work on one core / core speed (opcost.h: its flops, unless the
 * chip's core model times it).  This is one sample's schedule (latency-minded),
 * which is what TensorFlow's placer simulates.
 *
 * Deriving a plan: a placement need not be contiguous, so the stages are the maximal runs of
 * consecutive layers placed on one core; while there are more runs than cores, the adjacent pair
 * with the least combined flops is merged (ties to the lowest index).  The cores are then shared in
 * proportion to the stages' flops (method_share_cores).  The report says how many runs and cores the
 * placement used. */
#include <math.h>
#include <stdlib.h>

#include "method_int.h"
#include "opcost.h"

mp_status method_greedy(const graph *g, const chip *c, const method_options *o, plan **out, method_report *rep,
                        mp_error *err) {
  (void)o;
  int L = g->n_ops, C = c->n_cores;
  double *avail = calloc((size_t)C, sizeof *avail), *finish = malloc((size_t)L * sizeof *finish);
  int *where = malloc((size_t)L * sizeof *where), *used = calloc((size_t)C, sizeof *used);
  int *layers = malloc((size_t)L * sizeof *layers);
  double *weight = malloc((size_t)L * sizeof *weight);
  mp_status st = MP_OK;
  if (!avail || !finish || !where || !used || !layers || !weight) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int j = 0; j < L; j++) {
    const graph_op *op = &g->ops[j];
    double best = INFINITY, work = (double)opcost_op_work(c, op, 1);
    int at = 0;
    for (int p = 0; p < C; p++) {
      double ready = avail[p];
      for (int k = 0; k < op->n_inputs; k++) {
        const graph_tensor *t = &g->tensors[op->inputs[k]];
        if (t->producer < 0) continue;
        double arrive = finish[t->producer];
        int q = where[t->producer];
        if (q != p)
          arrive += c->cores[q].transfer_factor * (double)t->bytes / c->noc_bandwidth + chip_hops(c, q, p) * c->noc_latency;
        if (arrive > ready) ready = arrive;
      }
      double end = ready + work / c->cores[p].flops;
      if (end < best) {
        best = end;
        at = p;
      }
    }
    where[j] = at;
    finish[j] = best;
    avail[at] = best;
    used[at] = 1;
  }
  int cores_used = 0;
  for (int p = 0; p < C; p++) cores_used += used[p];
  double makespan = 0;
  for (int j = 0; j < L; j++)
    if (finish[j] > makespan) makespan = finish[j];
  /* Runs of consecutive layers on one core. */
  int n = 0;
  for (int j = 0; j < L; j++) {
    if (j == 0 || where[j] != where[j - 1]) {
      layers[n] = 0;
      weight[n] = 0;
      n++;
    }
    layers[n - 1]++;
    weight[n - 1] += (double)opcost_op_work(c, &g->ops[j], 1);
  }
  int runs = n;
  while (n > C) { /* merge the lightest adjacent pair */
    int best = 0;
    for (int i = 1; i + 1 < n; i++)
      if (weight[i] + weight[i + 1] < weight[best] + weight[best + 1]) best = i;
    layers[best] += layers[best + 1];
    weight[best] += weight[best + 1];
    for (int i = best + 1; i + 1 < n; i++) {
      layers[i] = layers[i + 1];
      weight[i] = weight[i + 1];
    }
    n--;
  }
  st = method_plan_with_shares(layers, weight, n, C, out, err);
  if (st == MP_OK)
    method_note(rep, "greedy: placed %d layers on %d core%s (one sample in %.6g s); derived %d contiguous stage%s from "
                "the %d runs of consecutive layers on one core%s, cores in proportion to stage flops.",
                L, cores_used, cores_used == 1 ? "" : "s", makespan, n, n == 1 ? "" : "s", runs,
                runs > n ? " (lightest neighbours merged to fit the cores)" : "");
cleanup:
  free(avail);
  free(finish);
  free(where);
  free(used);
  free(layers);
  free(weight);
  return st;
}
