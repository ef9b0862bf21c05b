/* optimal_train: the training optimum.  See optimal_train.h; the per-count machinery (monotone compute,
 * memory that falls with the core count, DRAM at the best position, bitsets of core totals shifted by runs
 * of counts) is that of optimal.c, applied to a stage's training sums (train_range) and its stash class.
 *
 * Classes: q = min(stages from this one to the end, M) under 1F1B (a stage of class q holds q stashes),
 * q = 1 for every stage under GPipe (M stashes); class 0 is the empty suffix.  Q = M + 1 (1F1B) or 2.
 * zb is solved on 1F1B's classes and two DRAM passes, a relaxation (a zb stage also holds W-stashes and
 * streams three times), so its bound stays a lower bound; every plan is then judged on zb's own model
 * (cost_of). */
#include "optimal_train.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "optimal_int.h"

typedef struct ot {
  const graph *g;
  const chip *c;
  train *t;
  int L, C, words, Q, M, gpipe, strict;
  double f, S, gamma, B;
  optimal_dram dram;      /* of a uniform chip with ports (only its lo tables are used); NULL otherwise */
  uint64_t *reach;        /* R(l)[q]: ((L + 1) * Q + q) * words */
  uint64_t *tmp;
  int *runs;
  long checks;
  int root;         /* 1F1B: 0, or the class the first stage must have (q < M: exactly q stages) */
  int by_minibatch; /* cost_of's value: 0 the period, 1 the mini-batch time */
  mp_status failed; /* a range could not be planned (out of memory) */
  mp_error *err;
} ot;

static int next_class(const ot *o, int q) { return o->gpipe ? 1 : q + 1 < o->M ? q + 1 : o->M; }
static int class_of(const ot *o, int stages_left) { return o->gpipe ? 1 : stages_left < o->M ? stages_left : o->M; }
static int held(const ot *o, int q) { return o->gpipe ? o->M : q; }

/* A stage of class q as the relaxation holds it: held(q) stashes (the first of q stages under 1F1B; GPipe
 * M), no W-stashes, two DRAM passes. */
static train_hold relaxed_hold(const ot *o, int q) {
  return (train_hold){o->gpipe ? TRAIN_GPIPE : TRAIN_1F1B, 0, q, o->M, 2};
}

/* ---- a stage's relaxed time ---------------------------------------------------------------------------- */

static double compute_at(const ot *o, const train_range *r, int c) {
  return cost_compute_s((double)(r->fwd_flops + r->bwd_flops + r->recompute_flops), (double)c * o->f,
                        (double)(r->fwd_gather + r->bwd_gather), c, o->B);
}

static double dram_at(const ot *o, const train_range *r, int c, int q) {
  if (!o->dram.in_lo) return 0;
  double e = train_mem_bytes(r, c, held(o, q), 0) - o->S;
  if (!(e > 0)) return 0;
  double w = (double)r->static_bytes / c, out = e > w ? e - w : 0;
  return 2 * (e * o->dram.in_lo[c] + out * o->dram.out_lo[c]);
}

static double send_of(const ot *o, const train_range *r) {
  return cost_send_s((double)(r->send_bytes + r->recv_bytes), o->gamma, o->B);
}

static double time_at(const ot *o, const train_range *r, int c, int q) {
  double busy = compute_at(o, r, c) + dram_at(o, r, c, q), send = send_of(o, r);
  return busy > send ? busy : send;
}

/* Least c in [lo, hi] where want(c) holds (false then true as c grows), or hi + 1. */
typedef int (*pred_fn)(const ot *, const train_range *, int, int, double);
static int pred_fits(const ot *o, const train_range *r, int c, int q, double T) {
  (void)T;
  return train_mem_bytes(r, c, held(o, q), 0) <= o->S;
}
static int pred_within(const ot *o, const train_range *r, int c, int q, double T) {
  (void)q;
  return compute_at(o, r, c) <= T;
}
static int pred_over(const ot *o, const train_range *r, int c, int q, double T) {
  (void)q;
  return compute_at(o, r, c) > T;
}

static int first_true(const ot *o, const train_range *r, int q, double T, pred_fn want, int lo, int hi) {
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (want(o, r, mid, q, T))
      hi = mid - 1;
    else
      lo = mid + 1;
  }
  return lo;
}

/* S(l, r, q) at T within room cores as runs [a, b] in o->runs; the number of runs, or -1 when neither this
 * stage nor a longer one with the same first layer can be within T (its compute alone exceeds T). */
static int stage_counts(ot *o, const train_range *r, int q, double T, int room) {
  int C = o->C, cl = 1, ch = C, n = 0;
  double c1 = compute_at(o, r, 1), cC = compute_at(o, r, C);
  if ((c1 < cC ? c1 : cC) > T) return -1;
  if (c1 >= cC)
    cl = first_true(o, r, q, T, pred_within, 1, C);
  else
    ch = first_true(o, r, q, T, pred_over, 1, C) - 1;
  if (room < 1 || send_of(o, r) > T) return 0;
  if (ch > room) ch = room;
  int cfit = first_true(o, r, q, T, pred_fits, 1, C);
  for (int c = cl; c <= ch && c < cfit && !o->strict; c++)
    if (compute_at(o, r, c) + dram_at(o, r, c, q) <= T) n = optimal_runs_add(o->runs, n, c, c);
  int a = cfit > cl ? cfit : cl;
  if (a <= ch) n = optimal_runs_add(o->runs, n, a, ch);
  return n;
}

/* The range l..l+n-1's figures (planned once, train.h); NULL after recording a failure. */
static const train_range *range(ot *o, int l, int n, train_range *buf) {
  if (o->failed) return NULL;
  mp_status st = train_range_of(o->t, l, n, buf, o->err);
  if (st != MP_OK) {
    o->failed = st;
    return NULL;
  }
  return buf;
}

/* ---- bitsets of core totals ---------------------------------------------------------------------------- */

static uint64_t *set_of(const ot *o, int l, int q) { return o->reach + ((size_t)l * o->Q + (size_t)q) * o->words; }
static int lowest(const ot *o, const uint64_t *s) {
  for (int i = 0; i < o->words; i++)
    if (s[i]) return 64 * i + __builtin_ctzll(s[i]);
  return -1;
}

/* ---- the threshold DP from the end --------------------------------------------------------------------- */

static int check(ot *o, double T) {
  o->checks++;
  memset(o->reach, 0, (size_t)(o->L + 1) * (size_t)o->Q * (size_t)o->words * sizeof *o->reach);
  set_of(o, o->L, 0)[0] = 1;
  train_range buf;
  for (int l = o->L - 1; l >= 0; l--)
    for (int r = l; r < o->L; r++) {
      const train_range *rg = range(o, l, r - l + 1, &buf);
      if (!rg) return 0;
      int pruned = 0, top = o->root ? o->root : o->Q; /* a root of class q is built on suffixes of classes < q */
      for (int q = 0; q < top && !pruned; q++) {
        const uint64_t *from = set_of(o, r + 1, q);
        int m = lowest(o, from);
        if (m < 0) continue;
        int qn = next_class(o, q), n = stage_counts(o, rg, qn, T, o->C - m);
        if (n < 0) pruned = 1;
        for (int k = 0; k < n; k++) optimal_or_shifted(set_of(o, l, qn), from, o->runs[2 * k], o->runs[2 * k + 1], o->C, o->words, o->tmp);
      }
      if (pruned) break; /* compute only grows with the stage: no longer one from l is within T */
    }
  if (o->root) return optimal_bit(set_of(o, 0, o->root), o->C);
  for (int q = 1; q < o->Q; q++)
    if (optimal_bit(set_of(o, 0, q), o->C)) return 1;
  return 0;
}

/* After a successful check: one plan within T, first stage first (the shortest first stage, then its fewest
 * cores).  Returns its stage count, or -1 (a failure recorded, or none: cannot happen). */
static int recover(ot *o, double T, int *layers, int *cores) {
  int q = o->root ? o->root : 1, l = 0, k = o->C, n = 0;
  while (!o->root && q < o->Q && !optimal_bit(set_of(o, 0, q), o->C)) q++;
  train_range buf;
  while (l < o->L) {
    int found = 0;
    for (int r = l; r < o->L && !found; r++) {
      const train_range *rg = range(o, l, r - l + 1, &buf);
      if (!rg) return -1;
      int runs = -2;
      for (int qp = 0; qp < o->Q && !found; qp++) {
        if (next_class(o, qp) != q) continue;
        if ((runs = stage_counts(o, rg, q, T, k)) < 0) break;
        const uint64_t *from = set_of(o, r + 1, qp);
        for (int i = 0; i < runs && !found; i++)
          for (int c = o->runs[2 * i]; c <= o->runs[2 * i + 1] && c <= k && !found; c++)
            if (optimal_bit(from, k - c)) {
              layers[n] = r - l + 1;
              cores[n++] = c;
              l = r + 1;
              k -= c;
              q = qp;
              found = 1;
            }
      }
      if (runs == -1) break;
    }
    if (!found) return -1;
  }
  return n;
}

/* The relaxation's value of a plan given as stage arrays (first stage first). */
static double plan_value(ot *o, const int *layers, const int *cores, int n) {
  double worst = 0;
  train_range buf;
  for (int i = 0, l = 0; i < n; l += layers[i++]) {
    const train_range *rg = range(o, l, layers[i], &buf);
    if (!rg) return -1;
    double v = time_at(o, rg, cores[i], class_of(o, n - i));
    worst = v > worst ? v : worst;
  }
  return worst;
}

/* The relaxed stage values strictly between lo and hi, or -1 if more than OPTIMAL_MAX_CANDIDATES (a range
 * that cannot be planned is recorded in o->failed). */
static int candidates(ot *o, double lo, double hi, double *out) {
  int n = 0;
  train_range buf;
  for (int l = 0; l < o->L; l++)
    for (int r = l; r < o->L; r++) {
      const train_range *rg = range(o, l, r - l + 1, &buf);
      if (!rg) return 0;
      int pruned = 0;
      for (int q = 1; q < o->Q && !pruned; q++) {
        int runs = stage_counts(o, rg, q, hi, o->C);
        if (runs < 0) pruned = 1;
        for (int i = 0; i < runs; i++)
          for (int c = o->runs[2 * i]; c <= o->runs[2 * i + 1]; c++) {
            double v = time_at(o, rg, c, q);
            if (v > lo && v < hi) {
              if (n == OPTIMAL_MAX_CANDIDATES) return -1;
              out[n++] = v;
            }
          }
      }
      if (pruned) break;
    }
  return n;
}

/* optimal_search's view of the DP: a plan's stages (first first) go to layers/cores. */
typedef struct search_ctx {
  ot *o;
  int *layers, *cores;
} search_ctx;

static int search_check(void *ctx, double T) { return check(((search_ctx *)ctx)->o, T); }

static double search_value(void *ctx, double T) {
  search_ctx *x = ctx;
  int k = recover(x->o, T, x->layers, x->cores);
  return k < 0 ? -1 : plan_value(x->o, x->layers, x->cores, k);
}

static int search_candidates(void *ctx, double lo, double hi, double *out) {
  return candidates(((search_ctx *)ctx)->o, lo, hi, out);
}

/* The relaxation's optimum and its plan (first stage first, *n stages); -1 on failure. */
static double solve(ot *o, int *layers, int *cores, int *n) {
  if (!check(o, INFINITY)) { /* memory first, but nothing fits: the least period whatever the memory */
    o->strict = 0;
    if (!check(o, INFINITY)) return -1;
  }
  if ((*n = recover(o, INFINITY, layers, cores)) < 0) return -1;
  double hi = plan_value(o, layers, cores, *n), result = 0;
  if (hi < 0) return -1;
  if (!check(o, 0)) {
    search_ctx x = {o, layers, cores};
    optimal_dp dp = {search_check, search_value, search_candidates, &x};
    result = optimal_search(&dp, 0, hi);
  }
  if (result < 0 || o->failed || !check(o, result)) return -1;
  *n = recover(o, result, layers, cores);
  return *n < 0 ? -1 : result;
}

/* ---- set-up ------------------------------------------------------------------------------------------ */

static void ot_free(ot *o) {
  optimal_dram_clear(&o->dram);
  free(o->reach);
  free(o->tmp);
  free(o->runs);
  train_free(o->t);
}

static mp_status ot_init(ot *o, const graph *g, const chip *c, const train_options *to, mp_error *err) {
  memset(o, 0, sizeof *o);
  o->g = g;
  o->c = c;
  o->err = err;
  o->L = g->n_ops;
  o->C = c->n_cores;
  o->M = to->microbatches;
  o->gpipe = to->schedule == TRAIN_GPIPE;
  o->Q = o->gpipe ? 2 : o->M + 1;
  o->strict = c->n_dram == 0;
  o->words = (o->C + 1 + 63) / 64;
  o->f = c->cores[0].flops;
  o->S = (double)c->cores[0].sram_bytes;
  o->gamma = c->cores[0].transfer_factor;
  o->B = c->noc_bandwidth;
  mp_status st = train_new(g, to, &o->t, err);
  if (st != MP_OK) return st;
  o->reach = malloc((size_t)(o->L + 1) * (size_t)o->Q * (size_t)o->words * sizeof *o->reach);
  o->tmp = malloc((size_t)o->words * sizeof *o->tmp);
  o->runs = malloc(2 * ((size_t)o->C + 2) * sizeof *o->runs);
  if (!o->reach || !o->tmp || !o->runs) st = err_nomem(err);
  if (st == MP_OK && c->n_dram > 0 && !c->heterogeneous) st = optimal_dram_tables(c, &o->dram, err);
  if (st != MP_OK) ot_free(o);
  return st;
}

/* ---- heterogeneous chips: the DP over (layer, core) suffixes ------------------------------------------- */

/* best[(l, k, q)]: the least largest stage-local time of layers l.. on cores k.. in class q. */
static double solve_positions(ot *o, int *layers, int *cores, int *n) {
  int L = o->L, C = o->C, Q = o->Q;
  size_t cells = (size_t)(L + 1) * (size_t)(C + 1) * (size_t)Q;
#define AT(l, k, q) (((size_t)(l) * (size_t)(C + 1) + (size_t)(k)) * (size_t)Q + (size_t)(q))
  double *best = malloc(cells * sizeof *best), result = -1;
  int *to_r = malloc(cells * sizeof *to_r), *to_j = malloc(cells * sizeof *to_j), *to_q = malloc(cells * sizeof *to_q);
  cost_model *m = NULL;
  if (!best || !to_r || !to_j || !to_q || cost_model_new(o->g, o->c, &m, o->err) != MP_OK) goto cleanup;
again:
  for (size_t i = 0; i < cells; i++) best[i] = INFINITY;
  best[AT(L, C, 0)] = 0;
  train_range buf;
  for (int l = L - 1; l >= 0; l--)
    for (int r = l; r < L; r++) {
      const train_range *rg = range(o, l, r - l + 1, &buf);
      if (!rg) goto cleanup;
      for (int k = 0; k < C; k++)
        for (int j = k + 1; j <= C; j++)
          for (int q = 0; q < Q; q++) {
            double rest = best[AT(r + 1, j, q)];
            if (rest == INFINITY) continue;
            int qn = next_class(o, q);
            cost_stage cs;
            train_hold h = relaxed_hold(o, qn);
            train_stage_local(m, rg, l, r - l + 1, k, j - k, &h, &cs);
            if (o->strict && !cs.fits) continue;
            double v = cs.time_s > rest ? cs.time_s : rest;
            size_t at = AT(l, k, qn);
            if (v < best[at]) {
              best[at] = v;
              to_r[at] = r;
              to_j[at] = j;
              to_q[at] = q;
            }
          }
    }
  int q = 1;
  for (int x = 2; x < Q; x++)
    if (best[AT(0, 0, x)] < best[AT(0, 0, q)]) q = x;
  if (best[AT(0, 0, q)] == INFINITY) {
    if (!o->strict) goto cleanup;
    o->strict = 0;
    goto again;
  }
  result = best[AT(0, 0, q)];
  *n = 0;
  for (int l = 0, k = 0; l < L;) {
    size_t at = AT(l, k, q);
    layers[*n] = to_r[at] - l + 1;
    cores[(*n)++] = to_j[at] - k;
    l = to_r[at] + 1;
    k = to_j[at];
    q = to_q[at];
  }
#undef AT
cleanup:
  cost_model_free(m);
  free(best);
  free(to_r);
  free(to_j);
  free(to_q);
  return result;
}

/* ---- the full model: starts, repair, result ------------------------------------------------------------ */

static mp_status cost_of(ot *o, candidate *x) {
  plan *p = NULL;
  train_result *r = NULL;
  mp_status st = plan_from_stages(x->layers, x->cores, x->n, &p, o->err);
  if (st == MP_OK) st = train_evaluate(o->t, o->c, p, &r, o->err);
  if (st == MP_OK) {
    x->period = r->period_s;
    x->fits = r->feasible;
    x->value = o->by_minibatch ? r->minibatch_s : r->period_s;
    x->norm = 0;
  }
  train_result_free(r);
  plan_free(p);
  return st;
}

/* Merges stages i and i + 1 of x. */
static void merge(candidate *x, int i) {
  x->layers[i] += x->layers[i + 1];
  x->cores[i] += x->cores[i + 1];
  memmove(x->layers + i + 1, x->layers + i + 2, (size_t)(x->n - i - 2) * sizeof(int));
  memmove(x->cores + i + 1, x->cores + i + 2, (size_t)(x->n - i - 2) * sizeof(int));
  x->n--;
}

/* Moves a stage boundary by one layer or one core while that lowers the value (or makes the plan fit,
 * memory first), and - judged by the mini-batch, where each stage adds its fill and drain - merges two
 * neighbouring stages when that is better; at most `rounds` sweeps.  Returns the sweeps run, or -1 on
 * failure. */
static int repair(ot *o, candidate *best, candidate *trial, int rounds) {
  int sweeps = 0;
  for (int improved = 1; improved && sweeps < rounds; sweeps++) {
    improved = 0;
    for (int i = 0; o->by_minibatch && i + 1 < best->n; i++) {
      trial->n = best->n;
      memcpy(trial->layers, best->layers, (size_t)best->n * sizeof(int));
      memcpy(trial->cores, best->cores, (size_t)best->n * sizeof(int));
      merge(trial, i);
      trial->mem_first = best->mem_first;
      if (cost_of(o, trial) != MP_OK) return -1;
      if (optimal_better(trial, best)) {
        optimal_copy_candidate(best, trial);
        improved = 1;
      }
    }
    for (int i = 0; i + 1 < best->n; i++)
      for (int mv = 0; mv < 4; mv++) {
        int *a = mv < 2 ? trial->layers : trial->cores, d = mv % 2 ? 1 : -1;
        trial->n = best->n;
        memcpy(trial->layers, best->layers, (size_t)best->n * sizeof(int));
        memcpy(trial->cores, best->cores, (size_t)best->n * sizeof(int));
        if (a[i] + d < 1 || a[i + 1] - d < 1) continue;
        a[i] += d;
        a[i + 1] -= d;
        trial->mem_first = best->mem_first;
        if (cost_of(o, trial) != MP_OK) return -1;
        if (optimal_better(trial, best)) {
          best->period = trial->period;
          best->value = trial->value;
          best->fits = trial->fits;
          memcpy(best->layers, trial->layers, (size_t)best->n * sizeof(int));
          memcpy(best->cores, trial->cores, (size_t)best->n * sizeof(int));
          improved = 1;
        }
      }
  }
  return sweeps;
}

#define OPTIMAL_TRAIN_REPAIR_ROUNDS 32

/* The deep search on the training model's mini-batch (optimal_int.h) from *best, then the repair
 * (trial: scratch) from the best plan it finds, kept in *best when its mini-batch is lower (or, memory
 * first, it fits where *best does not); *changed says whether it was.  MP_NOMEM, or a range's failure. */
static mp_status deep_minibatch(ot *o, candidate *best, candidate *trial, int *changed) {
  candidate found = *best;
  found.layers = malloc((size_t)o->L * sizeof(int));
  found.cores = malloc((size_t)o->L * sizeof(int));
  int *arranged = malloc((size_t)o->C * sizeof *arranged);
  rl_reward r = {0};
  mp_status st = MP_OK;
  if (!found.layers || !found.cores || !arranged) {
    st = err_nomem(o->err);
    goto cleanup;
  }
  optimal_copy_candidate(&found, best);
  plan_arranged_of_stages(best->layers, best->cores, best->n, arranged);
  st = rl_reward_init_train_model(&r, o->t, o->c, o->L, arranged, NULL, o->err);
  if (st == MP_OK && optimal_deep_search(o->g, o->C, optimal_deep_seed(o->g, o->c), 1, &r, &found, o->err) < 0)
    st = o->err->status;
  if (st == MP_OK) st = cost_of(o, &found);
  if (st == MP_OK && optimal_better(&found, best) && repair(o, &found, trial, OPTIMAL_TRAIN_REPAIR_ROUNDS) < 0)
    st = o->err->status;
  if (st == MP_OK && optimal_clearly_better(&found, best)) {
    optimal_copy_candidate(best, &found);
    *changed = 1;
  }
cleanup:
  rl_reward_clear(&r);
  free(found.layers);
  free(found.cores);
  free(arranged);
  return st;
}

/* Stage counts q whose plans join the mini-batch's starts: every q below M up to 4, then two per
 * doubling (a mini-batch is roughly (p + M - 1) periods under 1F1B, so fewer stages can win). */
static int next_count(int q) { return q < 4 ? q + 1 : q + q / 2; }

/* A plan of the root class (o->root) whose relaxed period is within 1 % of the least such, found by
 * bisection from lo (below every plan's period) with the recovered plans tightening the upper end: a
 * start for the mini-batch's repair, which moves its boundaries anyway, so the exact search of solve()
 * (most of its checks) would be wasted here.  Returns the plan's value, or -1 when the class has no
 * plan or on a failure. */
static double solve_near(ot *o, double lo, int *layers, int *cores, int *n) {
  if (!check(o, INFINITY)) { /* memory first, but no plan of the class fits: the least period whatever */
    o->strict = 0;
    if (!check(o, INFINITY)) return -1;
  }
  if ((*n = recover(o, INFINITY, layers, cores)) < 0) return -1;
  double hi = plan_value(o, layers, cores, *n);
  for (int it = 0; it < 40 && hi > lo * 1.01 && hi > 0; it++) {
    double mid = lo > 0 ? sqrt(lo * hi) : hi / 2;
    if (!check(o, mid)) {
      lo = mid;
      continue;
    }
    if ((*n = recover(o, mid, layers, cores)) < 0) return -1;
    hi = plan_value(o, layers, cores, *n);
  }
  if (o->failed || hi < 0) return -1;
  check(o, hi); /* the tables of the plan kept: recover it again, as it may come from an earlier check */
  *n = recover(o, hi, layers, cores);
  return *n < 0 ? -1 : hi;
}

/* 1F1B: GPipe's training optimum (its stages hold M stashes each, never fewer than under 1F1B, and its
 * DP has one class, so it reaches plans of many stages the classes below do not), and a plan of exactly
 * q stages within 1 % of the relaxation's least period for them (solve_near), for the counts q < M of
 * next_count on a uniform chip (none when no plan has q stages); each a candidate with room for L stages,
 * in *more (owned, *n_more of them).  GPipe: none.  MP_NOMEM, or a range's failure. */
static mp_status more_starts(ot *o, const train_options *to, double t_low, candidate **more, int *n_more) {
  *more = NULL;
  *n_more = 0;
  if (o->gpipe) return MP_OK;
  int cap = 1;
  for (int q = 1; q < o->M && q <= o->L && q <= o->C; q = next_count(q)) cap++;
  candidate *m = calloc((size_t)cap, sizeof *m);
  if (!m) return err_nomem(o->err);
  *more = m;
  train_options gp = *to;
  gp.schedule = TRAIN_GPIPE;
  plan *p = NULL;
  optimal_result gres;
  method_report gp_rep = {0};
  mp_status st = optimal_train_solve(o->g, o->c, &gp, &p, &gres, &gp_rep, o->err);
  if (st != MP_OK) return st;
  candidate *x = &m[(*n_more)++];
  x->layers = malloc((size_t)o->L * sizeof(int));
  x->cores = malloc((size_t)o->L * sizeof(int));
  if (!x->layers || !x->cores) {
    plan_free(p);
    return err_nomem(o->err);
  }
  optimal_candidate_of(x, p);
  plan_free(p);
  int strict = o->strict;
  for (int q = 1; !o->c->heterogeneous && q < o->M && q <= o->L && q <= o->C; q = next_count(q)) {
    candidate *y = &m[*n_more];
    y->layers = malloc((size_t)o->L * sizeof(int));
    y->cores = malloc((size_t)o->L * sizeof(int));
    if (!y->layers || !y->cores) {
      free(y->layers);
      free(y->cores);
      return err_nomem(o->err);
    }
    (*n_more)++;
    o->root = q;
    o->strict = strict;
    double v = solve_near(o, t_low, y->layers, y->cores, &y->n);
    o->root = 0;
    if (o->failed) return o->failed;
    if (v < 0) { /* no plan of q stages: drop the slot */
      free(y->layers);
      free(y->cores);
      (*n_more)--;
    }
  }
  o->strict = strict;
  return MP_OK;
}

/* A certified lower bound on the mini-batch time of any plan: under both schedules it is at least M
 * times the slowest stage's forward and backward (sum + (M - 1) x max >= M x max), each at least its work
 * at its cores' peak, and the slowest stage's is at least the whole work over the chip's total peak. */
static double minibatch_low(ot *o) {
  train_range all;
  if (train_range_of(o->t, 0, o->L, &all, o->err) != MP_OK) return 0;
  double speed = 0;
  for (int k = 0; k < o->C; k++) speed += o->c->cores[k].flops;
  return o->M * (double)(all.fwd_flops + all.bwd_flops + all.recompute_flops) / speed;
}

mp_status optimal_train_solve(const graph *g, const chip *c, const train_options *to, plan **out, optimal_result *res,
                              method_report *rep, mp_error *err) {
  *out = NULL;
  memset(res, 0, sizeof *res);
  ot o;
  mp_status st = ot_init(&o, g, c, to, err);
  if (st != MP_OK) return st;
  candidate cand[N_STARTS + 1];
  memset(cand, 0, sizeof cand);
  for (int k = 0; k <= N_STARTS; k++) {
    cand[k].layers = malloc((size_t)o.L * sizeof(int));
    cand[k].cores = malloc((size_t)o.L * sizeof(int));
    if (!cand[k].layers || !cand[k].cores) st = err_nomem(err);
  }
  double t_low = -1;
  int n = 1, pick = 0, sweeps = 0;
  if (st == MP_OK) {
    t_low = c->heterogeneous ? solve_positions(&o, cand[0].layers, cand[0].cores, &cand[0].n)
                             : solve(&o, cand[0].layers, cand[0].cores, &cand[0].n);
    if (t_low < 0) st = o.failed ? o.failed : err_nomem(err);
  }
  if (st == MP_OK) st = optimal_method_starts(g, c, cand, &n, err);
  for (int i = 0; i < n && st == MP_OK; i++) {
    cand[i].mem_first = c->n_dram == 0;
    st = cost_of(&o, &cand[i]);
    if (st == MP_OK && optimal_better(&cand[i], &cand[pick])) pick = i;
  }
  double before = st == MP_OK ? cand[pick].period : 0;
  if (st == MP_OK && (sweeps = repair(&o, &cand[pick], &cand[N_STARTS], OPTIMAL_TRAIN_REPAIR_ROUNDS)) < 0)
    st = err->status;
  double T_best = st == MP_OK ? cand[pick].period : 0;
  /* The mini-batch: the least-period plan, the starts, and (1F1B) the relaxation's least-period plan of
   * exactly q stages for q below M, judged by the mini-batch time and repaired on it. */
  candidate *more = NULL;
  int n_more = 0, mb_pick = pick, mb_sweeps = 0;
  double mb_before = 0;
  if (st == MP_OK) st = more_starts(&o, to, t_low, &more, &n_more);
  o.by_minibatch = 1;
  candidate *best = &cand[pick];
  for (int i = 0; i < n + n_more && st == MP_OK; i++) {
    candidate *y = i < n ? &cand[i] : &more[i - n];
    y->mem_first = c->n_dram == 0;
    st = cost_of(&o, y);
    if (st == MP_OK && (i == 0 || optimal_better(y, best))) best = y, mb_pick = i;
  }
  if (st == MP_OK) mb_before = best->value;
  /* every start repaired, not only the best: the mini-batch's local optima are many, and a start of
   * many stages merged down often ends below the best start's (ResNet-50 on 8x8, M = 8: 112.4 ->
   * 140.5 samples/s simulated) */
  for (int i = 0; i < n + n_more && st == MP_OK; i++) {
    candidate *y = i < n ? &cand[i] : &more[i - n];
    int sw = repair(&o, y, &cand[N_STARTS], OPTIMAL_TRAIN_REPAIR_ROUNDS);
    if (sw < 0) st = err->status;
    mb_sweeps += sw;
    if (st == MP_OK && optimal_better(y, best)) best = y, mb_pick = i;
  }
  /* the deep search on the mini-batch from the best (optimal_int.h): the repair's boundary moves and
   * merges stop where groups must be re-split many moves away */
  double mb_repaired = st == MP_OK ? best->value : 0;
  int deep = st == MP_OK && c->n_cores >= 2 &&
             (c->n_cores <= OPTIMAL_DEEP_TRAIN_MAX_CORES || best->n <= OPTIMAL_DEEP_TRAIN_BIG_STAGES),
      deep_changed = 0;
  if (deep) st = deep_minibatch(&o, best, &cand[N_STARTS], &deep_changed);
  if (st == MP_OK) st = plan_from_stages(best->layers, best->cores, best->n, out, err);
  if (st == MP_OK) {
    res->period_s = best->period;
    res->lower_s = t_low;
    res->value = best->value;
    res->lower_value = minibatch_low(&o);
    res->exact = best->value <= res->lower_value * (1 + 1e-12);
    const char *how = c->heterogeneous ? "heterogeneous chip: position-aware DP from the end"
                                       : "uniform chip: threshold DP from the end over stash classes";
    method_note(rep,
                "optimal for training (%s, %s, M %d, %ld feasibility checks): %d stages, a mini-batch in %.6g s "
                "(model period %.6g s); certified lower bounds %.6g s on the period (stage-local terms, Sends once "
                "each way, DRAM at the best position) and %.6g s on the mini-batch (%s), gap %.2f%%.",
                train_schedule_name(to->schedule), how, to->microbatches, o.checks, best->n, best->value,
                best->period, t_low, res->lower_value, res->exact ? "reached: exact" : "every core busy all the time",
                res->lower_value > 0 ? 100 * (best->value / res->lower_value - 1) : 0.0);
    method_note(rep,
                "The least period found is %.6g s (the relaxation's plan and the fast methods' repaired from %.6g s in "
                "%d sweep%s); the best start's mini-batch was %.6g s, and with every start repaired on the "
                "mini-batch (%d sweeps in all) the best came from %s.",
                T_best, before, sweeps, sweeps == 1 ? "" : "s", mb_before, mb_sweeps,
                mb_pick == pick ? "the least-period plan" : mb_pick < n ? "another start" : mb_pick == n ? "GPipe's optimum" : "a plan of fewer stages");
    if (deep)
      method_note(rep,
                  "The deep search from it (partitioner/README.md) %s (the repaired mini-batch %.6g s).",
                  deep_changed ? "found the plan above" : "found no better plan", mb_repaired);
  }
  for (int k = 0; k <= N_STARTS; k++) {
    free(cand[k].layers);
    free(cand[k].cores);
  }
  for (int k = 0; k < n_more; k++) {
    free(more[k].layers);
    free(more[k].cores);
  }
  free(more);
  ot_free(&o);
  return st;
}

mp_status optimal_train_relaxed(const graph *g, const chip *c, const train_options *to, const plan *p, double *value,
                                mp_error *err) {
  ot o;
  mp_status st = ot_init(&o, g, c, to, err);
  if (st != MP_OK) return st;
  int *layers = malloc(((size_t)p->n_stages + 1) * sizeof *layers), *cores = malloc(((size_t)p->n_stages + 1) * sizeof *cores);
  cost_model *m = NULL;
  if (!layers || !cores || (c->heterogeneous && cost_model_new(g, c, &m, err) != MP_OK)) {
    st = layers && cores ? err->status : err_nomem(err);
    goto cleanup;
  }
  for (int i = 0; i < p->n_stages; i++) {
    layers[i] = p->stages[i].n_layers;
    cores[i] = p->stages[i].n_cores;
  }
  if (!c->heterogeneous) {
    *value = plan_value(&o, layers, cores, p->n_stages);
  } else {
    *value = 0;
    train_range buf;
    for (int i = 0; i < p->n_stages; i++) {
      const plan_stage *s = &p->stages[i];
      const train_range *rg = range(&o, s->first_layer, s->n_layers, &buf);
      if (!rg) break;
      cost_stage cs;
      train_hold h = relaxed_hold(&o, class_of(&o, p->n_stages - i));
      train_stage_local(m, rg, s->first_layer, s->n_layers, s->first_core, s->n_cores, &h, &cs);
      *value = cs.time_s > *value ? cs.time_s : *value;
    }
  }
  if (o.failed) st = o.failed;
cleanup:
  cost_model_free(m);
  free(layers);
  free(cores);
  ot_free(&o);
  return st;
}
