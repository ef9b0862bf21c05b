/* optimal_stage: a stage's time in one of optimal's relaxations (LOW, HIGH; optimal.c's header comment),
 * the counts of cores within a threshold, S(l,r), and the tables they read (set up by optimal_opt_init).
 * See optimal_int.h. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "opcost.h"
#include "optimal_int.h"

/* ---- a stage's time in one relaxation -------------------------------------------------------------- */

static double mem_at(const figs *s, int c) { return cost_mem_bytes((double)s->weights, (double)s->max_act, c); }

/* The stage's work on c cores: cost_model_stage's, bit for bit. */
static double work_at(const opt *o, const figs *s, int c) {
  return o->flat ? (double)s->flops : (double)opcost_range(o->oc, s->first, s->n_layers, c);
}

static double compute_at(const opt *o, const figs *s, int c) {
  double t = cost_compute_s(work_at(o, s, c), (double)c * o->f, (double)s->gather, c, o->B);
  /* the upper relaxation's latency for every count, one core included: compute_range needs the time
   * non-increasing in c, and a bound above the one-core stage (which has no hop) keeps it an upper bound */
  return o->kind == OPT_HIGH ? t + (double)s->n_layers * o->lat : t;
}

static double send_of(const opt *o, const figs *s) {
  if (o->kind == OPT_LOW) return cost_send_s((double)s->send, o->gamma, o->B);
  return cost_send_s((double)s->send_high, o->gamma, o->B) + (double)s->n_high * (double)o->max_hops * o->lat;
}

/* The DRAM term of count c (0 when c cores hold the stage). */
static double dram_at(const opt *o, const figs *s, int c) {
  const optimal_dram *d = &o->dram;
  if (!d->in_lo) return 0;
  double e = mem_at(s, c) - o->S;
  if (!(e > 0)) return 0;
  double w = (double)s->weights / (double)c, out = e > w ? e - w : 0;
  if (o->kind == OPT_LOW) return e * d->in_lo[c] + out * d->out_lo[c];
  double t = e * d->in_hi[c] + (double)d->hops_in[c] * o->lat;
  if (out > 0) t += out * d->out_hi[c] + (double)d->hops_out[c] * o->lat;
  return t;
}

double optimal_time_at(const opt *o, const figs *s, int c) {
  double busy = compute_at(o, s, c) + dram_at(o, s, c), send = send_of(o, s);
  return busy > send ? busy : send;
}

/* Least c in [lo, hi] where pred holds (false..true as c grows), or hi + 1: the closed-form guess and a
 * few neighbours first (almost always right or one off), then bisection of what is left. */
typedef struct pred {
  const opt *o;
  const figs *s;
  int kind; /* FITS, COMPUTE_WITHIN, COMPUTE_OVER */
  double T;
} pred;
enum { FITS, COMPUTE_WITHIN, COMPUTE_OVER };

static int holds(const pred *p, int c) {
  switch (p->kind) {
  case FITS: return mem_at(p->s, c) <= p->o->S;
  case COMPUTE_WITHIN: return compute_at(p->o, p->s, c) <= p->T;
  default: return compute_at(p->o, p->s, c) > p->T;
  }
}

static int first_true(const pred *p, double guess, int lo, int hi) {
  int L = lo, H = hi + 1;
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

/* The counts [cl, ch] (within 1..C) whose compute is within T, both ends found on the exact formula;
 * 0 when none. */
static int compute_range(const opt *o, const figs *s, double T, int *cl, int *ch) {
  int C = o->C;
  double c1 = compute_at(o, s, 1), cC = compute_at(o, s, C);
  if ((c1 < cC ? c1 : cC) > T) return 0;
  double ab = (double)s->gather / o->B, d = (double)s->flops / o->f - ab; /* compute ~ ab + d / c */
  *cl = 1;
  *ch = C;
  if (c1 >= cC) { /* falls with c */
    pred q = {o, s, COMPUTE_WITHIN, T};
    *cl = first_true(&q, d / (T - ab), 1, C);
  } else { /* rises with c */
    pred q = {o, s, COMPUTE_OVER, T};
    *ch = first_true(&q, -d / (ab - T), 1, C) - 1;
  }
  return *cl <= *ch;
}

/* On a core model compute(c) = H(c) + G(c): H, the work over c cores' speed (plus HIGH's latency), is
 * non-increasing in c (opcost.h) but steps with the tiles; G = ((c-1)/c) A/B rises.  So over [lo, hi]
 * compute is at least H(hi) + G(lo) and at most H(lo) + G(hi), each widened by what rounding the ops'
 * works to whole flops (half a flop each) and the floating point can move: an interval wholly above T
 * has no count within it, one wholly below has all; the rest is halved, and scanned count by count
 * once short.  Appends the counts of [lo, hi] whose compute is within T to o->kruns, in order; returns
 * early (with one) when any_only is set. */
static void compute_bounds(const opt *o, const figs *s, double T, int lo, int hi, double *low, double *high) {
  double hh = compute_at(o, s, hi), hl = compute_at(o, s, lo), ab = (double)s->gather / o->B;
  double g_lo = ((double)(lo - 1) / lo) * ab, g_hi = ((double)(hi - 1) / hi) * ab;
  double slack = (double)s->n_layers / ((double)lo * o->f) + 1e-12 * (fabs(T) + hl);
  *low = (hh - g_hi) + g_lo - slack;
  *high = (hl - g_lo) + g_hi + slack;
}

static void compute_set(opt *o, const figs *s, double T, int lo, int hi, int any_only) {
  if (lo > hi || (any_only && o->n_kruns > 0)) return;
  double low, high;
  compute_bounds(o, s, T, lo, hi, &low, &high);
  if (low > T) return;
  if (high <= T || hi - lo < 8) {
    for (int c = lo; c <= hi; c++) {
      int b = high <= T ? hi : c; /* every count of the interval at once, or this one */
      if (b == c && compute_at(o, s, c) > T) continue;
      if (o->n_kruns > 0 && o->kruns[2 * o->n_kruns - 1] == c - 1)
        o->kruns[2 * o->n_kruns - 1] = b;
      else {
        o->kruns[2 * o->n_kruns] = c;
        o->kruns[2 * o->n_kruns + 1] = b;
        o->n_kruns++;
      }
      if (any_only) return;
      c = b;
    }
    return;
  }
  int mid = lo + (hi - lo) / 2;
  compute_set(o, s, T, lo, mid, any_only);
  compute_set(o, s, T, mid + 1, hi, any_only);
}

/* The counts c of [lo, hi] whose busy side, compute and DRAM term, is within T, appended to the n runs of
 * o->runs in order (the counts that overflow SRAM; their Sends are within T).  Over [lo, hi] the busy
 * side is at least compute_bounds' low plus e(hi) in_lo[lo]: the excess e(c) = mem(c) - S falls with c,
 * in floating point too, and in_lo[c] (optimal_dram_tables) rises with c, since a group of c + 1 cores
 * loads every link at least as much as its first c do and has no more starts; in_hi[c] >= in_lo[c], and
 * what dram_at adds to e in[c] is not negative.  It is at most compute_bounds' high plus the DRAM term
 * with e(lo) for both e and the writes' bytes (at most e) and each table's largest over [lo, hi]: in LOW
 * its value at hi (out_lo rises as in_lo does), in HIGH the largest up to hi.  An interval
 * above T is dropped whole, one within it taken whole; the rest is halved, and scanned count by count
 * once short: the counts found are those of a scan of all of them. */
static int overflow_counts(opt *o, const figs *s, double T, int lo, int hi, int n) {
  if (lo > hi) return n;
  if (hi - lo >= 8) {
    const optimal_dram *d = &o->dram;
    double low, high, e = mem_at(s, hi) - o->S, E = mem_at(s, lo) - o->S;
    compute_bounds(o, s, T, lo, hi, &low, &high);
    if (low + (d->in_lo && e > 0 ? e * d->in_lo[lo] : 0) > T) return n;
    double up = 0; /* the DRAM term's bound over [lo, hi] */
    if (d->in_lo && E > 0 && o->kind == OPT_LOW) up = E * d->in_lo[hi] + E * d->out_lo[hi];
    if (d->in_lo && E > 0 && o->kind != OPT_LOW) {
      double lat = (double)d->hops_max[hi] * o->lat;
      up = E * d->in_hi_max[hi] + lat + (E * d->out_hi_max[hi] + lat);
    }
    if (high + up <= T) return optimal_runs_add(o->runs, n, lo, hi);
    int mid = lo + (hi - lo) / 2;
    return overflow_counts(o, s, T, mid + 1, hi, overflow_counts(o, s, T, lo, mid, n));
  }
  for (int c = lo; c <= hi; c++)
    if (compute_at(o, s, c) + dram_at(o, s, c) <= T) n = optimal_runs_add(o->runs, n, c, c);
  return n;
}

/* stage_counts on a core model: the runs of counts whose compute is within T (compute_set), each cut to
 * the room, its counts that overflow SRAM checked with their DRAM term as below (overflow_counts). */
static int stage_counts_model(opt *o, const figs *s, double T, int room) {
  int C = o->C, n = 0;
  o->n_kruns = 0;
  compute_set(o, s, T, 1, room < C ? (room > 0 ? room : 0) : C, 0);
  if (o->n_kruns == 0) { /* none within the room: prune only when no count at all is (claim 3) */
    compute_set(o, s, T, room > 0 ? room + 1 : 1, C, 1);
    return o->n_kruns == 0 ? -1 : 0;
  }
  if (send_of(o, s) > T) return 0;
  pred p = {o, s, FITS, T};
  double W = (double)s->weights, Y = (double)s->max_act;
  int cfit = Y < o->S ? first_true(&p, W / (o->S - Y), 1, o->C) : o->C + 1;
  for (int q = 0; q < o->n_kruns; q++) {
    int a = o->kruns[2 * q], b = o->kruns[2 * q + 1];
    if (!o->strict) n = overflow_counts(o, s, T, a, b < cfit - 1 ? b : cfit - 1, n); /* Sends within T above */
    if (cfit > a) a = cfit;
    if (a <= b) n = optimal_runs_add(o->runs, n, a, b);
  }
  return n;
}

/* S(l,r) at T within room cores, as runs [a, b] in o->runs; returns the number of runs, or -1 when
 * neither this stage nor any longer one with the same first layer can be within T (claim 3). */
int optimal_stage_counts(opt *o, const figs *s, double T, int room) {
  if (!o->flat) return stage_counts_model(o, s, T, room);
  int cl, ch, n = 0;
  if (!compute_range(o, s, T, &cl, &ch)) return -1;
  if (room < 1 || send_of(o, s) > T) return 0;
  if (ch > room) ch = room;
  pred p = {o, s, FITS, T};
  double W = (double)s->weights, Y = (double)s->max_act;
  int cfit = Y < o->S ? first_true(&p, W / (o->S - Y), 1, o->C) : o->C + 1;
  /* overflow: the DRAM term decides (the Sends are within T: only the busy side is left) */
  if (!o->strict) n = overflow_counts(o, s, T, cl, ch < cfit - 1 ? ch : cfit - 1, n);
  int a = cfit > cl ? cfit : cl;
  if (a <= ch) n = optimal_runs_add(o->runs, n, a, ch);
  return n;
}

/* ---- sums of stages ------------------------------------------------------------------------------ */

/* Adds layer r to the right of the stage first..r-1.  Its outputs that a later layer reads are sent
 * (once in LOW, once per consumer layer in HIGH: all their consumers come after r), and each tensor of
 * the stage that r reads has one consumer fewer beyond the stage, and none once r is its last. */
void optimal_figs_add(const opt *o, figs *s, int first, int r) {
  const graph *g = o->g;
  const graph_op *op = &g->ops[r];
  s->first = first;
  s->flops += op->flops;
  s->gather += op->out_bytes;
  s->weights += op->weight_bytes;
  if (op->out_bytes > s->max_act) s->max_act = op->out_bytes;
  s->n_layers++;
  for (int k = 0; k < op->n_inputs; k++) {
    int t = op->inputs[k], dup = 0;
    for (int q = 0; q < k; q++) dup |= op->inputs[q] == t;
    const graph_tensor *ten = &g->tensors[t];
    if (dup || ten->producer < first) continue;
    s->send_high -= ten->bytes;
    s->n_high--;
    if (ten->last_consumer == r) s->send -= ten->bytes;
  }
  for (int k = 0; k < op->n_outputs; k++) {
    const graph_tensor *t = &g->tensors[op->outputs[k]];
    if (t->last_consumer <= r) continue;
    s->send += t->bytes;
    s->send_high += (uint64_t)t->n_consumers * t->bytes;
    s->n_high += t->n_consumers;
  }
}

/* ---- set-up ---------------------------------------------------------------------------------------- */

typedef struct counting {
  double *count;
  double *worst; /* running max of count / bandwidth */
  const chip *c;
} counting;

static void count_link(void *ctx, int link) {
  counting *x = ctx;
  double r = ++x->count[link] / chip_link_bandwidth(x->c, link);
  if (r > *x->worst) *x->worst = r;
}

/* Every start k and count c: a group k..k+c-1 whose cores each stream the same bytes; cores are added one
 * at a time, so each table is O(C^2 * route length). */
mp_status optimal_dram_tables(const chip *c, optimal_dram *d, mp_error *err) {
  int C = c->n_cores, nl = chip_n_links(c);
  size_t n = (size_t)C + 1;
  memset(d, 0, sizeof *d);
  d->in_lo = malloc(n * sizeof *d->in_lo);
  d->in_hi = calloc(n, sizeof *d->in_hi);
  d->out_lo = malloc(n * sizeof *d->out_lo);
  d->out_hi = calloc(n, sizeof *d->out_hi);
  d->hops_in = calloc(n, sizeof *d->hops_in);
  d->hops_out = calloc(n, sizeof *d->hops_out);
  d->in_hi_max = malloc(n * sizeof *d->in_hi_max);
  d->out_hi_max = malloc(n * sizeof *d->out_hi_max);
  d->hops_max = malloc(n * sizeof *d->hops_max);
  double *cin = calloc((size_t)nl, sizeof *cin), *cout = calloc((size_t)nl, sizeof *cout);
  int *port = malloc((size_t)C * sizeof *port);
  if (!d->in_lo || !d->in_hi || !d->out_lo || !d->out_hi || !d->hops_in || !d->hops_out || !d->in_hi_max || !d->out_hi_max ||
      !d->hops_max || !cin || !cout || !port) {
    free(cin);
    free(cout);
    free(port);
    optimal_dram_clear(d);
    return err_nomem(err);
  }
  for (size_t i = 0; i < n; i++) d->in_lo[i] = d->out_lo[i] = INFINITY;
  for (int k = 0; k < C; k++) port[k] = CHIP_PORT(chip_nearest_dram(c, k));
  for (int k = 0; k < C; k++) {
    double win = 0, wout = 0;
    int hin = 0, hout = 0;
    memset(cin, 0, (size_t)nl * sizeof *cin);
    memset(cout, 0, (size_t)nl * sizeof *cout);
    counting a = {cin, &win, c}, b = {cout, &wout, c};
    for (int cnt = 1; k + cnt <= C; cnt++) {
      int core = k + cnt - 1;
      int h = chip_route(c, port[core], core, count_link, &a);
      if (h > hin) hin = h;
      h = chip_route(c, core, port[core], count_link, &b);
      if (h > hout) hout = h;
      if (win < d->in_lo[cnt]) d->in_lo[cnt] = win;
      if (win > d->in_hi[cnt]) d->in_hi[cnt] = win;
      if (wout < d->out_lo[cnt]) d->out_lo[cnt] = wout;
      if (wout > d->out_hi[cnt]) d->out_hi[cnt] = wout;
      if (hin > d->hops_in[cnt]) d->hops_in[cnt] = hin;
      if (hout > d->hops_out[cnt]) d->hops_out[cnt] = hout;
    }
  }
  for (size_t i = 0; i < n; i++) {
    int h = d->hops_in[i] > d->hops_out[i] ? d->hops_in[i] : d->hops_out[i];
    d->in_hi_max[i] = i == 0 || d->in_hi[i] > d->in_hi_max[i - 1] ? d->in_hi[i] : d->in_hi_max[i - 1];
    d->out_hi_max[i] = i == 0 || d->out_hi[i] > d->out_hi_max[i - 1] ? d->out_hi[i] : d->out_hi_max[i - 1];
    d->hops_max[i] = i == 0 || h > d->hops_max[i - 1] ? h : d->hops_max[i - 1];
  }
  free(cin);
  free(cout);
  free(port);
  return MP_OK;
}

void optimal_dram_clear(optimal_dram *d) {
  free(d->in_lo);
  free(d->in_hi);
  free(d->out_lo);
  free(d->out_hi);
  free(d->hops_in);
  free(d->hops_out);
  free(d->in_hi_max);
  free(d->out_hi_max);
  free(d->hops_max);
  memset(d, 0, sizeof *d);
}

void optimal_opt_free(opt *o) {
  optimal_dram_clear(&o->dram);
  free(o->reach);
  free(o->tmp);
  free(o->up);
  free(o->runs);
  free(o->kruns);
  opcost_free(o->oc);
}

mp_status optimal_opt_init(opt *o, const graph *g, const chip *c, mp_error *err) {
  memset(o, 0, sizeof *o);
  o->g = g;
  o->c = c;
  o->L = g->n_ops;
  o->C = c->n_cores;
  o->strict = c->n_dram == 0;
  o->words = (o->C + 1 + 63) / 64;
  o->f = c->cores[0].flops;
  o->S = (double)c->cores[0].sram_bytes;
  o->gamma = c->cores[0].transfer_factor;
  o->B = c->noc_bandwidth;
  o->lat = c->noc_latency;
  o->max_hops = c->width + c->height - 2;
  o->reach = malloc((size_t)(o->L + 1) * o->words * sizeof *o->reach);
  o->tmp = malloc((size_t)o->words * sizeof *o->tmp);
  o->up = malloc(((size_t)o->L + 1) * sizeof *o->up);
  o->runs = malloc(2 * ((size_t)o->C + 2) * sizeof *o->runs);
  o->kruns = malloc(2 * ((size_t)o->C + 2) * sizeof *o->kruns);
  if (!o->reach || !o->tmp || !o->up || !o->runs || !o->kruns) {
    optimal_opt_free(o);
    return err_nomem(err);
  }
  mp_status st = opcost_new(g, c, &o->oc, err);
  o->flat = st == MP_OK && opcost_flat(o->oc);
  if (st == MP_OK && !o->flat) st = opcost_tabulate(o->oc, err);
  if (st != MP_OK) {
    optimal_opt_free(o);
    return st;
  }
  if (c->n_dram > 0 && !c->heterogeneous) {
    st = optimal_dram_tables(c, &o->dram, err);
    if (st != MP_OK) {
      optimal_opt_free(o);
      return st;
    }
  }
  return MP_OK;
}
