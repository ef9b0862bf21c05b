/* Tests of optimal.c against brute force: on random small instances (DAGs with skip connections and
 * multi-output layers; uniform and heterogeneous chips with random DRAM ports; memory sometimes too
 * small for any plan) every plan is enumerated and costed by cost.c and by references written here
 * from the model's definition (the stage-local terms, the uncontended plan terms and link loads, the
 * lower relaxation of optimal.c); optimal's certified bound must be the relaxation's brute-force
 * optimum, its plan no worse than any other method's, and how often it is the model's optimum is
 * measured.  Also: the threshold DP against the position-aware DP on larger instances, a graph that
 * fits nowhere, and an upper relaxation whose compute is not monotone in the cores. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "cost.h"
#include "graph.h"
#include "method.h"
#include "method_int.h"
#include "optimal_int.h"
#include "opcost.h"
#include "plan.h"
#include "split.h"
#include "strbuf.h"
#include "testgen.h"
#include "testutil.h"

/* A random DAG of n layers: layer j reads the previous layer's first output and, with probability
 * 1/2, an output of a random earlier layer (a skip connection); some layers have two outputs, and
 * the graph input is sometimes read again later.  With dims, most layers' MACs are random products
 * g x m x n x k given as dims (one in eight has none, one in eight no MACs at all, some of those a
 * Reshape), for chips with a core model. */
static graph *random_graph_dims(int n, int zero_work, int dims) {
  strbuf b = {0};
  strbuf_printf(&b, "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"r\","
                    "\"inputs\":[{\"name\":\"in\",\"bytes\":%d}],\"ops\":[",
                1 + testgen_below(5000));
  int n_out[16];
  for (int j = 0; j < n; j++) {
    n_out[j] = 1 + (testgen_below(4) == 0);
    uint64_t macs = zero_work ? 0 : (uint64_t)testgen_below(1000000), d[4] = {0, 0, 0, 0};
    const char *type = "X";
    if (dims && !zero_work) {
      int kind = testgen_below(8);
      if (kind == 0) {
        macs = 0;
        if (testgen_below(2)) type = "Reshape";
      } else if (kind > 1) {
        /* few rows or column tiles often, so that a share stops shrinking over a range of counts */
        d[0] = 1 + (uint64_t)testgen_below(3), d[1] = 1 + (uint64_t)testgen_below(testgen_below(4) ? 6 : 300);
        d[2] = 1 + (uint64_t)testgen_below(20), d[3] = 1 + (uint64_t)testgen_below(40);
        macs = d[0] * d[1] * d[2] * d[3];
      }
    }
    uint64_t flops = 2 * macs + (uint64_t)testgen_below(1000);
    strbuf_printf(&b, "%s{\"name\":\"op%d\",\"type\":\"%s\",\"inputs\":[", j ? "," : "", j, type);
    if (j == 0)
      strbuf_printf(&b, "\"in\"");
    else
      strbuf_printf(&b, "\"t%d_0\"", j - 1);
    if (j >= 2 && testgen_below(2)) {
      int src = testgen_below(j - 1);
      strbuf_printf(&b, ",\"t%d_%d\"", src, testgen_below(n_out[src]));
    } else if (j >= 1 && testgen_below(5) == 0) {
      strbuf_printf(&b, ",\"in\"");
    }
    strbuf_printf(&b, "],\"outputs\":[");
    for (int k = 0; k < n_out[j]; k++)
      strbuf_printf(&b, "%s{\"name\":\"t%d_%d\",\"bytes\":%d}", k ? "," : "", j, k, testgen_below(40000));
    strbuf_printf(&b, "],\"macs\":%llu,\"flops\":%llu,\"weight_bytes\":%d", (unsigned long long)macs,
                  (unsigned long long)flops, testgen_below(200000));
    if (d[0])
      strbuf_printf(&b, ",\"dims\":{\"g\":%llu,\"m\":%llu,\"n\":%llu,\"k\":%llu}", (unsigned long long)d[0],
                    (unsigned long long)d[1], (unsigned long long)d[2], (unsigned long long)d[3]);
    strbuf_printf(&b, "}");
  }
  strbuf_printf(&b, "]}");
  graph *g = b.oom ? NULL : testutil_graph_text(b.s);
  strbuf_clear(&b);
  return g;
}

static graph *random_graph(int n, int zero_work) { return random_graph_dims(n, zero_work, 0); }

static int close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-300; }

/* ---- the model, recomputed from its definition (cost.h) --------------------------------------------- */

/* Links as chip.h numbers them: NoC link from (x, y) in direction d at (y W + x) 4 + d; port i's down
 * link at 4 W H + 2 i, its up link one more. */
static int noc_link(const chip *c, int x, int y, int dir) { return (y * c->width + x) * 4 + dir; }
static int port_link(const chip *c, int i, int up) { return 4 * c->width * c->height + 2 * i + up; }

/* Adds bytes on every NoC link of the XY route (x first) from (x, y) to (tx, ty); returns its hops. */
static int walk(const chip *c, int x, int y, int tx, int ty, double bytes, double *load) {
  int hops = 0;
  for (; x != tx; x += tx > x ? 1 : -1, hops++) load[noc_link(c, x, y, tx > x ? CHIP_XPLUS : CHIP_XMINUS)] += bytes;
  for (; y != ty; y += ty > y ? 1 : -1, hops++) load[noc_link(c, x, y, ty > y ? CHIP_YPLUS : CHIP_YMINUS)] += bytes;
  return hops;
}

static int manhattan(const chip *c, int a, int b) {
  return abs(c->cores[a].x - c->cores[b].x) + abs(c->cores[a].y - c->cores[b].y);
}

/* The port with the fewest hops to core k, ties to the lowest index. */
static int nearest_port(const chip *c, int k) {
  int best = 0;
  for (int i = 1; i < c->n_dram; i++)
    if (abs(c->cores[k].x - c->dram[i].x) + abs(c->cores[k].y - c->dram[i].y) <
        abs(c->cores[k].x - c->dram[best].x) + abs(c->cores[k].y - c->dram[best].y))
      best = i;
  return best;
}

/* A read of bytes from core k's port into k (up 0), or a write from k to it (up 1); returns the hops. */
static int dram_route(const chip *c, int k, int up, double bytes, double *load) {
  int i = nearest_port(c, k);
  load[port_link(c, i, up)] += bytes;
  return up ? walk(c, c->cores[k].x, c->cores[k].y, c->dram[i].x, c->dram[i].y, bytes, load)
            : walk(c, c->dram[i].x, c->dram[i].y, c->cores[k].x, c->cores[k].y, bytes, load);
}

static double link_bw(const chip *c, int link) {
  return link >= 4 * c->width * c->height ? c->dram_bandwidth : c->noc_bandwidth;
}

/* The largest load per bandwidth over the links. */
static double busiest(const chip *c, const double *load) {
  double worst = 0;
  for (int k = 0; k < 4 * c->width * c->height + 2 * c->n_dram; k++) worst = fmax(worst, load[k] / link_bw(c, k));
  return worst;
}

#define MAX_LINKS (4 * 16 + 2 * 16)

/* A stage's stage-local terms. */
typedef struct ref_stage {
  double F, raw, W, A, Y, X, speed, gamma, sram, compute, mem;
  int fits;
  double in_bytes, out_bytes, in_s, out_s, send, time;
} ref_stage;

/* Layers l..r on cores k0 .. k0 + n - 1.  The sums in double (F of each op's work on n cores, opcost.h,
 * which test_opcost checks against closed forms), X from each tensor's consumers, the group from its
 * cores; each core whose own SRAM is short by e streams e in and e - W/n out. */
static void reference_stage(const graph *g, const chip *c, int l, int r, int k0, int n, ref_stage *s) {
  memset(s, 0, sizeof *s);
  for (int j = l; j <= r; j++) {
    const graph_op *op = &g->ops[j];
    s->F += (double)opcost_op_work(c, op, n);
    s->raw += (double)op->flops;
    s->W += (double)op->weight_bytes;
    double a = 0;
    for (int k = 0; k < op->n_outputs; k++) {
      const graph_tensor *t = &g->tensors[op->outputs[k]];
      a += (double)t->bytes;
      int later = 0;
      for (int q = 0; q < t->n_consumers; q++) later |= t->consumers[q] > r;
      if (later) s->X += (double)t->bytes;
    }
    s->A += a;
    s->Y = fmax(s->Y, a);
  }
  s->sram = INFINITY;
  for (int k = k0; k < k0 + n; k++) {
    s->speed += c->cores[k].flops;
    s->gamma = fmax(s->gamma, c->cores[k].transfer_factor);
    s->sram = fmin(s->sram, (double)c->cores[k].sram_bytes);
  }
  double B = c->noc_bandwidth, lat = c->noc_latency;
  s->compute = s->F / s->speed + (n - 1.0) / n * s->A / B;
  s->mem = s->W / n + s->Y;
  s->fits = s->mem <= s->sram;
  if (!s->fits && c->n_dram > 0) {
    double in_load[MAX_LINKS] = {0}, out_load[MAX_LINKS] = {0};
    int in_hops = -1, out_hops = -1;
    for (int k = k0; k < k0 + n; k++) {
      double e = s->mem - (double)c->cores[k].sram_bytes, spill = e - s->W / n;
      if (e > 0) {
        s->in_bytes += e;
        int h = dram_route(c, k, 0, e, in_load);
        if (h > in_hops) in_hops = h;
      }
      if (spill > 0) {
        s->out_bytes += spill;
        int h = dram_route(c, k, 1, spill, out_load);
        if (h > out_hops) out_hops = h;
      }
    }
    if (in_hops >= 0) s->in_s = busiest(c, in_load) + in_hops * lat;
    if (out_hops >= 0) s->out_s = busiest(c, out_load) + out_hops * lat;
  }
  s->send = s->gamma * s->X / B;
  s->time = fmax(s->compute + s->in_s + s->out_s, s->send);
}

/* Whether cost_model_stage's figures of the stage agree with the reference. */
static int stage_agrees(cost_model *m, const graph *g, const chip *c, int l, int r, int k0, int n) {
  cost_stage cs;
  ref_stage s;
  cost_model_stage(m, l, r - l + 1, k0, n, &cs);
  reference_stage(g, c, l, r, k0, n, &s);
  return close_to(cs.work, s.F) && close_to(cs.flops, s.raw) && close_to(cs.weight_bytes, s.W) && close_to(cs.gather_bytes, s.A) &&
         close_to(cs.max_act_bytes, s.Y) && close_to(cs.send_bytes, s.X) && close_to(cs.speed, s.speed) &&
         close_to(cs.gamma, s.gamma) && close_to(cs.sram_bytes, s.sram) && close_to(cs.compute_s, s.compute) &&
         close_to(cs.mem_bytes, s.mem) && cs.fits == s.fits && close_to(cs.dram_in_bytes, s.in_bytes) &&
         close_to(cs.dram_out_bytes, s.out_bytes) && close_to(cs.dram_in_s, s.in_s) &&
         close_to(cs.dram_out_s, s.out_s) && close_to(cs.send_s, s.send) && close_to(cs.time_s, s.time);
}

/* The uncontended period of plan p with every plan term, and its link loads (load, zeroed here):
 * each stage's compute plus a hop's latency per segment with bytes (split_new's segments, c > 1);
 * a Send per (tensor, later stage with a consumer) of gamma b / B plus its hops' latency; the loads
 * of the all-gather chains, the Sends (gamma b) and the DRAM streams.  stage_t gets every t_i. */
static double reference_plan(const graph *g, const chip *c, const plan *p, const split *sp, double *load,
                             double *stage_t) {
  int stage_of[16];
  double worst = 0, B = c->noc_bandwidth, lat = c->noc_latency;
  memset(load, 0, MAX_LINKS * sizeof *load);
  for (int i = 0; i < p->n_stages; i++)
    for (int j = p->stages[i].first_layer; j < p->stages[i].first_layer + p->stages[i].n_layers; j++) stage_of[j] = i;
  for (int i = 0; i < p->n_stages; i++) {
    const plan_stage *st = &p->stages[i];
    int l = st->first_layer, r = l + st->n_layers - 1, a = st->first_core, n = st->n_cores, last = a + n - 1;
    ref_stage s;
    reference_stage(g, c, l, r, a, n, &s);
    int gathering[16] = {0}, segs = 0;
    for (int j = l; j <= r; j++)
      if (g->ops[j].out_bytes > 0) gathering[sp->groups[i].segment[j - l]] = 1;
    for (int q = 0; q < 16; q++) segs += gathering[q];
    double compute = s.compute + (n > 1 ? segs : 0) * lat, send = 0;
    for (int k = 0; k + 1 < n; k++) {
      const chip_core *u = &c->cores[a + k], *v = &c->cores[a + k + 1];
      walk(c, u->x, u->y, v->x, v->y, s.A * (k + 1) / n, load);
      walk(c, v->x, v->y, u->x, u->y, s.A * (n - 1 - k) / n, load);
    }
    for (int j = l; j <= r; j++)
      for (int k = 0; k < g->ops[j].n_outputs; k++) {
        const graph_tensor *t = &g->tensors[g->ops[j].outputs[k]];
        int sent_to[16] = {0};
        for (int q = 0; q < t->n_consumers; q++) {
          int d = stage_of[t->consumers[q]];
          if (d == i || sent_to[d] || t->bytes == 0) continue;
          sent_to[d] = 1;
          int dst = p->stages[d].first_core;
          send += s.gamma * (double)t->bytes / B + manhattan(c, last, dst) * lat;
          walk(c, c->cores[last].x, c->cores[last].y, c->cores[dst].x, c->cores[dst].y, s.gamma * (double)t->bytes,
               load);
        }
      }
    if (!s.fits && c->n_dram > 0)
      for (int k = a; k <= last; k++) {
        double e = s.mem - (double)c->cores[k].sram_bytes, spill = e - s.W / n;
        if (e > 0) dram_route(c, k, 0, e, load);
        if (spill > 0) dram_route(c, k, 1, spill, load);
      }
    stage_t[i] = fmax(compute + s.in_s + s.out_s, send);
    worst = fmax(worst, stage_t[i]);
  }
  return fmax(worst, busiest(c, load));
}

/* ---- the lower relaxation of optimal.c (uniform chips) -------------------------------------------- */

/* Per count c, the least over the positions k .. k+c-1 of the busiest link's streaming cores per
 * bandwidth, for the reads and, separately, for the writes (each stream at its own best position). */
typedef struct low_tables {
  double in[17], out[17];
} low_tables;

static void low_setup(const chip *c, low_tables *t) {
  for (int n = 1; n <= c->n_cores; n++) {
    t->in[n] = t->out[n] = INFINITY;
    for (int k = 0; k + n <= c->n_cores; k++) {
      double in_load[MAX_LINKS] = {0}, out_load[MAX_LINKS] = {0};
      for (int q = k; q < k + n && c->n_dram > 0; q++) {
        dram_route(c, q, 0, 1, in_load);
        dram_route(c, q, 1, 1, out_load);
      }
      t->in[n] = fmin(t->in[n], busiest(c, in_load));
      t->out[n] = fmin(t->out[n], busiest(c, out_load));
    }
  }
}

/* A stage's time in the lower relaxation: compute without latency, the DRAM streams at their best
 * positions without latency, its tensors sent once without latency. */
static double low_stage(const graph *g, const chip *c, const low_tables *t, int l, int r, int n) {
  ref_stage s;
  reference_stage(g, c, l, r, 0, n, &s); /* on a uniform chip only the stage's count matters here */
  double dram = 0;
  if (!s.fits && c->n_dram > 0) {
    double e = s.mem - s.sram, spill = e - s.W / n;
    dram = e * t->in[n] + (spill > 0 ? spill * t->out[n] : 0);
  }
  return fmax(s.compute + dram, s.send);
}

/* ---- brute force ------------------------------------------------------------------------------------ */

typedef struct brute {
  const graph *g;
  const chip *c;
  cost_model *m;
  low_tables low;
  double bound;    /* cost_lower_bound */
  double best;     /* least full-model period */
  double relaxed;  /* least lower-relaxation value (uniform) or stage-local bottleneck (heterogeneous) */
  double best_fit, relaxed_fit; /* the same over the plans that fit (memory first on chips without DRAM) */
  int any_fits;
  long plans;
  int bad_stage, bad_plan, bad_period, below_bound; /* plans where a check failed */
  int contended;   /* plans whose period is above their uncontended period */
} brute;

/* One plan: its full period from cost_model_period and cost_evaluate (equal bit for bit), the
 * uncontended plan terms against the reference, every stage against the reference, its relaxed
 * value and the lower bound. */
static void visit_plan(void *ctx, const plan *p) {
  brute *b = ctx;
  const graph *g = b->g;
  const chip *c = b->c;
  mp_error err;
  int fits;
  double period = cost_model_period(b->m, p, NULL, NULL, &fits, NULL);
  cost_result *r = NULL;
  split *sp = NULL;
  if (cost_evaluate(g, c, p, &r, &err) != MP_OK || split_new(g, p, &sp, &err) != MP_OK) {
    b->bad_plan++;
    cost_result_free(r);
    return;
  }
  double load[MAX_LINKS], stage_t[16];
  double unc = reference_plan(g, c, p, sp, load, stage_t);
  int ok = close_to(unc, r->uncontended_s);
  for (int k = 0; k < r->n_links; k++) ok &= close_to(load[k], r->link_bytes[k]);
  for (int i = 0; i < p->n_stages; i++) ok &= close_to(stage_t[i], r->stages[i].time_s);
  if (!ok) b->bad_plan++;
  if (period != r->period_s || fits != r->feasible || period < r->uncontended_s) b->bad_period++;
  if (period > r->uncontended_s) b->contended++;
  double relaxed = 0;
  for (int i = 0; i < p->n_stages; i++) {
    const plan_stage *st = &p->stages[i];
    int l = st->first_layer, last = l + st->n_layers - 1;
    if (!stage_agrees(b->m, g, c, l, last, st->first_core, st->n_cores)) b->bad_stage++;
    if (c->heterogeneous) {
      cost_stage cs;
      cost_model_stage(b->m, l, st->n_layers, st->first_core, st->n_cores, &cs);
      relaxed = fmax(relaxed, cs.time_s);
    } else {
      relaxed = fmax(relaxed, low_stage(g, c, &b->low, l, last, st->n_cores));
    }
  }
  if (b->bound > period * (1 + 1e-12)) b->below_bound++;
  if (b->plans == 0 || period < b->best) b->best = period;
  if (b->plans == 0 || relaxed < b->relaxed) b->relaxed = relaxed;
  if (fits && (!b->any_fits || period < b->best_fit)) b->best_fit = period;
  if (fits && (!b->any_fits || relaxed < b->relaxed_fit)) b->relaxed_fit = relaxed;
  b->any_fits |= fits;
  b->plans++;
  split_free(sp);
  cost_result_free(r);
}

/* The methods optimal must never be worse than (the learning method is left out). */
static const char *const others[] = {"even", "balanced", "seed-split", "greedy"};

typedef struct tally {
  int instances, hetero, streaming, failures, equal, equal_hetero, exact, contended, stepping;
  double worst_gap, worst_low_gap;
} tally;

/* Runs one instance; returns 0 when every check holds, else prints why. */
static int one_instance(int id, graph *g, chip *c, tally *t) {
  mp_error err;
  brute b = {.g = g, .c = c};
  if (!g || !c || cost_model_new(g, c, &b.m, &err) != MP_OK) return 1;
  cost_bound lb;
  cost_lower_bound(g, c, &lb);
  b.bound = lb.bound_s;
  if (!c->heterogeneous) low_setup(c, &b.low);
  int steps = 0; /* a stage whose compute is not monotone in its core count */
  for (int l = 0; l < g->n_ops && !c->heterogeneous; l++)
    for (int r = l; r < g->n_ops; r++) {
      int up = 0, down = 0;
      double prev = 0;
      for (int n = 1; n <= c->n_cores; n++) {
        cost_stage cs;
        cost_model_stage(b.m, l, r - l + 1, 0, n, &cs);
        if (n > 1) up |= cs.compute_s > prev, down |= cs.compute_s < prev;
        prev = cs.compute_s;
      }
      steps |= up && down;
    }
  t->stepping += steps;
  b.bad_plan += testgen_each_plan(c->n_cores, g->n_ops, visit_plan, &b);
  int mem_first = c->n_dram == 0 && b.any_fits; /* memory has no time there: a plan that fits comes first */
  if (mem_first) {
    b.best = b.best_fit;
    b.relaxed = b.relaxed_fit;
  }
  optimal_result res;
  method_report rep = {0};
  plan *p = NULL;
  int bad = 0;
  if (optimal_solve(g, c, OBJECTIVE_TIME, &p, &res, &rep, &err) != MP_OK) {
    fprintf(stderr, "\ninstance %d: optimal failed: %s", id, err.msg);
    cost_model_free(b.m);
    return 1;
  }
  double t_opt = cost_model_period(b.m, p, NULL, NULL, NULL, NULL);
  int low_ok = close_to(res.lower_s, b.relaxed);
  if (b.bad_stage || b.bad_plan || b.bad_period || b.below_bound || !low_ok || t_opt != res.period_s ||
      res.lower_s > b.best * (1 + 1e-12) || b.best > res.period_s || res.exact != (res.period_s <= res.lower_s) ||
      lb.bound_s > res.lower_s * (1 + 1e-12)) {
    fprintf(stderr,
            "\ninstance %d (%d layers, %d cores, %s, %d ports): %ld plans, %d stage / %d plan / %d period "
            "mismatches, %d below cost_lower_bound; lower %.17g relaxed brute %.17g; brute %.17g optimal %.17g "
            "(its plan %.17g) exact %d",
            id, g->n_ops, c->n_cores, c->heterogeneous ? "heterogeneous" : "uniform", c->n_dram, b.plans, b.bad_stage,
            b.bad_plan, b.bad_period, b.below_bound, res.lower_s, b.relaxed, b.best, res.period_s, t_opt, res.exact);
    bad = 1;
  }
  for (size_t k = 0; k < sizeof others / sizeof *others; k++) {
    method_options o;
    method_options_default(&o);
    plan *q = NULL;
    method_report qr;
    if (method_run(others[k], g, c, &o, &q, &qr, &err) != MP_OK) {
      fprintf(stderr, "\ninstance %d: %s failed: %s", id, others[k], err.msg);
      bad = 1;
      continue;
    }
    int q_fits = 0;
    double tq = cost_model_period(b.m, q, NULL, NULL, &q_fits, NULL);
    if (tq < res.period_s && (!mem_first || q_fits)) {
      fprintf(stderr, "\ninstance %d: %s's plan %.17g beats optimal's %.17g", id, others[k], tq, res.period_s);
      bad = 1;
    }
    plan_free(q);
  }
  t->instances++;
  t->hetero += c->heterogeneous;
  t->streaming += !b.any_fits && c->n_dram > 0;
  int equal = res.period_s <= b.best * (1 + 1e-12);
  t->equal += equal;
  t->equal_hetero += equal && c->heterogeneous;
  t->exact += res.exact;
  t->contended += b.contended > 0;
  t->worst_gap = fmax(t->worst_gap, res.period_s / b.best - 1);
  t->worst_low_gap = fmax(t->worst_low_gap, b.best / res.lower_s - 1);
  plan_free(p);
  cost_model_free(b.m);
  return bad;
}

/* 1000 instances of 1-7 layers on 1-9 cores (each up to 3003 plans): a third heterogeneous, memory
 * tight a third of the time, four chips in five with one or two DRAM ports.  Every check above must
 * hold on every instance.  How often optimal's plan is the brute-force optimum is measured, not
 * proved (the repair and the deep search are local searches): at this seed 999 of 1000 (722 of 723
 * uniform chips, 277 of 277 heterogeneous ones), the worst plan 0.0435% above the optimum; with the
 * repair alone (no deep search) it was 938 (51.3% the worst).  The floor, 990, leaves a little room for
 * another search, none for the repair alone. */
static void optimal_should_agree_with_brute_force_on_1000_random_instances(void) {
  testgen_seed(UINT64_C(0x9e3779b97f4a7c15));
  tally t = {0};
  for (int id = 0; id < 1000; id++) {
    int n_layers = 1 + testgen_below(7);
    int w = 1 + testgen_below(3), h = 1 + testgen_below(3);
    int het = testgen_below(3) == 0;
    double sram_scale = testgen_below(3) == 0 ? 0.2 : 40.0;
    int ports = testgen_below(5) == 0 ? 0 : 1 + testgen_below(w * h < 2 ? 1 : 2);
    graph *g = random_graph(n_layers, testgen_below(40) == 0);
    chip *c = testgen_chip(w, h, het, sram_scale, ports, 0);
    t.failures += one_instance(id, g, c, &t);
    graph_free(g);
    chip_free(c);
  }
  fprintf(stderr,
          "\n  %d instances (%d heterogeneous, %d where no plan fits and DRAM streams, %d with a contended plan): "
          "optimal's plan is the brute-force optimum on %d (%.1f%%; uniform %d of %d, heterogeneous %d of %d), "
          "certified exact on %d; worst gap to the optimum %.3g%%, largest optimum over the certified bound "
          "%.3g%% ",
          t.instances, t.hetero, t.streaming, t.contended, t.equal, 100.0 * t.equal / t.instances,
          t.equal - t.equal_hetero, t.instances - t.hetero, t.equal_hetero, t.hetero, t.exact, 100 * t.worst_gap,
          100 * t.worst_low_gap);
  CU_ASSERT_EQUAL(t.failures, 0);
  CU_ASSERT_EQUAL(t.instances, 1000);
  CU_ASSERT(t.hetero >= 200);    /* the position-aware DP ran */
  CU_ASSERT(t.streaming >= 100); /* DRAM terms decided (no plan fits) */
  CU_ASSERT(t.contended >= 300); /* contention took part */
  CU_ASSERT(t.equal >= 990);     /* the measured floor (see above) */
}

/* The same checks on 1000 instances (1-7 layers on 2-9 cores) whose chips have a core model (opcost.h): a stage's compute then
 * steps with the array's tiles as its core count grows while its all-gathers grow, so it is not
 * monotone in the count, and the DP finds the counts within a threshold by bounding intervals
 * (optimal.c, compute_set).  The certified bound must still be the lower relaxation's brute-force
 * optimum on every instance. */
static void optimal_should_agree_with_brute_force_on_1000_random_instances_of_chips_with_a_core_model(void) {
  testgen_seed(UINT64_C(0x2545f4914f6cdd1d));
  tally t = {0};
  for (int id = 0; id < 1000; id++) {
    int n_layers = 1 + testgen_below(7);
    int w = 2 + testgen_below(2), h = 1 + testgen_below(3); /* 2-9 cores: a share's steps need a few */
    int het = testgen_below(4) == 0;
    double sram_scale = testgen_below(3) == 0 ? 0.2 : 40.0;
    int ports = testgen_below(5) == 0 ? 0 : 1 + testgen_below(w * h < 2 ? 1 : 2);
    graph *g = random_graph_dims(n_layers, testgen_below(40) == 0, 1);
    chip *c = testgen_chip(w, h, het, sram_scale, ports, TESTGEN_CORE_MODEL);
    t.failures += one_instance(id, g, c, &t);
    graph_free(g);
    chip_free(c);
  }
  fprintf(stderr,
          "\n  %d instances (%d heterogeneous, %d where no plan fits and DRAM streams, %d with a stage whose compute "
          "falls and rises with its cores): optimal's plan is the brute-force optimum on %d (%.1f%%), certified "
          "exact on %d; worst gap to the optimum %.3g%% ",
          t.instances, t.hetero, t.streaming, t.stepping, t.equal, 100.0 * t.equal / t.instances, t.exact,
          100 * t.worst_gap);
  CU_ASSERT_EQUAL(t.failures, 0);
  CU_ASSERT_EQUAL(t.instances, 1000);
  CU_ASSERT(t.hetero >= 150);
  CU_ASSERT(t.stepping >= 200); /* the non-monotone case took part (230 at this seed) */
  CU_ASSERT(t.equal >= 990); /* 999 at this seed (with the deep search; see the test above) */
}

/* ---- other objectives ------------------------------------------------------------------------------ */

/* The least value of obj over every plan (an energy brute force), and cost_model_energy against
 * cost_evaluate's energy on each plan. */
typedef struct energy_brute {
  const graph *g;
  const chip *c;
  cost_model *m;
  objective obj;
  double best;
  long plans;
  int bad_energy; /* plans where cost_model_energy and cost_evaluate disagree */
} energy_brute;

static double value_of(cost_model *m, objective obj, const plan *p) {
  double period = cost_model_period(m, p, NULL, NULL, NULL, NULL);
  return objective_value(obj, period, cost_model_energy(m, period));
}

static void energy_visit(void *ctx, const plan *p) {
  energy_brute *b = ctx;
  cost_result *r = NULL;
  mp_error err;
  if (cost_evaluate(b->g, b->c, p, &r, &err) != MP_OK) {
    b->bad_energy++;
    return;
  }
  double v = value_of(b->m, b->obj, p);
  double e = cost_model_energy(b->m, r->period_s);
  if (!close_to(e, r->energy.j_per_sample * graph_batch(b->g))) b->bad_energy++;
  if (b->plans++ == 0 || v < b->best) b->best = v;
  cost_result_free(r);
}

/* optimal --objective energy and edp on 600 random instances (1-7 layers on 1-9 cores, chips with
 * energy figures and DRAM ports, memory tight a third of the time): no exact DP exists for these
 * objectives (optimal.c), so what must hold on every instance is what optimal claims: the value it
 * reports is its plan's in the model, its certified bound is at most the brute-force optimum, and its
 * plan is no worse by the objective than the time-optimal plan or any fast method's.  How often it finds
 * the brute-force optimum is measured: at this seed 543 of 600 (90.5%; certified exact on 44; 540 before
 * the deep search of the time plan), the worst 393% above it (a local search).  The floor, 510, leaves
 * room for another search, not for a broken one. */
static void optimal_should_respect_its_energy_bound_and_beat_every_start_on_600_random_instances(void) {
  testgen_seed(UINT64_C(0x5851f42d4c957f2d));
  int failures = 0, equal = 0, instances = 0, exact = 0;
  double worst = 0;
  for (int id = 0; id < 600; id++) {
    objective obj = id % 2 ? OBJECTIVE_EDP : OBJECTIVE_ENERGY;
    int n_layers = 1 + testgen_below(7);
    int w = 1 + testgen_below(3), h = 1 + testgen_below(3);
    double sram_scale = testgen_below(3) == 0 ? 0.2 : 40.0;
    int ports = 1 + testgen_below(w * h < 2 ? 1 : 2);
    graph *g = random_graph(n_layers, 0);
    chip *c = testgen_chip(w, h, 0, sram_scale, ports, TESTGEN_ENERGY);
    mp_error err;
    energy_brute b = {.g = g, .c = c, .obj = obj};
    if (!g || !c || cost_model_new(g, c, &b.m, &err) != MP_OK) {
      failures++;
      graph_free(g);
      chip_free(c);
      continue;
    }
    b.bad_energy += testgen_each_plan(c->n_cores, g->n_ops, energy_visit, &b);
    optimal_result res, tres;
    method_report rep = {0}, trep = {0};
    plan *p = NULL, *tp = NULL;
    int bad = b.bad_energy > 0 || optimal_solve(g, c, obj, &p, &res, &rep, &err) != MP_OK ||
              optimal_solve(g, c, OBJECTIVE_TIME, &tp, &tres, &trep, &err) != MP_OK;
    double v = bad ? 0 : value_of(b.m, obj, p), tv = bad ? 0 : value_of(b.m, obj, tp);
    if (!bad && (v != res.value || res.lower_value > b.best * (1 + 1e-12) || v > tv || res.exact != (v <= res.lower_value)))
      bad = 1;
    for (size_t k = 0; k < sizeof others / sizeof *others && !bad; k++) {
      method_options o;
      method_options_default(&o);
      plan *q = NULL;
      method_report qr;
      if (method_run(others[k], g, c, &o, &q, &qr, &err) != MP_OK || value_of(b.m, obj, q) < v) bad = 1;
      plan_free(q);
    }
    if (bad)
      fprintf(stderr, "\ninstance %d (%s, %d layers, %d cores): %d energy mismatches; optimal %.17g (its plan %.17g), "
              "bound %.17g, brute %.17g, time plan %.17g",
              id, objective_name(obj), g->n_ops, c->n_cores, b.bad_energy, res.value, v, res.lower_value, b.best, tv);
    failures += bad;
    instances++;
    equal += !bad && v <= b.best * (1 + 1e-12);
    exact += !bad && res.exact;
    if (!bad) worst = fmax(worst, v / b.best - 1);
    plan_free(p);
    plan_free(tp);
    cost_model_free(b.m);
    graph_free(g);
    chip_free(c);
  }
  fprintf(stderr, "\n  %d instances (energy and edp alternately): optimal's plan is the brute-force optimum on %d "
          "(%.1f%%), certified exact on %d; worst gap to the optimum %.3g%% ",
          instances, equal, 100.0 * equal / instances, exact, 100 * worst);
  CU_ASSERT_EQUAL(failures, 0);
  CU_ASSERT_EQUAL(instances, 600);
  CU_ASSERT(equal >= 510);
}

/* A chip without energy figures has no energy to minimise: method_run refuses the objective rather
 * than minimising zeros. */
static void optimal_should_refuse_an_energy_objective_on_a_chip_without_energy_figures(void) {
  graph *g = random_graph(4, 0);
  testgen_seed(7);
  chip *c = testgen_chip(2, 2, 0, 40.0, 1, 0);
  method_options o;
  method_options_default(&o);
  o.objective = OBJECTIVE_EDP;
  plan *p = NULL;
  method_report rep;
  mp_error err;
  err_clear(&err);
  CU_ASSERT_EQUAL(method_run("optimal", g, c, &o, &p, &rep, &err), MP_USAGE);
  CU_ASSERT_PTR_NULL(p);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--objective edp needs a chip with energy figures"));
  graph_free(g);
  chip_free(c);
}

/* The uniform chip's threshold DP against the position-aware DP, which runs once a single core
 * differs; the difference (a larger SRAM on core 0, with memory never binding, so no DRAM stream) changes
 * no stage-local figure, and the certified bounds (each the optimum of the stage-local terms without
 * latency) are equal. */
static void threshold_dp_should_equal_the_position_aware_dp_on_larger_instances(void) {
  testgen_seed(12345);
  for (int id = 0; id < 12; id++) {
    int n_layers = 10 + testgen_below(6);
    graph *g = random_graph(n_layers, 0);
    char text[512];
    double flops = 1e9 * (1 + testgen_below(8)), bw = 1e8 * (1 + testgen_below(20));
#define CHIP_FMT                                                                                               \
  "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"u\",\"mesh\":{\"width\":4,\"height\":3},"            \
  "\"core\":{\"flops\":%g,\"sram_bytes\":100000000000},\"noc\":{\"bandwidth\":%g,\"latency\":0},"              \
  "\"dram\":{\"bandwidth\":1e9,\"ports\":[[0,0]]}%s}"
    snprintf(text, sizeof text, CHIP_FMT, flops, bw, "");
    chip *cu = testutil_chip_text(text);
    snprintf(text, sizeof text, CHIP_FMT, flops, bw, ",\"overrides\":[{\"core\":0,\"sram_bytes\":200000000000}]");
#undef CHIP_FMT
    chip *ch = testutil_chip_text(text);
    CU_ASSERT_FATAL(g && cu && ch && !cu->heterogeneous && ch->heterogeneous);
    mp_error err;
    optimal_result ru, rh;
    method_report repu = {0}, reph = {0};
    plan *pu = NULL, *ph = NULL;
    CU_ASSERT_EQUAL_FATAL(optimal_solve(g, cu, OBJECTIVE_TIME, &pu, &ru, &repu, &err), MP_OK);
    CU_ASSERT_EQUAL_FATAL(optimal_solve(g, ch, OBJECTIVE_TIME, &ph, &rh, &reph, &err), MP_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(repu.notes, "threshold DP"));
    CU_ASSERT_PTR_NOT_NULL(strstr(reph.notes, "position-aware DP"));
    CU_ASSERT(close_to(ru.lower_s, rh.lower_s));
    CU_ASSERT(ru.lower_s <= ru.period_s && rh.lower_s <= rh.period_s);
    plan_free(pu);
    plan_free(ph);
    chip_free(cu);
    chip_free(ch);
    graph_free(g);
  }
}

/* a: x (1000 B), 100 flops, 4000 B of weights; b: x -> y (10 B), 100 flops.  Two cores of 1 Gflop/s
 * and 1500 B, links and a DRAM port at (0,0) of 1e9 B/s, no latency.  No plan fits:
 * [1, 1]: a on core 0 needs 5000 B, reads e = 3500 B of weights over the port's link alone (its core is
 *   the port's): 3.5 us, plus 0.1 us of work; its Send of x takes 1 us: t = 3.6 us; b on core 1 fits
 *   (0.1 us); the port's link carries 3.5 us, x0>x1 1 us, no activity shares a link: period 3.6 us.
 * [0, 2]: both on both cores need 2000 + 1000 B, e = 1500 B a core; the reads load the port's link with
 *   3000 B and x0>x1 with 1500 B: 3 us; work 0.1 us and all-gather (1/2) 1010 B: 0.505 us; t = 3.605
 *   us without contention, more with it (the gather and core 1's reads share x0>x1).
 * So the optimum is [1, 1] at 3.6 us, and it streams: not feasible.  The lower relaxation gives the
 * same 3.6 us ([1, 1] with a at the port's core), so the plan is certified exact. */
static void optimal_should_return_a_plan_that_streams_when_nothing_fits(void) {
  const char *graph_text =
      "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"big\",\"inputs\":[],\"ops\":["
      "{\"name\":\"a\",\"type\":\"X\",\"inputs\":[],\"outputs\":[{\"name\":\"x\",\"bytes\":1000}],\"macs\":0,"
      "\"flops\":100,\"weight_bytes\":4000},"
      "{\"name\":\"b\",\"type\":\"X\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"y\",\"bytes\":10}],\"macs\":0,"
      "\"flops\":100,\"weight_bytes\":0}]}";
  const char *chip_text =
      "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"small\",\"mesh\":{\"width\":2,\"height\":1},"
      "\"core\":{\"flops\":1e9,\"sram_bytes\":1500},\"noc\":{\"bandwidth\":1e9,\"latency\":0},"
      "\"dram\":{\"bandwidth\":1e9,\"ports\":[[0,0]]}}";
  graph *g = testutil_graph_text(graph_text);
  chip *c = testutil_chip_text(chip_text);
  CU_ASSERT_FATAL(g && c);
  mp_error err;
  method_options o;
  method_options_default(&o);
  method_report rep;
  plan *p = NULL;
  CU_ASSERT_EQUAL_FATAL(method_run("optimal", g, c, &o, &p, &rep, &err), MP_OK);
  CU_ASSERT_EQUAL(rep.feasible, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(rep.notes, "memory"));
  CU_ASSERT_EQUAL_FATAL(p->n_stages, 2);
  CU_ASSERT_EQUAL(p->arranged[0], 1);
  CU_ASSERT_EQUAL(p->arranged[1], 1);
  cost_result *r = NULL;
  CU_ASSERT_EQUAL_FATAL(cost_evaluate(g, c, p, &r, &err), MP_OK);
  CU_ASSERT_EQUAL(r->feasible, 0);
  CU_ASSERT_DOUBLE_EQUAL(r->stages[0].dram_in_bytes, 3500, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(r->stages[0].dram_s, 3.5e-6, 1e-18);
  CU_ASSERT_DOUBLE_EQUAL(r->period_s, 3.6e-6, 1e-18);
  CU_ASSERT_EQUAL(r->binding, COST_BIND_DRAM);
  cost_result_free(r);
  plan_free(p);
  optimal_result res;
  CU_ASSERT_EQUAL_FATAL(optimal_solve(g, c, OBJECTIVE_TIME, &p, &res, &rep, &err), MP_OK);
  CU_ASSERT_DOUBLE_EQUAL(res.period_s, 3.6e-6, 1e-18);
  CU_ASSERT_DOUBLE_EQUAL(res.lower_s, 3.6e-6, 1e-18);
  CU_ASSERT_EQUAL(res.exact, 1);
  plan_free(p);
  graph_free(g);
  chip_free(c);
}

/* The upper relaxation adds a hop's latency per layer to the compute of a group of c > 1 cores only,
 * so its compute can rise from c = 1 to 2 and fall after.  a, b on c cores of 8 Gflop/s, links of 6e8
 * B/s, 12 us a hop: 492000 / 8e9 = 61.5 us on one core, (36000 / 6e8)(c - 1) / c + 61.5 us / c + 2 x 12
 * us on more: 84.75 us on 2, 84.5 on 3, 84.375 on 4 (the relaxation's optimum: a alone must send x,
 * 2 x 24000 / 6e8 + 2 hops = 104 us).  Taken for a monotone run (61.5 < 84.375: "rising"), the counts
 * within 84.375 us stop before the first one above it, 2, so 4 cores is lost at the very value of the
 * plan the search recovered above it; optimal must still return a plan, and every check of the random
 * instances must hold. */
static void optimal_should_solve_an_instance_whose_upper_relaxation_is_not_monotone_in_the_cores(void) {
  graph *g = testutil_graph_text(
      "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"r\",\"inputs\":[{\"name\":\"in\",\"bytes\":1000}],"
      "\"ops\":[{\"name\":\"a\",\"type\":\"X\",\"inputs\":[\"in\"],\"outputs\":[{\"name\":\"x\",\"bytes\":24000}],"
      "\"macs\":0,\"flops\":480000,\"weight_bytes\":0},"
      "{\"name\":\"b\",\"type\":\"X\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"y\",\"bytes\":12000}],"
      "\"macs\":0,\"flops\":12000,\"weight_bytes\":0}]}");
  chip *c = testutil_chip_text("{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"r\",\"mesh\":{\"width\":2,\"height\":2},"
                      "\"core\":{\"flops\":8e9,\"sram_bytes\":2000000,\"transfer_factor\":2},"
                      "\"noc\":{\"bandwidth\":6e8,\"latency\":1.2e-05}}");
  CU_ASSERT_FATAL(g && c);
  tally t = {0};
  CU_ASSERT_EQUAL(one_instance(0, g, c, &t), 0);
  CU_ASSERT_EQUAL(t.instances, 1);
  graph_free(g);
  chip_free(c);
}

/* The deep search runs where the repair stops more than 1 % above the bound on chips of up to 16 cores
 * (optimal_int.h: on 8x8 the plans it found simulated slower more often than faster): tiny_resnet's
 * repaired plan is 32.6 % above its bound on mesh4x4 and 60.3 % on mesh8x8, so the note reports the
 * search on the first and not on the second. */
static void optimal_should_search_deeper_only_on_chips_of_up_to_16_cores(void) {
  graph *g = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(graph_load(testutil_src("traces/tiny_resnet.json"), &g, &err), MP_OK);
  const char *chips[2] = {"platforms/mesh4x4.json", "platforms/mesh8x8.json"};
  for (int k = 0; k < 2; k++) {
    chip *c = NULL;
    plan *p = NULL;
    method_report rep;
    CU_ASSERT_EQUAL_FATAL(chip_load(testutil_src(chips[k]), &c, &err), MP_OK);
    CU_ASSERT_EQUAL_FATAL(method_run("optimal", g, c, NULL, &p, &rep, &err), MP_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(rep.notes, "gap ")); /* not exact: above the bound */
    CU_ASSERT_EQUAL(strstr(rep.notes, "the deep search") != NULL, c->n_cores <= 16);
    plan_free(p);
    chip_free(c);
  }
  graph_free(g);
}

/* The transformer encoder on the bundled 4x4 mesh (nothing fits: DRAM-port loads bind): the deep search
 * from the best start alone stops at 0.000509457 s, 12.7 % above the certified bound 0.000451933 s; from
 * the other starts too it reaches 0.00045439 s, within 1 % of the bound, and the note names the start. */
static void optimal_should_search_from_every_start_when_the_best_ones_search_stops_far_from_the_bound(void) {
  graph *g = NULL;
  chip *c = NULL;
  plan *p = NULL;
  mp_error err;
  method_report rep = {0};
  optimal_result res;
  CU_ASSERT_EQUAL_FATAL(graph_load(testutil_src("traces/transformer_encoder.json"), &g, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(chip_load(testutil_src("platforms/mesh4x4.json"), &c, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(optimal_solve(g, c, OBJECTIVE_TIME, &p, &res, &rep, &err), MP_OK);
  CU_ASSERT(res.period_s <= res.lower_s * (1 + OPTIMAL_DEEP_GAP));
  CU_ASSERT(res.period_s < 0.99 * 0.000509457);
  CU_ASSERT_PTR_NOT_NULL(strstr(rep.notes, "found the plan above (searched from "));
  plan_free(p);
  chip_free(c);
  graph_free(g);
}

static CU_TestInfo tests[] = {
    {"optimal_should_search_from_every_start_when_the_best_ones_search_stops_far_from_the_bound",
     optimal_should_search_from_every_start_when_the_best_ones_search_stops_far_from_the_bound},
    {"optimal_should_search_deeper_only_on_chips_of_up_to_16_cores",
     optimal_should_search_deeper_only_on_chips_of_up_to_16_cores},
    {"optimal_should_respect_its_energy_bound_and_beat_every_start_on_600_random_instances",
     optimal_should_respect_its_energy_bound_and_beat_every_start_on_600_random_instances},
    {"optimal_should_refuse_an_energy_objective_on_a_chip_without_energy_figures",
     optimal_should_refuse_an_energy_objective_on_a_chip_without_energy_figures},
    {"optimal_should_agree_with_brute_force_on_1000_random_instances",
     optimal_should_agree_with_brute_force_on_1000_random_instances},
    {"optimal_should_agree_with_brute_force_on_1000_random_instances_of_chips_with_a_core_model",
     optimal_should_agree_with_brute_force_on_1000_random_instances_of_chips_with_a_core_model},
    {"threshold_dp_should_equal_the_position_aware_dp_on_larger_instances",
     threshold_dp_should_equal_the_position_aware_dp_on_larger_instances},
    {"optimal_should_return_a_plan_that_streams_when_nothing_fits",
     optimal_should_return_a_plan_that_streams_when_nothing_fits},
    {"optimal_should_solve_an_instance_whose_upper_relaxation_is_not_monotone_in_the_cores",
     optimal_should_solve_an_instance_whose_upper_relaxation_is_not_monotone_in_the_cores},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("optimal", tests, argc, argv); }
