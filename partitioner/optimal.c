/* optimal: the exact minimum analytical bottleneck over all plans (partitioner/README.md, "optimal").
 *
 * A plan cuts the layers 0..L-1 into consecutive stages and the snake-ordered cores 0..C-1 into as
 * many consecutive groups, stage i on group i, every core used.  Its bottleneck is the largest stage
 * time t (cost.h).  Memory comes first: if some plan fits SRAM, the optimum is over the plans that
 * fit; if none does, the least-infeasible plan is returned: with lambda* the least possible largest
 * per-core memory ratio rho = s_i / SRAM (over its stages), the plan with the least bottleneck among
 * those with rho <= lambda* (1 + OPTIMAL_MEM_SLACK) (method_int.h says why the slack).  Both are
 * bottleneck ("min of a max over stages") problems and are solved the same way.
 *
 * Uniform chips (every core alike).  A stage's figures depend on its layer range l..r and its core
 * count c only, not on where its cores sit.  With D = F/f - A/B,
 *     compute(c) = F/(c f) + ((c-1)/c) A/B = A/B + D/c
 * is monotone in c (decreasing when D > 0, increasing when D < 0), send does not depend on c, and
 * mem(c) = W/c + M decreases with c.  Hence, for a threshold T on the time and a bound lambda on
 * rho, the core counts that keep one stage within both form an interval [lo(l,r), hi(l,r)]
 * (found from a closed-form guess checked, and if need be bisected, on the exact float formulas, so
 * the DP and cost.c agree bit for bit).
 * Claim 1: a plan with bottleneck <= T and rho <= lambda exists iff C is in R(L), where R(0) = {0}
 *   and R(r+1) = union over l <= r of R(l) (+) [lo(l,r), hi(l,r)] (Minkowski sum).  Proof: by
 *   induction on r, R(r) is exactly the set of core totals of the ways to cut layers 0..r-1 into
 *   stages that each satisfy both bounds: the last stage l..r may have any count in its interval,
 *   and the rest is a way for the prefix 0..l-1; stages' constraints are independent of positions
 *   on a uniform chip, so only the totals matter.  R(r) is kept as a bitset over 0..C.
 * Claim 2: the feasibility of T is monotone (a plan within T is within every T' > T), and the
 *   optimum T* is one of the values t(l,r,c).  So T* is the least candidate value that is feasible.
 *   The search bisects on T, lowering the upper end to the actual bottleneck of each feasible plan
 *   it recovers, until no more than a few thousand candidates lie strictly between the ends; then it
 *   lists them and bisects over the sorted list.  The lower end is always infeasible and the upper
 *   end always the bottleneck of a recovered plan, so the answer is the exact minimum.
 * Claim 3 (pruning): for fixed l, compute and mem of every c grow with r (F, A, W, M only grow), so
 *   once the best c of l..r misses the bounds, so does every longer stage: the scan over r stops.
 * The same search with T = infinity finds the least lambda (the least-infeasible memory ratio).
 * Cost per threshold: O(pairs (l,r) visited * C/64 * log C); see bench/optimal_speed.c.
 *
 * Heterogeneous chips (core overrides: flops, SRAM or transfer factor differ).  Positions matter, so
 * the DP runs over (layer prefix r, core prefix k) directly: best(r,k) = min over l < r, j < k of
 * max(best(l,j), cost of stage l..r-1 on cores j..k-1), first for rho (clamped below at 1 so that all
 * fitting plans tie) and then for the time among stages with rho <= lambda* (1 + slack) (or 1 when
 * something fits).  A group's speed, transfer factor and SRAM come from chip_group_of, as in cost.c,
 * tabulated once for every core range (O(C^3), C^2 entries).  O(L^2 C^2): meant for the small
 * heterogeneous platforms (a few devices). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "method_int.h"

enum { BY_TIME, BY_MEM };

/* A stage's figures, summed exactly (uint64) and converted once, as cost_model_stage does. */
typedef struct figs {
  uint64_t flops, gather, weights, max_act, send;
} figs;

typedef struct opt {
  const graph *g;
  const chip *c;
  int L, C, words;
  double f, S, gamma, B; /* the uniform core */
  uint64_t *reach;       /* (L + 1) * words: R(r) */
  uint64_t *tmp;         /* words */
  int *up;               /* L + 1: least element of the upward-closed part of R(r), C + 1 if none */
  int *end_off, *end_tensor; /* tensors by last consumer (CSR over layers) */
  long checks;
} opt;

static int mem_ok(double mem, double sram, double lambda) {
  return lambda <= 1 ? mem <= sram : mem / sram <= lambda;
}

static double compute_at(const opt *o, const figs *s, int c) {
  return cost_compute_s((double)s->flops, (double)c * o->f, (double)s->gather, c, o->B);
}

static double mem_at(const figs *s, int c) { return cost_mem_bytes((double)s->weights, (double)s->max_act, c); }

/* A monotone predicate on the core count c of one stage (false..true as c grows). */
enum { MEM_FITS, COMPUTE_WITHIN, COMPUTE_OVER };
typedef struct pred {
  const opt *o;
  const figs *s;
  int kind;
  double bound; /* lambda for MEM_FITS, T otherwise */
} pred;

static int holds(const pred *p, int c) {
  switch (p->kind) {
  case MEM_FITS: return mem_ok(mem_at(p->s, c), p->o->S, p->bound);
  case COMPUTE_WITHIN: return compute_at(p->o, p->s, c) <= p->bound;
  default: return compute_at(p->o, p->s, c) > p->bound;
  }
}

/* Least c in [lo, hi] where p holds, or hi + 1.  Probes the closed-form guess and a few neighbours
 * first (the guess is almost always right or one off), then bisects what is left. */
static int first_true(const pred *p, double guess, int lo, int hi) {
  int L = lo, H = hi + 1; /* the answer is in [L, H] */
  int g = !(guess >= lo) ? lo : guess > hi ? hi : (int)ceil(guess); /* !(>=) also catches NaN */
  if (holds(p, g)) {
    H = g;
    for (int k = 0; k < 3 && H > L; k++) {
      if (!holds(p, H - 1)) {
        L = H;
        break;
      }
      H--;
    }
  } else {
    L = g + 1;
    for (int k = 0; k < 3 && L < H; k++) {
      if (holds(p, L)) {
        H = L;
        break;
      }
      L++;
    }
  }
  while (L < H) {
    int m = L + (H - L) / 2;
    if (holds(p, m))
      H = m;
    else
      L = m + 1;
  }
  return L;
}

/* Core counts [*a, *b] that keep the stage within time T and memory ratio lambda, using at most
 * room cores.  Returns 1 if non-empty, 0 if empty, -1 if empty for this stage and every longer one
 * with the same first layer (claim 3). */
static int stage_interval(const opt *o, const figs *s, double T, double lambda, int room, int *a, int *b) {
  int C = o->C;
  double W = (double)s->weights, M = (double)s->max_act;
  if (room < 1 || !mem_ok(mem_at(s, C), o->S, lambda)) return -1;
  double cap = (lambda <= 1 ? 1 : lambda) * o->S;
  pred p = {o, s, MEM_FITS, lambda};
  int cmem = first_true(&p, W / (cap - M), 1, C);
  if (cmem > room) return -1;
  int lo = cmem, hi = room;
  if (T < INFINITY) {
    double c1 = compute_at(o, s, 1), cC = compute_at(o, s, C);
    if ((c1 < cC ? c1 : cC) > T) return -1;
    if (cost_send_s((double)s->send, o->gamma, o->B) > T) return 0;
    double ab = (double)s->gather / o->B, d = (double)s->flops / o->f - ab; /* compute = ab + d / c */
    if (c1 >= cC) { /* compute falls with c */
      pred q = {o, s, COMPUTE_WITHIN, T};
      int first = first_true(&q, d / (T - ab), 1, C);
      if (first > lo) lo = first;
    } else { /* rises with c: the last c within T */
      pred q = {o, s, COMPUTE_OVER, T};
      int over = first_true(&q, -d / (ab - T), 1, C);
      if (over - 1 < hi) hi = over - 1;
    }
  }
  *a = lo;
  *b = hi;
  return lo <= hi;
}

static void figs_add_right(const opt *o, figs *s, int first, int r) {
  const graph *g = o->g;
  const graph_op *op = &g->ops[r];
  s->flops += op->flops;
  s->gather += op->out_bytes;
  s->weights += op->weight_bytes;
  if (op->out_bytes > s->max_act) s->max_act = op->out_bytes;
  for (int k = o->end_off[r]; k < o->end_off[r + 1]; k++) {
    const graph_tensor *t = &g->tensors[o->end_tensor[k]];
    if (t->producer >= first) s->send -= t->bytes; /* its last reader has joined the stage */
  }
  for (int k = 0; k < op->n_outputs; k++) {
    const graph_tensor *t = &g->tensors[op->outputs[k]];
    if (t->last_consumer > r) s->send += t->bytes;
  }
}

static void figs_add_left(const opt *o, figs *s, int l, int last) {
  const graph_op *op = &o->g->ops[l];
  s->flops += op->flops;
  s->gather += op->out_bytes;
  s->weights += op->weight_bytes;
  if (op->out_bytes > s->max_act) s->max_act = op->out_bytes;
  for (int k = 0; k < op->n_outputs; k++) {
    const graph_tensor *t = &o->g->tensors[op->outputs[k]];
    if (t->last_consumer > last) s->send += t->bytes;
  }
}

/* dst |= union over d in [a, b] of (src << d), within bits 0..C. */
static void or_shifted(opt *o, uint64_t *dst, const uint64_t *src, int a, int b) {
  int W = o->words;
  uint64_t *t = o->tmp;
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
  int top = o->C + 1; /* bits beyond C are cores the chip does not have */
  if (top % 64) dst[W - 1] &= (UINT64_C(1) << (top % 64)) - 1;
}

static int bit(const uint64_t *set, int k) { return (int)((set[k / 64] >> (k % 64)) & 1); }

/* Sets bits [from, C] of a set. */
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

/* Lowest member of a set, or -1; *count receives its size. */
static int lowest(const opt *o, const uint64_t *set, int *count) {
  int low = -1, n = 0;
  for (int i = 0; i < o->words; i++) {
    if (set[i] && low < 0) low = 64 * i + __builtin_ctzll(set[i]);
    n += __builtin_popcountll(set[i]);
  }
  *count = n;
  return low;
}

/* Fills R(0..L) for (T, lambda); returns whether C is in R(L) (claim 1).  A set that holds every
 * count from its least m up to C ("upward closed") stays so under any Minkowski sum capped at C, and
 * R(l) (+) [a, b] is then just [m + a, C]: such contributions are kept as a least element per prefix
 * (up[]) and merged into the bitset when the prefix is reached; only the rest needs bit shifts. */
static int check(opt *o, double T, double lambda) {
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
    figs s = {0, 0, 0, 0, 0};
    for (int r = l; r < o->L; r++) {
      figs_add_right(o, &s, l, r);
      int a, b, k = stage_interval(o, &s, T, lambda, C - m, &a, &b);
      if (k < 0) break;
      if (k == 0) continue;
      if (closed) {
        if (m + a < o->up[r + 1]) o->up[r + 1] = m + a;
      } else {
        or_shifted(o, o->reach + (size_t)(r + 1) * W, from, a, b);
      }
    }
  }
  uint64_t *last = o->reach + (size_t)o->L * W;
  if (o->up[o->L] <= C) set_range(o, last, o->up[o->L]);
  return bit(last, C);
}

/* After a successful check: the stages (last first) of one plan within (T, lambda).  Takes the
 * shortest last stage, then its fewest cores.  Returns the number of stages. */
static int recover(const opt *o, double T, double lambda, int *layers, int *cores) {
  int W = o->words, r = o->L, k = o->C, n = 0;
  while (r > 0) {
    figs s = {0, 0, 0, 0, 0};
    int found = 0;
    for (int l = r - 1; l >= 0 && !found; l--) {
      figs_add_left(o, &s, l, r - 1);
      int a, b, st = stage_interval(o, &s, T, lambda, k, &a, &b);
      if (st < 0) break;
      if (st == 0) continue;
      const uint64_t *from = o->reach + (size_t)l * W;
      for (int c = a; c <= b && c <= k; c++)
        if (bit(from, k - c)) {
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

/* The plan's value by kind: its bottleneck (BY_TIME) or its largest memory ratio (BY_MEM). */
static double plan_value(const opt *o, const int *layers, const int *cores, int n, int kind) {
  double worst = 0;
  int r = o->L;
  for (int i = 0; i < n; i++) {
    int l = r - layers[i];
    figs s = {0, 0, 0, 0, 0};
    for (int j = r - 1; j >= l; j--) figs_add_left(o, &s, j, r - 1);
    double v;
    if (kind == BY_TIME) {
      double cm = compute_at(o, &s, cores[i]), sd = cost_send_s((double)s.send, o->gamma, o->B);
      v = cm > sd ? cm : sd;
    } else {
      v = mem_at(&s, cores[i]) / o->S;
    }
    if (v > worst) worst = v;
    r = l;
  }
  return worst;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#define MAX_CANDIDATES 4096

/* The candidate values strictly between lo and hi (claim 2), or -1 if more than MAX_CANDIDATES. */
static int candidates(const opt *o, int kind, double lo, double hi, double lambda, double *out) {
  int n = 0;
  double T_hi = kind == BY_TIME ? hi : INFINITY, T_lo = kind == BY_TIME ? lo : INFINITY;
  double l_hi = kind == BY_TIME ? lambda : hi, l_lo = kind == BY_TIME ? lambda : lo;
  for (int l = 0; l < o->L; l++) {
    figs s = {0, 0, 0, 0, 0};
    for (int r = l; r < o->L; r++) {
      figs_add_right(o, &s, l, r);
      int a1, b1, a0 = 1, b0 = 0;
      int k = stage_interval(o, &s, T_hi, l_hi, o->C, &a1, &b1);
      if (k < 0) break;
      if (k == 0) continue;
      if (stage_interval(o, &s, T_lo, l_lo, o->C, &a0, &b0) <= 0) a0 = 1, b0 = 0;
      for (int c = a1; c <= b1; c++) {
        if (c >= a0 && c <= b0) {
          c = b0;
          continue;
        }
        double v;
        if (kind == BY_TIME) {
          double cm = compute_at(o, &s, c), sd = cost_send_s((double)s.send, o->gamma, o->B);
          v = cm > sd ? cm : sd;
        } else {
          v = mem_at(&s, c) / o->S;
        }
        if (v > lo && v < hi) {
          if (n == MAX_CANDIDATES) return -1;
          out[n++] = v;
        }
      }
    }
  }
  return n;
}

/* The least feasible value of kind (time under lambda, or memory ratio with no time bound), given
 * that hi is the value of a feasible plan and lo is infeasible.  Returns it, or -1 on no memory. */
static double search(opt *o, int kind, double lo, double hi, double lambda) {
  int *layers = malloc((size_t)o->L * sizeof *layers), *cores = malloc((size_t)o->L * sizeof *cores);
  double *cand = malloc(MAX_CANDIDATES * sizeof *cand);
  double result = -1;
  if (!layers || !cores || !cand) goto cleanup;
  for (;;) {
    double mid = lo + (hi - lo) / 2;
    int narrow = hi - lo <= 1e-9 * hi || mid <= lo || mid >= hi;
    if (narrow) {
      int n = candidates(o, kind, lo, hi, lambda, cand);
      if (n >= 0) {
        qsort(cand, (size_t)n, sizeof *cand, cmp_double);
        int a = 0, b = n; /* the least feasible candidate is in [a, b), or hi when a == n */
        while (a < b) {
          int m = a + (b - a) / 2;
          int ok = kind == BY_TIME ? check(o, cand[m], lambda) : check(o, INFINITY, cand[m]);
          if (ok)
            b = m;
          else
            a = m + 1;
        }
        result = a < n ? cand[a] : hi;
        break;
      }
      if (mid <= lo || mid >= hi) { /* cannot happen: adjacent doubles hold no candidate between */
        result = hi;
        break;
      }
    }
    int ok = kind == BY_TIME ? check(o, mid, lambda) : check(o, INFINITY, mid);
    if (ok) {
      int n = kind == BY_TIME ? recover(o, mid, lambda, layers, cores) : recover(o, INFINITY, mid, layers, cores);
      hi = plan_value(o, layers, cores, n, kind);
    } else {
      lo = mid;
    }
  }
cleanup:
  free(layers);
  free(cores);
  free(cand);
  return result;
}

static void opt_free(opt *o) {
  free(o->reach);
  free(o->tmp);
  free(o->up);
  free(o->end_off);
  free(o->end_tensor);
}

static mp_status opt_init(opt *o, const graph *g, const chip *c, mp_error *err) {
  memset(o, 0, sizeof *o);
  o->g = g;
  o->c = c;
  o->L = g->n_ops;
  o->C = c->n_cores;
  o->words = (o->C + 1 + 63) / 64;
  o->f = c->cores[0].flops;
  o->S = (double)c->cores[0].sram_bytes;
  o->gamma = c->cores[0].transfer_factor;
  o->B = c->noc_bandwidth;
  o->reach = malloc((size_t)(o->L + 1) * o->words * sizeof *o->reach);
  o->tmp = malloc((size_t)o->words * sizeof *o->tmp);
  o->up = malloc(((size_t)o->L + 1) * sizeof *o->up);
  o->end_off = calloc((size_t)o->L + 2, sizeof *o->end_off);
  o->end_tensor = malloc(((size_t)g->n_tensors + 1) * sizeof *o->end_tensor);
  if (!o->reach || !o->tmp || !o->up || !o->end_off || !o->end_tensor) {
    opt_free(o);
    return err_nomem(err);
  }
  for (int t = 0; t < g->n_tensors; t++)
    if (g->tensors[t].last_consumer >= 0) o->end_off[g->tensors[t].last_consumer + 1]++;
  for (int r = 0; r < o->L; r++) o->end_off[r + 1] += o->end_off[r];
  int *pos = malloc((size_t)(o->L + 1) * sizeof *pos);
  if (!pos) {
    opt_free(o);
    return err_nomem(err);
  }
  memcpy(pos, o->end_off, (size_t)(o->L + 1) * sizeof *pos);
  for (int t = 0; t < g->n_tensors; t++)
    if (g->tensors[t].last_consumer >= 0) o->end_tensor[pos[g->tensors[t].last_consumer]++] = t;
  free(pos);
  return MP_OK;
}

static mp_status solve_uniform(const graph *g, const chip *c, plan **out, method_report *rep, mp_error *err) {
  opt o;
  mp_status st = opt_init(&o, g, c, err);
  if (st != MP_OK) return st;
  int *layers = malloc((size_t)o.L * sizeof *layers), *cores = malloc((size_t)o.L * sizeof *cores);
  int *rl = malloc((size_t)o.L * sizeof *rl), *rc = malloc((size_t)o.L * sizeof *rc);
  if (!layers || !cores || !rl || !rc) {
    st = err_nomem(err);
    goto cleanup;
  }
  double lambda = 1;
  if (!check(&o, INFINITY, 1)) { /* nothing fits: the least memory ratio over all plans */
    check(&o, INFINITY, INFINITY);
    int n = recover(&o, INFINITY, INFINITY, layers, cores);
    lambda = search(&o, BY_MEM, 1, plan_value(&o, layers, cores, n, BY_MEM), INFINITY);
    if (lambda < 0) {
      st = err_nomem(err);
      goto cleanup;
    }
    method_note(rep, "No plan fits memory: this is the least-infeasible plan (the least bottleneck among plans whose "
                "largest per-core need is within %g%% of the least possible, %.4g x SRAM).", 100 * OPTIMAL_MEM_SLACK,
                lambda);
    lambda *= 1 + OPTIMAL_MEM_SLACK;
  }
  double T;
  if (check(&o, 0, lambda)) {
    T = 0;
  } else {
    check(&o, INFINITY, lambda);
    int n = recover(&o, INFINITY, lambda, layers, cores);
    T = search(&o, BY_TIME, 0, plan_value(&o, layers, cores, n, BY_TIME), lambda);
    if (T < 0) {
      st = err_nomem(err);
      goto cleanup;
    }
  }
  check(&o, T, lambda);
  int n = recover(&o, T, lambda, layers, cores);
  if (n <= 0) { /* claim 1 guarantees a plan after a successful check */
    st = err_set(err, MP_RUN, "optimal: internal error: no plan within the optimum %.17g s was recovered", T);
    goto cleanup;
  }
  for (int i = 0; i < n; i++) { /* recover lists the last stage first */
    rl[i] = layers[n - 1 - i];
    rc[i] = cores[n - 1 - i];
  }
  st = plan_from_stages(rl, rc, n, out, err);
  if (st == MP_OK)
    method_note(rep, "optimal: exact over every plan (uniform chip: threshold DP, %ld feasibility checks); "
                "%d stages, bottleneck %.6g s.", o.checks, n, T);
cleanup:
  free(layers);
  free(cores);
  free(rl);
  free(rc);
  opt_free(&o);
  return st;
}

/* Heterogeneous chips: the position-aware DP of the comment at the top. */
static mp_status solve_positions(const graph *g, const chip *c, plan **out, method_report *rep, mp_error *err) {
  opt o;
  mp_status st = opt_init(&o, g, c, err);
  if (st != MP_OK) return st;
  int L = o.L, C = o.C;
  size_t cells = (size_t)(L + 1) * (size_t)(C + 1);
  double *best = malloc(cells * sizeof *best);
  int *from_l = malloc(cells * sizeof *from_l), *from_j = malloc(cells * sizeof *from_j);
  int *rl = malloc((size_t)L * sizeof *rl), *rc = malloc((size_t)L * sizeof *rc);
  chip_group *groups = malloc((size_t)C * (size_t)C * sizeof *groups); /* [j * C + k]: cores j..k */
  if (!best || !from_l || !from_j || !rl || !rc || !groups) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int j = 0; j < C; j++)
    for (int k = j; k < C; k++) groups[(size_t)j * C + k] = chip_group_of(c, j, k - j + 1);
  double lambda = 1;
  for (int pass = 0; pass < 2; pass++) { /* 0: memory ratio, 1: time under lambda */
    for (size_t i = 0; i < cells; i++) best[i] = INFINITY;
    best[0] = pass == 0 ? 1 : 0;
    for (int l = 0; l < L; l++) {
      figs s = {0, 0, 0, 0, 0};
      for (int r = l; r < L; r++) {
        figs_add_right(&o, &s, l, r);
        for (int j = 0; j < C; j++) {
          double here = best[(size_t)l * (C + 1) + j];
          if (here == INFINITY) continue;
          for (int k = j; k < C; k++) { /* cores j..k */
            const chip_group *grp = &groups[(size_t)j * C + k];
            double sram = (double)grp->sram_bytes;
            int n = k - j + 1;
            double mem = cost_mem_bytes((double)s.weights, (double)s.max_act, n), v;
            if (pass == 0) {
              v = mem_ok(mem, sram, 1) ? 1 : mem / sram;
            } else {
              if (!mem_ok(mem, sram, lambda)) continue;
              double cm = cost_compute_s((double)s.flops, grp->speed, (double)s.gather, n, o.B);
              double sd = cost_send_s((double)s.send, grp->gamma, o.B);
              v = cm > sd ? cm : sd;
            }
            if (here > v) v = here;
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
    if (pass == 0) {
      lambda = best[cells - 1];
      if (lambda > 1) {
        method_note(rep, "No plan fits memory: this is the least-infeasible plan (the least bottleneck among plans "
                    "whose largest per-core need is within %g%% of the least possible, %.4g x SRAM).",
                    100 * OPTIMAL_MEM_SLACK, lambda);
        lambda *= 1 + OPTIMAL_MEM_SLACK;
      }
    }
  }
  int n = 0, r = L, k = C;
  while (r > 0) {
    size_t at = (size_t)r * (C + 1) + k;
    int l = from_l[at], j = from_j[at];
    rl[n] = r - l;
    rc[n] = k - j;
    n++;
    r = l;
    k = j;
  }
  for (int i = 0; i < n / 2; i++) {
    int t = rl[i];
    rl[i] = rl[n - 1 - i];
    rl[n - 1 - i] = t;
    t = rc[i];
    rc[i] = rc[n - 1 - i];
    rc[n - 1 - i] = t;
  }
  st = plan_from_stages(rl, rc, n, out, err);
  if (st == MP_OK)
    method_note(rep, "optimal: exact over every plan (heterogeneous chip: position-aware DP); %d stages, bottleneck "
                "%.6g s.", n, best[cells - 1]);
cleanup:
  free(best);
  free(from_l);
  free(from_j);
  free(rl);
  free(rc);
  free(groups);
  opt_free(&o);
  return st;
}

mp_status method_optimal(const graph *g, const chip *c, const method_options *o, plan **out, method_report *rep,
                         mp_error *err) {
  (void)o;
  return c->heterogeneous ? solve_positions(g, c, out, rep, err) : solve_uniform(g, c, out, rep, err);
}
