/* optimal: the least period of the analytical model over all plans, with a certified lower bound
 * (partitioner/README.md, "optimal").
 *
 * A plan cuts the layers 0..L-1 into consecutive stages and the snake-ordered cores 0..C-1 into as
 * many consecutive groups, stage i on group i, every core used.  Its period in the model (cost.h) is
 * the largest of its stage times and its links' loads over their bandwidth.  The terms are of two
 * kinds.  Stage-local ones depend on a stage's layers l..r, its core count c and, for DRAM streams,
 * where its cores sit: the compute (work and all-gathers), the DRAM reads and writes of a group whose
 * share does not fit, the Sends of its tensors counted once.  Plan terms depend on the other stages
 * too: one Send per destination group and its hops, a hop's latency per all-gather segment, the load
 * of every NoC link and DRAM port.
 *
 * Uniform chips (every core alike).  Two relaxations are solved exactly, each a min-max over plans
 * whose stage cost depends on (l, r, c) only:
 *   LOW   compute without latency, DRAM streams at the group's best position (the least, over the
 *         positions of c consecutive cores, of the busiest stream link's cores per bandwidth), every
 *         tensor sent once without latency.  Each term is at most the model's, so the optimum T_low of
 *         LOW is at most every plan's period: a certified lower bound.
 *   HIGH  compute with a hop's latency per layer, DRAM at the worst position with the longest route's
 *         latency, a Send per consumer layer beyond the stage at the longest route's latency.  Each stage
 *         term is at least the model's, so the HIGH plan's stages are within its optimum in the model.
 * Both plans and those of the fast methods are costed in full, the best is improved by a local search
 * on the full model (optimal_repair.c) and, when that stops more than 1 % above T_low on at most 16
 * cores, by the deep search (rl's search of the model, optimal_int.h); the result is certified exact
 * when its period equals T_low, else the report gives T_low and the gap.
 * Each relaxation's optimum is found by a threshold DP.  For a threshold T, a stage l..r and a core
 * count c are within T when max(compute(c) + dram(c), send) <= T.  With D = F/f - A/B, compute(c) =
 * A/B + D/c is monotone in c; the memory per core W/c + Y falls with c, so the counts that fit form
 * [c_fit, C] and there dram = 0: the fitting counts within T form an interval.  Below c_fit the counts
 * are scanned one by one (their DRAM term is tabulated per count).
 * Claim 1: a plan within T exists iff C is in R(L), where R(0) = {0} and R(r+1) = union over l <= r of
 *   R(l) (+) S(l,r) (Minkowski sum), S(l,r) the counts within T.  By induction on r, R(r) is exactly
 *   the set of core totals of the ways to cut layers 0..r-1 into stages within T: the last stage l..r
 *   may take any count of S(l,r), and its cost does not depend on where its cores are.  R(r) is a
 *   bitset over 0..C; S(l,r) a few runs of counts.
 * Claim 2: feasibility is monotone in T and the optimum is one of the values t(l,r,c), so the search
 *   bisects on T, lowering the upper end to the actual value of each plan it recovers, and finally
 *   bisects over the sorted candidate values strictly between the ends.
 * Claim 3 (pruning): for fixed l, compute and memory only grow with r (for every count c), so once the
 *   least compute of l..r over the counts exceeds T, every longer stage's does too: the scan over r stops.
 * Cost per threshold: O(pairs (l,r) visited * (C/64 * log C + counts below c_fit)); the DRAM table is
 * O(C^2 * route length) once (bench/optimal_speed.c).
 *
 * Heterogeneous chips (core overrides).  Positions matter, so the DP runs over (layer prefix r, core
 * prefix k): best(r,k) = min over l < r, j < k of max(best(l,j), the stage-local time of l..r-1 on cores
 * j..k-1 from cost_model_stage, with its Sends once): exact for the stage-local terms, and T_low.  Its
 * plan is then repaired on the full model as above.  O(L^2 C^2): meant for the small heterogeneous
 * platforms (a few devices).
 *
 * Other objectives (objective.h: energy, edp).  A plan's energy is what every plan spends (compute,
 * SRAM) plus its NoC and DRAM byte-hops plus static power over its period; the byte-hops of a Send
 * depend on where later groups sit, so no stage-local DP is exact for it.  optimal takes the time
 * repair's plan and the starts, judges them by the other energy objective and repairs the best on it,
 * then judges them all by the objective and repairs the best on that; the bound it
 * certifies is the fixed energy plus static power over T_low (times T_low for edp), and the note gives
 * the gap to it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "method_int.h"
#include "opcost.h"
#include "optimal_int.h"
#include "optimal_train.h"


/* ---- the threshold DP ---------------------------------------------------------------------------- */

void optimal_or_shifted(uint64_t *dst, const uint64_t *src, int a, int b, int C, int words, uint64_t *tmp) {
  int W = words;
  uint64_t *t = tmp;
  memcpy(t, src, (size_t)W * sizeof *t);
  int width = b - a + 1, cov = 1;
  while (cov < width) {
    int sft = cov < width - cov ? cov : width - cov;
    int ws = sft / 64, bs = sft % 64;
    for (int i = W - 1; i >= 0; i--) {
      uint64_t v = i - ws >= 0 ? t[i - ws] << bs : 0;
      if (bs && i - ws - 1 >= 0) v |= t[i - ws - 1] >> (64 - bs);
      t[i] |= v;
    }
    cov += sft;
  }
  int ws = a / 64, bs = a % 64;
  for (int i = W - 1; i >= ws; i--) {
    uint64_t v = t[i - ws] << bs;
    if (bs && i - ws - 1 >= 0) v |= t[i - ws - 1] >> (64 - bs);
    dst[i] |= v;
  }
  int top = C + 1; /* bits beyond C are cores the chip does not have */
  if (top % 64) dst[W - 1] &= (UINT64_C(1) << (top % 64)) - 1;
}

int optimal_runs_add(int *runs, int n, int a, int b) {
  if (n > 0 && runs[2 * n - 1] >= a - 1) {
    if (b > runs[2 * n - 1]) runs[2 * n - 1] = b;
    return n;
  }
  runs[2 * n] = a;
  runs[2 * n + 1] = b;
  return n + 1;
}

static void set_range(const opt *o, uint64_t *set, int from) {
  for (int k = from; k <= o->C;) {
    if (k % 64 == 0 && k + 63 <= o->C) {
      set[k / 64] = ~UINT64_C(0);
      k += 64;
    } else {
      set[k / 64] |= UINT64_C(1) << (k % 64);
      k++;
    }
  }
}

static int lowest(const opt *o, const uint64_t *set, int *count) {
  int low = -1, n = 0;
  for (int i = 0; i < o->words; i++) {
    if (set[i] && low < 0) low = 64 * i + __builtin_ctzll(set[i]);
    n += __builtin_popcountll(set[i]);
  }
  *count = n;
  return low;
}

/* Fills R(0..L) for T; returns whether C is in R(L) (claim 1).  A set that holds every count from its
 * least m up to C ("upward closed") stays so under any Minkowski sum capped at C, and R(l) (+) S is
 * then [m + min S, C]: such contributions are kept as a least element per prefix (up[]) and merged into
 * the bitset when the prefix is reached; only the rest needs bit shifts. */
static int check(opt *o, double T) {
  int W = o->words, C = o->C;
  o->checks++;
  memset(o->reach, 0, (size_t)(o->L + 1) * W * sizeof *o->reach);
  for (int r = 0; r <= o->L; r++) o->up[r] = C + 1;
  o->reach[0] = 1;
  for (int l = 0; l < o->L; l++) {
    uint64_t *from = o->reach + (size_t)l * W;
    if (o->up[l] <= C) set_range(o, from, o->up[l]);
    int count, m = lowest(o, from, &count);
    if (m < 0) continue;
    int closed = count == C - m + 1;
    figs s = {0};
    for (int r = l; r < o->L; r++) {
      optimal_figs_add(o, &s, l, r);
      int n = optimal_stage_counts(o, &s, T, C - m);
      if (n < 0) break;
      if (n == 0) continue;
      if (closed) {
        if (m + o->runs[0] < o->up[r + 1]) o->up[r + 1] = m + o->runs[0];
      } else {
        for (int k = 0; k < n; k++) optimal_or_shifted(o->reach + (size_t)(r + 1) * W, from, o->runs[2 * k], o->runs[2 * k + 1], C, W, o->tmp);
      }
    }
  }
  uint64_t *last = o->reach + (size_t)o->L * W;
  if (o->up[o->L] <= C) set_range(o, last, o->up[o->L]);
  return optimal_bit(last, C);
}

/* After a successful check: the stages (last first) of one plan within T: the shortest last stage,
 * then its fewest cores.  Returns the number of stages. */
static int recover(opt *o, double T, int *layers, int *cores) {
  int W = o->words, r = o->L, k = o->C, n = 0;
  while (r > 0) {
    int found = 0;
    for (int l = r - 1; l >= 0 && !found; l--) {
      figs s = {0};
      for (int j = l; j < r; j++) optimal_figs_add(o, &s, l, j);
      int runs = optimal_stage_counts(o, &s, T, k);
      if (runs < 0) break;
      const uint64_t *from = o->reach + (size_t)l * W;
      for (int q = 0; q < runs && !found; q++)
        for (int c = o->runs[2 * q]; c <= o->runs[2 * q + 1] && c <= k; c++)
          if (optimal_bit(from, k - c)) {
            layers[n] = r - l;
            cores[n] = c;
            n++;
            r = l;
            k -= c;
            found = 1;
            break;
          }
    }
    if (!found) return -1; /* cannot happen after a successful check */
  }
  return n;
}

/* The relaxation's value of a plan: its largest stage time. */
static double plan_value(opt *o, const int *layers, const int *cores, int n) {
  double worst = 0;
  int r = o->L;
  for (int i = 0; i < n; i++) {
    int l = r - layers[i];
    figs s = {0};
    for (int j = l; j < r; j++) optimal_figs_add(o, &s, l, j);
    double v = optimal_time_at(o, &s, cores[i]);
    if (v > worst) worst = v;
    r = l;
  }
  return worst;
}

/* The candidate values strictly between lo and hi (claim 2), or -1 if more than OPTIMAL_MAX_CANDIDATES. */
static int candidates(opt *o, double lo, double hi, double *out) {
  int n = 0;
  for (int l = 0; l < o->L; l++) {
    figs s = {0};
    for (int r = l; r < o->L; r++) {
      optimal_figs_add(o, &s, l, r);
      int runs = optimal_stage_counts(o, &s, hi, o->C);
      if (runs < 0) break;
      for (int q = 0; q < runs; q++)
        for (int c = o->runs[2 * q]; c <= o->runs[2 * q + 1]; c++) {
          double v = optimal_time_at(o, &s, c);
          if (v > lo && v < hi) {
            if (n == OPTIMAL_MAX_CANDIDATES) return -1;
            out[n++] = v;
          }
        }
    }
  }
  return n;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double optimal_search(const optimal_dp *dp, double lo, double hi) {
  double *cand = malloc(OPTIMAL_MAX_CANDIDATES * sizeof *cand), result = hi;
  if (!cand) return -1;
  for (;;) {
    double mid = lo + (hi - lo) / 2;
    if (hi - lo <= 1e-9 * hi || mid <= lo || mid >= hi) {
      int k = dp->candidates(dp->ctx, lo, hi, cand);
      if (k >= 0) {
        qsort(cand, (size_t)k, sizeof *cand, cmp_double);
        int a = 0, b = k; /* the least feasible candidate is in [a, b), or hi when a == k */
        while (a < b) {
          int m = a + (b - a) / 2;
          if (dp->check(dp->ctx, cand[m]))
            b = m;
          else
            a = m + 1;
        }
        result = a < k ? cand[a] : hi;
        break;
      }
      if (mid <= lo || mid >= hi) { /* cannot happen: adjacent doubles hold no candidate between */
        result = hi;
        break;
      }
    }
    if (dp->check(dp->ctx, mid)) {
      double v = dp->value_within(dp->ctx, mid);
      if (v < 0) {
        result = -1;
        break;
      }
      hi = v;
    } else {
      lo = mid;
    }
  }
  free(cand);
  return result;
}

/* optimal_search's view of this DP: a plan's stages (last first) go to layers/cores. */
typedef struct search_ctx {
  opt *o;
  int *layers, *cores;
} search_ctx;

static int search_check(void *ctx, double T) { return check(((search_ctx *)ctx)->o, T); }

static double search_value(void *ctx, double T) {
  search_ctx *x = ctx;
  int k = recover(x->o, T, x->layers, x->cores);
  return plan_value(x->o, x->layers, x->cores, k);
}

static int search_candidates(void *ctx, double lo, double hi, double *out) {
  return candidates(((search_ctx *)ctx)->o, lo, hi, out);
}

/* Solves one relaxation: its optimum, and its plan (first stage first) in layers/cores, *n stages. */
static double solve_kind(opt *o, int kind, int *layers, int *cores, int *n) {
  o->kind = kind;
  int *rl = malloc((size_t)o->L * sizeof *rl), *rc = malloc((size_t)o->L * sizeof *rc);
  double T = -1;
  if (!rl || !rc) goto cleanup;
  if (!check(o, INFINITY)) { /* memory first, but no plan fits: the least period whatever the memory */
    o->strict = 0;
    check(o, INFINITY);
  }
  int k = recover(o, INFINITY, rl, rc); /* every plan is within infinity */
  if (check(o, 0)) {
    T = 0;
    k = recover(o, 0, rl, rc);
  } else {
    search_ctx x = {o, rl, rc};
    optimal_dp dp = {search_check, search_value, search_candidates, &x};
    T = optimal_search(&dp, 0, plan_value(o, rl, rc, k));
    if (T < 0) goto cleanup;
    check(o, T);
    k = recover(o, T, rl, rc);
  }
  for (int i = 0; i < k; i++) { /* recover lists the last stage first */
    layers[i] = rl[k - 1 - i];
    cores[i] = rc[k - 1 - i];
  }
  *n = k;
cleanup:
  free(rl);
  free(rc);
  return T;
}


/* A certified lower bound on the energy of a micro-batch of any plan of g on c whose period is at least
 * t_low: the compute and SRAM energy, which no plan changes (every op runs once, on the MACs and the
 * bytes it has), and the static energy of every core over t_low; NoC and DRAM energy are at least 0. */
static double energy_low(cost_model *m, const graph *g, const chip *c, double t_low) {
  cost_stage all;
  cost_model_stage(m, 0, g->n_ops, 0, c->n_cores, &all);
  energy_parts e;
  energy_dynamic(&c->energy, all.macs, all.flops - 2 * all.macs, all.sram_traffic, 0, 0, &e);
  return e.compute + e.sram + c->energy.static_w_per_core * c->n_cores * t_low;
}

/* What start i of solve_uniform's and solve_positions' candidates is. */
static const char *start_name(int i) {
  return i == 0 ? "the lower relaxation's plan" : i == 1 ? "the upper relaxation's plan" : optimal_other_starts[i - 2];
}

/* Judges the candidates by obj and repairs the best (it may come from the time repair before);
 * returns the sweeps run, or -1 on an error. */
static int repair_for(cost_model *m, candidate *cand, int n_cand, objective obj, int cap, double *stage_s, int *pick,
                      double *before, mp_error *err) {
  *pick = 0;
  for (int i = 0; i < n_cand; i++) {
    cand[i].obj = obj;
    if (optimal_cost_candidate(m, &cand[i], stage_s, err) != MP_OK) return -1;
    if (optimal_better(&cand[i], &cand[*pick])) *pick = i;
  }
  *before = cand[*pick].value;
  return optimal_repair(m, &cand[*pick], cap, OPTIMAL_REPAIR_ROUNDS, err);
}

/* Another objective than time, after the time repair: the local search is weak on energy (its moves
 * trade static energy, which follows the period, against NoC byte-hops), so every start is repaired on
 * obj, then on the other energy objective and again on obj (a local optimum of one is a new start of
 * the other), keeping the best plan by obj in *keep.  *first_value: the best start's value by obj before
 * any of these repairs.  Returns the sweeps run, or -1 on an error. */
static int repair_energy(cost_model *m, candidate *cand, int n_cand, objective obj, int cap, double *stage_s,
                         candidate *keep, double *first_value, mp_error *err) {
  objective other = obj == OBJECTIVE_ENERGY ? OBJECTIVE_EDP : OBJECTIVE_ENERGY;
  const objective order[3] = {obj, other, obj};
  int sweeps = 0;
  keep->value = INFINITY;
  *first_value = INFINITY;
  for (int i = 0; i < n_cand; i++)
    for (int k = 0; k < 3; k++) {
      cand[i].obj = order[k];
      if (optimal_cost_candidate(m, &cand[i], stage_s, err) != MP_OK) return -1;
      if (k == 0 && cand[i].value < *first_value) *first_value = cand[i].value;
      int a = optimal_repair(m, &cand[i], cap, OPTIMAL_REPAIR_ROUNDS, err);
      if (a < 0) return -1;
      sweeps += a;
      if (order[k] == obj && (keep->value == INFINITY || optimal_better(&cand[i], keep)))
        optimal_copy_candidate(keep, &cand[i]);
    }
  return sweeps;
}

/* Costs the starts in full, repairs the best for the time, and - for another objective - repairs on the
 * energy objectives (repair_energy); writes the plan, its figures and the note. */
static mp_status finish(const graph *g, const chip *c, objective obj, candidate *cand, int n_cand, double t_low,
                        const char *how, const char *bound_how, long checks, plan **out, optimal_result *res,
                        method_report *rep, mp_error *err) {
  cost_model *m = NULL;
  double *stage_s = NULL;
  candidate keep = {0};
  mp_status st = cost_model_new(g, c, &m, err);
  if (st != MP_OK) return st;
  stage_s = malloc(((size_t)g->n_ops + 1) * sizeof *stage_s);
  keep.layers = malloc((size_t)g->n_ops * sizeof(int));
  keep.cores = malloc((size_t)g->n_ops * sizeof(int));
  if (!stage_s || !keep.layers || !keep.cores) {
    st = err_nomem(err);
    goto cleanup;
  }
  int pick = 0;
  double before = 0;
  for (int i = 0; i < n_cand; i++) cand[i].mem_first = c->n_dram == 0;
  int rounds = repair_for(m, cand, n_cand, OBJECTIVE_TIME, g->n_ops, stage_s, &pick, &before, err);
  double repaired = rounds >= 0 ? cand[pick].period : 0;
  int deep = -1, first = pick, searched = 0; /* the starts searched deeper (optimal_int.h); for energy, the
                                                starts are repaired after the time's search */
  if (rounds >= 0 && repaired > t_low * (1 + OPTIMAL_DEEP_GAP) && c->n_cores >= 2 &&
      c->n_cores <= OPTIMAL_DEEP_MAX_CORES) {
    if (obj == OBJECTIVE_TIME)
      deep = optimal_deep_starts(m, g, c, cand, n_cand, &pick, t_low * (1 + OPTIMAL_DEEP_GAP), &searched, err);
    else { /* the energy repair starts from every start: from the one searched for the time, and the others */
      deep = optimal_deep_repair(m, g, c, 1, &cand[pick], err);
      searched = 1;
    }
    if (deep < 0) rounds = -1;
  }
  if (rounds >= 0) optimal_copy_candidate(&keep, &cand[pick]);
  if (rounds >= 0 && obj != OBJECTIVE_TIME)
    rounds = repair_energy(m, cand, n_cand, obj, g->n_ops, stage_s, &keep, &before, err);
  if (rounds < 0) {
    st = err->status;
    goto cleanup;
  }
  st = plan_from_stages(keep.layers, keep.cores, keep.n, out, err);
  if (st != MP_OK) goto cleanup;
  double T = keep.period, gap = t_low > 0 ? T / t_low - 1 : 0;
  res->period_s = T;
  res->lower_s = t_low;
  res->value = keep.value;
  res->lower_value = obj == OBJECTIVE_TIME ? t_low : objective_value(obj, t_low, energy_low(m, g, c, t_low));
  res->exact = keep.value <= res->lower_value;
  const char *start = start_name(first);
  if (obj != OBJECTIVE_TIME) {
    const char *unit = obj == OBJECTIVE_ENERGY ? "J" : "J s";
    double vgap = res->lower_value > 0 ? res->value / res->lower_value - 1 : 0;
    method_note(rep,
                "optimal --objective %s (%s; then every start repaired by local search on the energy objectives): %d stages, model period "
                "%.6g s, %s %.6g %s per micro-batch; certified lower bound %.6g %s (compute and SRAM energy, which "
                "every plan spends, and static power over the least period %.6g s), gap %.2f%%; the best start "
                "%.6g %s before %d repair sweep%s.",
                objective_name(obj), how, keep.n, T, objective_name(obj), res->value, unit, res->lower_value, unit,
                t_low, 100 * vgap, before, unit, rounds, rounds == 1 ? "" : "s");
  } else if (res->exact)
    method_note(rep, "optimal (%s, %ld feasibility checks): %d stages, model period %.6g s = the certified lower "
                     "bound: exact.", how, checks, keep.n, T);
  else
    method_note(rep,
                "optimal (%s, %ld feasibility checks): %d stages, model period %.6g s; certified lower bound %.6g s "
                "(%s), gap %.2f%%; the best start (%s) %.6g s before %d repair sweep%s.",
                how, checks, keep.n, T, t_low, bound_how, 100 * gap, start, before, rounds, rounds == 1 ? "" : "s");
  if (deep > 0)
    method_note(rep,
                "The repair stopped at %.6g s, over %g%% above the bound: the deep search (partitioner/README.md) "
                "from %d start%s found the plan above (searched from %s).",
                repaired, 100 * OPTIMAL_DEEP_GAP, searched, searched == 1 ? "" : "s", start_name(pick));
  else if (deep == 0)
    method_note(rep,
                "The repair stopped at %.6g s, over %g%% above the bound: the deep search (partitioner/README.md) "
                "from %d start%s found no better plan.",
                repaired, 100 * OPTIMAL_DEEP_GAP, searched, searched == 1 ? "" : "s");
cleanup:
  free(stage_s);
  free(keep.layers);
  free(keep.cores);
  cost_model_free(m);
  return st;
}

static mp_status solve_uniform(const graph *g, const chip *c, objective obj, plan **out, optimal_result *res, method_report *rep,
                               mp_error *err) {
  opt o;
  mp_status st = optimal_opt_init(&o, g, c, err);
  if (st != MP_OK) return st;
  candidate cand[N_STARTS];
  memset(cand, 0, sizeof cand);
  for (int k = 0; k < N_STARTS; k++) {
    cand[k].layers = malloc((size_t)o.L * sizeof(int));
    cand[k].cores = malloc((size_t)o.L * sizeof(int));
    if (!cand[k].layers || !cand[k].cores) st = err_nomem(err);
  }
  double t_low = -1, t_high = -1;
  int n = 2;
  if (st == MP_OK) t_low = solve_kind(&o, OPT_LOW, cand[0].layers, cand[0].cores, &cand[0].n);
  if (st == MP_OK) t_high = solve_kind(&o, OPT_HIGH, cand[1].layers, cand[1].cores, &cand[1].n);
  if (st == MP_OK && (t_low < 0 || t_high < 0 || cand[0].n <= 0 || cand[1].n <= 0))
    st = err_nomem(err); /* a failed allocation is the only way a relaxation has no plan */
  if (st == MP_OK) st = optimal_method_starts(g, c, cand, &n, err);
  if (st == MP_OK)
    st = finish(g, c, obj, cand, n, t_low, "uniform chip: threshold DP on two relaxations",
                "the stage-local terms exact, Sends once, DRAM streams at their best position, no contention", o.checks,
                out, res, rep, err);
  for (int k = 0; k < N_STARTS; k++) {
    free(cand[k].layers);
    free(cand[k].cores);
  }
  optimal_opt_free(&o);
  return st;
}

/* Heterogeneous chips: the position-aware DP of the comment at the top. */
static mp_status solve_positions(const graph *g, const chip *c, objective obj, plan **out, optimal_result *res, method_report *rep,
                                 mp_error *err) {
  int L = g->n_ops, C = c->n_cores;
  opt o;
  mp_status ost = optimal_opt_init(&o, g, c, err); /* for the stages' sums */
  if (ost != MP_OK) return ost;
  size_t cells = (size_t)(L + 1) * (size_t)(C + 1);
  double *best = malloc(cells * sizeof *best);
  int *from_l = malloc(cells * sizeof *from_l), *from_j = malloc(cells * sizeof *from_j);
  candidate cand[N_STARTS];
  memset(cand, 0, sizeof cand);
  for (int i = 0; i < N_STARTS; i++) {
    cand[i].layers = malloc((size_t)L * sizeof(int));
    cand[i].cores = malloc((size_t)L * sizeof(int));
  }
  cost_model *m = NULL;
  mp_status st = MP_OK;
  for (int i = 0; i < N_STARTS; i++)
    if (!cand[i].layers || !cand[i].cores) st = err_nomem(err);
  if (!best || !from_l || !from_j || st != MP_OK) {
    st = err_nomem(err);
    goto cleanup;
  }
  st = cost_model_new(g, c, &m, err);
  if (st != MP_OK) goto cleanup;
  int strict = c->n_dram == 0; /* memory first, unless no plan fits */
again:
  for (size_t i = 0; i < cells; i++) best[i] = INFINITY;
  best[0] = 0;
  for (int l = 0; l < L; l++) {
    figs s = {0};
    for (int r = l; r < L; r++) {
      optimal_figs_add(&o, &s, l, r);
      for (int j = 0; j < C; j++) {
        double here = best[(size_t)l * (C + 1) + j];
        if (here == INFINITY) continue;
        for (int k = j; k < C; k++) { /* cores j..k: cost_model_stage's figures, from the sums */
          cost_stage cs = {.first_layer = l,
                           .n_layers = r - l + 1,
                           .first_core = j,
                           .n_cores = k - j + 1,
                           .flops = (double)s.flops,
                           .work = (double)opcost_range(o.oc, l, r - l + 1, k - j + 1),
                           .weight_bytes = (double)s.weights,
                           .gather_bytes = (double)s.gather,
                           .max_act_bytes = (double)s.max_act,
                           .send_bytes = (double)s.send};
          cost_stage_complete(m, &cs);
          if (strict && !cs.fits) continue;
          double v = cs.time_s > here ? cs.time_s : here;
          size_t to = (size_t)(r + 1) * (C + 1) + (k + 1);
          if (v < best[to]) {
            best[to] = v;
            from_l[to] = l;
            from_j[to] = j;
          }
        }
      }
    }
  }
  if (strict && best[cells - 1] == INFINITY) {
    strict = 0;
    goto again;
  }
  int n = 0, r = L, k = C;
  while (r > 0) {
    size_t at = (size_t)r * (C + 1) + k;
    int l = from_l[at], j = from_j[at];
    cand[0].layers[n] = r - l;
    cand[0].cores[n] = k - j;
    n++;
    r = l;
    k = j;
  }
  cand[0].n = n;
  for (int i = 0; i < n / 2; i++) {
    int t = cand[0].layers[i];
    cand[0].layers[i] = cand[0].layers[n - 1 - i];
    cand[0].layers[n - 1 - i] = t;
    t = cand[0].cores[i];
    cand[0].cores[i] = cand[0].cores[n - 1 - i];
    cand[0].cores[n - 1 - i] = t;
  }
  cand[1].n = n; /* no upper relaxation here: the same plan again */
  memcpy(cand[1].layers, cand[0].layers, (size_t)n * sizeof(int));
  memcpy(cand[1].cores, cand[0].cores, (size_t)n * sizeof(int));
  int starts = 2;
  st = optimal_method_starts(g, c, cand, &starts, err);
  if (st == MP_OK)
    st = finish(g, c, obj, cand, starts, best[cells - 1], "heterogeneous chip: position-aware DP",
                "the stage-local terms exact, Sends once, no contention", 1, out, res, rep, err);
cleanup:
  free(best);
  free(from_l);
  free(from_j);
  for (int i = 0; i < N_STARTS; i++) {
    free(cand[i].layers);
    free(cand[i].cores);
  }
  cost_model_free(m);
  optimal_opt_free(&o);
  return st;
}

mp_status optimal_solve(const graph *g, const chip *c, objective obj, plan **out, optimal_result *res,
                        method_report *rep, mp_error *err) {
  *out = NULL;
  memset(res, 0, sizeof *res);
  return c->heterogeneous ? solve_positions(g, c, obj, out, res, rep, err)
                          : solve_uniform(g, c, obj, out, res, rep, err);
}

mp_status method_optimal(const graph *g, const chip *c, const method_options *o, plan **out, method_report *rep,
                         mp_error *err) {
  optimal_result res;
  if (o && o->train) return optimal_train_solve(g, c, o->train, out, &res, rep, err);
  return optimal_solve(g, c, o ? o->objective : OBJECTIVE_TIME, out, &res, rep, err);
}
