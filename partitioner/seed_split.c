/* seed_split: the model-splitting paper's two-phase method, with the cores as its devices.
 *
 * Devices are the cores in snake order; device d runs its layers alone at its own speed, so its
 * time is the analytical time of its layers on that one core (compute, or gamma-weighted send when
 * larger); a device with no layer takes 0 s (in the final plan its core joins the next group).
 *
 * Phase 1 (initial split).  Device d's target is the cumulative flops share
 *     E_d = F_total * (s_0 + ... + s_d) / (s_0 + ... + s_{C-1})       (s = flop rates),
 * a layer's "flops" being its work on one core (opcost.h: its flops, unless a core model times it).
 * Starting where device d-1 stopped, the boundary layer j is the first whose cumulative flops reach
 * E_d.  Two candidates: A keeps j on device d, B gives it to device d+1.  split_compare judges them
 * by the vector of times of devices 0..d followed by the ideal time of the rest (the flops left over
 * the speed left): if their standard deviations differ by more than tau it takes the lower standard
 * deviation, otherwise the lower mean, and A on a tie.  The last device takes every layer left (at
 * least one: if none is left it takes the last layer of the device before it that has layers).
 *
 * Phase 2 (finetune_maximum).  With the plan's stages (zeros joined), find the slowest stage (lowest
 * index on ties) and move its start later by one and by two layers (its first layers go to the stage
 * before; for the first stage its end moves earlier instead, to the stage after).  split_compare
 * picks the better of the two; it is kept if it lowers the bottleneck, else the method stops.  At
 * most max_step moves. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "method_int.h"

/* 1 if vector a is the better split, 0 if b is (the paper's split_compare). */
static int split_compare(const double *a, const double *b, int n, double tau) {
  double ma = 0, mb = 0, va = 0, vb = 0;
  for (int i = 0; i < n; i++) {
    ma += a[i];
    mb += b[i];
  }
  ma /= n;
  mb /= n;
  for (int i = 0; i < n; i++) {
    va += (a[i] - ma) * (a[i] - ma);
    vb += (b[i] - mb) * (b[i] - mb);
  }
  double sa = sqrt(va / n), sb = sqrt(vb / n);
  if (fabs(sa - sb) > tau) return sa <= sb;
  return ma <= mb;
}

static double device_time(cost_model *m, int first, int n, int core) {
  if (n == 0) return 0;
  cost_stage cs;
  cost_model_stage(m, first, n, core, 1, &cs);
  return cs.time_s;
}

/* Phase 1: fills count[0..C-1] (layers per device). */
static void initial_split(const graph *g, const chip *c, cost_model *m, double tau, int *count, double *va,
                          double *vb) {
  int L = g->n_ops, C = c->n_cores;
  double f_total = 0, s_total = 0;
  for (int j = 0; j < L; j++) f_total += cost_model_layer_work(m, j, 1);
  for (int d = 0; d < C; d++) s_total += c->cores[d].flops;
  double s_done = 0, f_done = 0; /* speed of devices 0..d, flops of the layers given out */
  int start = 0;
  for (int d = 0; d < C - 1; d++) {
    s_done += c->cores[d].flops;
    double target = f_total * s_done / s_total;
    if (start == L) {
      count[d] = 0;
      va[d] = vb[d] = 0;
      continue;
    }
    int j = start;
    double cum = f_done + cost_model_layer_work(m, j, 1);
    while (cum < target && j + 1 < L) {
      j++;
      cum += cost_model_layer_work(m, j, 1);
    }
    int n_a = j - start + 1, n_b = j - start;
    double rest_speed = s_total - s_done;
    va[d] = device_time(m, start, n_a, d);
    vb[d] = device_time(m, start, n_b, d);
    va[d + 1] = (f_total - cum) / rest_speed;
    vb[d + 1] = (f_total - (cum - cost_model_layer_work(m, j, 1))) / rest_speed;
    int keep = split_compare(va, vb, d + 2, tau);
    count[d] = keep ? n_a : n_b;
    f_done = keep ? cum : cum - cost_model_layer_work(m, j, 1);
    start += count[d];
    /* Both vectors carry the decided times of devices 0..d from here on. */
    va[d] = vb[d] = keep ? va[d] : vb[d];
  }
  count[C - 1] = L - start;
  if (count[C - 1] == 0)
    for (int d = C - 2; d >= 0; d--)
      if (count[d] > 0) {
        count[d]--;
        count[C - 1] = 1;
        break;
      }
}

/* Stage times of an arranged_core list into times[]; returns the number of stages, or -1 if the list
 * is not a valid plan. */
static int stage_times(cost_model *m, const int *arranged, int C, int L, double *times) {
  int n = 0, first_layer = 0, first_core = 0;
  for (int i = 0; i < C; i++) {
    if (arranged[i] < 0) return -1;
    if (arranged[i] == 0) continue;
    cost_stage cs;
    cost_model_stage(m, first_layer, arranged[i], first_core, i - first_core + 1, &cs);
    times[n++] = cs.time_s;
    first_layer += arranged[i];
    first_core = i + 1;
  }
  return first_layer == L && first_core == C ? n : -1;
}

static double max_of(const double *v, int n) {
  double w = 0;
  for (int i = 0; i < n; i++)
    if (v[i] > w) w = v[i];
  return w;
}

/* Moves k layers across the border of stage s (see the top comment) in a copy of arranged; returns 0
 * if the move would empty a stage or there is no neighbour. */
static int move_layers(const int *arranged, int C, int s, int k, int *out) {
  memcpy(out, arranged, (size_t)C * sizeof *out);
  int stage = 0, prev_end = -1, from = -1, to = -1;
  for (int i = 0; i < C; i++) {
    if (arranged[i] == 0) continue;
    if (s > 0 && stage == s) {
      from = i; /* stage s's entry gives its first layers to stage s - 1 */
      to = prev_end;
      break;
    }
    if (s == 0 && stage == 1) {
      from = prev_end; /* stage 0's entry gives its last layers to stage 1 */
      to = i;
      break;
    }
    prev_end = i;
    stage++;
  }
  if (from < 0 || to < 0 || out[from] <= k) return 0;
  out[from] -= k;
  out[to] += k;
  return 1;
}

mp_status method_seed_split(const graph *g, const chip *c, const method_options *o, plan **out, method_report *rep,
                            mp_error *err) {
  int L = g->n_ops, C = c->n_cores;
  cost_model *m = NULL;
  int *arr = malloc((size_t)C * sizeof *arr), *cand[2] = {malloc((size_t)C * sizeof(int)), malloc((size_t)C * sizeof(int))};
  double *va = malloc((size_t)(C + 1) * sizeof *va), *vb = malloc((size_t)(C + 1) * sizeof *vb);
  double *times = malloc((size_t)(C + 1) * sizeof *times);
  mp_status st = MP_OK;
  if (!arr || !cand[0] || !cand[1] || !va || !vb || !times) {
    st = err_nomem(err);
    goto cleanup;
  }
  st = cost_model_new(g, c, &m, err);
  if (st != MP_OK) goto cleanup;
  initial_split(g, c, m, o->tau, arr, va, vb);
  int n = stage_times(m, arr, C, L, times);
  double initial = max_of(times, n);
  int moves = 0;
  for (int step = 0; step < o->max_step && n > 1; step++) {
    double worst = max_of(times, n);
    int s = 0;
    while (times[s] != worst) s++;
    int ok[2];
    for (int k = 0; k < 2; k++) ok[k] = move_layers(arr, C, s, k + 1, cand[k]);
    int n1 = ok[0] ? stage_times(m, cand[0], C, L, va) : -1, n2 = ok[1] ? stage_times(m, cand[1], C, L, vb) : -1;
    int pick;
    if (n1 > 0 && n2 > 0)
      pick = split_compare(va, vb, n1, o->tau) ? 0 : 1;
    else if (n1 > 0)
      pick = 0;
    else if (n2 > 0)
      pick = 1;
    else
      break;
    double *tv = pick == 0 ? va : vb;
    int tn = pick == 0 ? n1 : n2;
    if (max_of(tv, tn) >= worst) break;
    memcpy(arr, cand[pick], (size_t)C * sizeof *arr);
    memcpy(times, tv, (size_t)tn * sizeof *times);
    n = tn;
    moves++;
  }
  st = plan_new(arr, C, L, out, err);
  if (st == MP_OK)
    method_note(rep, "seed-split: initial split %.6g s, finetune_maximum made %d move%s to %.6g s (tau %g s, max_step %d).",
                initial, moves, moves == 1 ? "" : "s", max_of(times, n), o->tau, o->max_step);
cleanup:
  cost_model_free(m);
  free(arr);
  free(cand[0]);
  free(cand[1]);
  free(va);
  free(vb);
  free(times);
  return st;
}
