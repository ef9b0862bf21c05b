/* opcost: the per-op time model of a core (see opcost.h and traces/README.md, "Time per op on a core
 * model").  Works are computed in flop-equivalents directly (array cycles x c x 2RK, vector flops x
 * 2RK / V, bytes x f / beta) and rounded once, so a GEMM that fills the array has exactly 2 x macs of
 * work: its flops at peak. */
#include "opcost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct opcost {
  const graph *g;
  const chip *c;
  int flat;          /* no core model: W = flops */
  int L, C;
  uint64_t *memo;    /* L x C: W + 1, 0 when not yet computed */
  uint64_t *prefix;  /* (L + 1) x C once tabulated: prefix[l * C + c - 1] = sum of W(c) over layers < l */
};

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* Array cycles of the busiest of n cores for products d on an R x K array: the groups that fit side by
 * side in one tile (k <= R and n <= K) share it, block-diagonally; each set of groups needs ceil(k/R) x
 * ceil(n/K) tiles.  The u = ceil(g/p) x ceil(n/K) column units and the m rows split over the cores as a
 * grid of a column groups by floor(c/a) row groups, the best a: a core then streams ceil(u/a) units x
 * ceil(m / floor(c/a)) rows through ceil(k/R) tiles each.  For each value of ceil(u/a) the least a is
 * best, so only O(sqrt u) grids are tried.  Non-increasing in n: a grid of n cores is one of n + 1. */
static double array_cycles(const chip_arch *a, const graph_dims *d, int n) {
  uint64_t R = (uint64_t)a->matrix_rows, K = (uint64_t)a->matrix_cols;
  uint64_t p = d->k <= R && d->n <= K ? (R / d->k < K / d->n ? R / d->k : K / d->n) : 1;
  uint64_t tk = ceil_div(d->k, R), u = ceil_div(d->g, p) * ceil_div(d->n, K);
  uint64_t best = UINT64_MAX, top = (uint64_t)n < u ? (uint64_t)n : u;
  for (uint64_t cols = 1; cols <= top;) {
    uint64_t q = ceil_div(u, cols), t = q * ceil_div(d->m, (uint64_t)n / cols);
    if (t < best) best = t;
    if (q == 1) break;
    cols = ceil_div(u, q - 1); /* the least column count with fewer units per core */
  }
  return (double)tk * (double)best;
}

/* A reshape changes how bytes are read, not the bytes: no SRAM traffic of its own. */
static int is_view(const char *type) {
  static const char *const views[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", NULL};
  size_t len = strcspn(type, "+");
  for (int i = 0; views[i]; i++)
    if (strlen(views[i]) == len && strncmp(type, views[i], len) == 0) return 1;
  return 0;
}

/* The three works (flop-equivalents at the typical core's peak f) of op's share on n cores. */
static void works(const chip *c, const graph_op *op, int n, double *w_mac, double *w_vec, double *w_sram,
                  double *cycles) {
  const chip_arch *a = &c->arch;
  double f = chip_typical_core(c).flops, macs = (double)op->macs, flops = (double)op->flops;
  int matrix = a->matrix_rows > 0;
  double rk2 = 2.0 * a->matrix_rows * a->matrix_cols;
  *w_mac = *w_vec = *w_sram = *cycles = 0;
  if (matrix && op->macs > 0) {
    if (op->dims.g > 0) {
      *cycles = array_cycles(a, &op->dims, n);
      *w_mac = *cycles * n * rk2;
    } else { /* no shape: the MACs at the array's peak */
      *cycles = macs / (n * (double)a->matrix_rows * a->matrix_cols);
      *w_mac = 2 * macs;
    }
  }
  double v = matrix ? flops - 2 * macs : flops;
  if (v < 0) v = 0;
  *w_vec = a->vector_lanes > 0 ? v * (matrix ? rk2 : f / a->clock_hz) / a->vector_lanes : v;
  if (a->sram_bandwidth > 0) *w_sram = (double)opcost_op_traffic(op) * f / a->sram_bandwidth;
}

uint64_t opcost_op_traffic(const graph_op *op) {
  return is_view(op->type) ? 0 : op->in_bytes + op->weight_bytes + op->out_bytes;
}

/* w as a work, at most OPCOST_MAX_WORK (opcost.h). */
static uint64_t capped(double w, int round_up) {
  if (!(w < OPCOST_MAX_WORK)) return (uint64_t)OPCOST_MAX_WORK; /* also catches NaN */
  return (uint64_t)(round_up ? llround(w) : floor(w));
}

uint64_t opcost_op_floor(const chip *c, const graph_op *op) {
  if (!c->has_arch || op->measured) return op->flops;
  double m, v, s, cyc;
  works(c, op, 1, &m, &v, &s, &cyc);
  if (c->arch.matrix_rows > 0) m = 2.0 * (double)op->macs; /* every MAC of the array busy */
  double w = m > v ? m : v;
  return capped(s > w ? s : w, 0);
}

uint64_t opcost_op_work(const chip *c, const graph_op *op, int n_cores) {
  if (!c->has_arch || op->measured) return op->flops;
  double m, v, s, cyc;
  works(c, op, n_cores, &m, &v, &s, &cyc);
  double w = m > v ? m : v;
  return capped(s > w ? s : w, 1);
}

void opcost_op_terms(const chip *c, const graph_op *op, int n_cores, opcost_terms *out) {
  double f = chip_typical_core(c).flops, span = n_cores * f;
  memset(out, 0, sizeof *out);
  if (!c->has_arch || op->measured) {
    out->vec_s = out->time_s = (double)op->flops / span;
    return;
  }
  double m, v, s;
  works(c, op, n_cores, &m, &v, &s, &out->cycles);
  out->mac_s = m / span;
  out->vec_s = v / span;
  out->sram_s = s / span;
  out->time_s = (double)opcost_op_work(c, op, n_cores) / span;
}

mp_status opcost_new(const graph *g, const chip *c, opcost **out, mp_error *err) {
  *out = NULL;
  opcost *o = calloc(1, sizeof *o);
  if (!o) return err_nomem(err);
  o->g = g;
  o->c = c;
  o->L = g->n_ops;
  o->C = c->n_cores;
  o->flat = !c->has_arch;
  if (!o->flat && !(o->memo = calloc((size_t)o->L * (size_t)o->C, sizeof *o->memo))) {
    free(o);
    return err_nomem(err);
  }
  *out = o;
  return MP_OK;
}

void opcost_free(opcost *o) {
  if (!o) return;
  free(o->memo);
  free(o->prefix);
  free(o);
}

int opcost_flat(const opcost *o) { return o->flat; }

uint64_t opcost_work(opcost *o, int layer, int n_cores) {
  const graph_op *op = &o->g->ops[layer];
  if (o->flat) return op->flops;
  uint64_t *slot = &o->memo[(size_t)layer * (size_t)o->C + (size_t)(n_cores - 1)];
  if (!*slot) *slot = opcost_op_work(o->c, op, n_cores) + 1;
  return *slot - 1;
}

uint64_t opcost_range(opcost *o, int first, int n_layers, int n_cores) {
  if (o->prefix) {
    size_t C = (size_t)o->C, k = (size_t)(n_cores - 1);
    return o->prefix[(size_t)(first + n_layers) * C + k] - o->prefix[(size_t)first * C + k];
  }
  uint64_t sum = 0;
  for (int l = first; l < first + n_layers; l++) sum += opcost_work(o, l, n_cores);
  return sum;
}

mp_status opcost_tabulate(opcost *o, mp_error *err) {
  if (o->prefix) return MP_OK;
  size_t C = (size_t)o->C;
  uint64_t *p = malloc(((size_t)o->L + 1) * C * sizeof *p);
  if (!p) return err_nomem(err);
  memset(p, 0, C * sizeof *p);
  for (int l = 0; l < o->L; l++)
    for (size_t k = 0; k < C; k++) p[(size_t)(l + 1) * C + k] = p[(size_t)l * C + k] + opcost_work(o, l, (int)k + 1);
  o->prefix = p;
  return MP_OK;
}
