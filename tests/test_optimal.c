/* Tests of optimal.c: the DP's optimum against a brute-force enumeration of every arranged_core list
 * on random small instances (DAGs with skip connections and multi-output layers; uniform and
 * heterogeneous chips; memory that sometimes cannot hold any plan), each brute-force plan costed
 * twice — by cost.c and by a straightforward re-computation written here from the model's
 * definition; the fast uniform DP against the position-aware DP on larger instances; the lower
 * bounds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "cost.h"
#include "graph.h"
#include "jsonio.h"
#include "method.h"
#include "method_int.h"
#include "plan.h"
#include "strbuf.h"
#include "testutil.h"
#define OPTIMAL_MEM_SLACK 0.01 /* TEMP until the rewrite */

static uint64_t rng_state;

static uint64_t next_u64(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * UINT64_C(2685821657736338717);
}

static int below(int n) { return (int)(next_u64() % (uint64_t)n); }

/* A random DAG of n layers: layer j reads the previous layer's first output and, with probability
 * 1/2, an output of a random earlier layer (a skip connection); some layers have two outputs, and
 * the graph input is sometimes read again later. */
static graph *random_graph(int n, int zero_work) {
  strbuf b = {0};
  strbuf_printf(&b, "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"r\","
                    "\"inputs\":[{\"name\":\"in\",\"bytes\":%d}],\"ops\":[",
                1 + below(5000));
  int n_out[16];
  for (int j = 0; j < n; j++) {
    n_out[j] = 1 + (below(4) == 0);
    uint64_t macs = zero_work ? 0 : (uint64_t)below(1000000);
    uint64_t flops = 2 * macs + (uint64_t)below(1000);
    strbuf_printf(&b, "%s{\"name\":\"op%d\",\"type\":\"X\",\"inputs\":[", j ? "," : "", j);
    if (j == 0)
      strbuf_printf(&b, "\"in\"");
    else
      strbuf_printf(&b, "\"t%d_0\"", j - 1);
    if (j >= 2 && below(2)) {
      int src = below(j - 1);
      strbuf_printf(&b, ",\"t%d_%d\"", src, below(n_out[src]));
    } else if (j >= 1 && below(5) == 0) {
      strbuf_printf(&b, ",\"in\"");
    }
    strbuf_printf(&b, "],\"outputs\":[");
    for (int k = 0; k < n_out[j]; k++)
      strbuf_printf(&b, "%s{\"name\":\"t%d_%d\",\"bytes\":%d}", k ? "," : "", j, k, below(40000));
    strbuf_printf(&b, "],\"macs\":%llu,\"flops\":%llu,\"weight_bytes\":%d}", (unsigned long long)macs,
                  (unsigned long long)flops, below(200000));
  }
  strbuf_printf(&b, "]}");
  cJSON *root = NULL;
  mp_error err;
  graph *g = NULL;
  if (jsonio_parse("random", b.s, b.len, &root, &err) == MP_OK) graph_from_json(root, "random", &g, &err);
  if (!g) fprintf(stderr, "random graph refused: %s\n%s\n", err.msg, b.s);
  cJSON_Delete(root);
  strbuf_clear(&b);
  return g;
}

/* A random chip of w x h cores; heterogeneous chips override some cores' figures; sram_scale makes
 * memory tight (small) or plentiful (large). */
static chip *random_chip(int w, int h, int hetero, double sram_scale) {
  strbuf b = {0};
  strbuf_printf(&b,
      "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"r\",\"mesh\":{\"width\":%d,\"height\":%d},"
      "\"core\":{\"flops\":%g,\"sram_bytes\":%llu,\"transfer_factor\":%g},\"noc\":{\"bandwidth\":%g,\"latency\":1e-9}",
      w, h, 1e9 * (1 + below(8)), (unsigned long long)(sram_scale * (1 + below(100000))), 1.0 + below(2),
      1e8 * (1 + below(20)));
  if (hetero) {
    strbuf_printf(&b, ",\"overrides\":[");
    int n = w * h, first = 1;
    for (int i = 0; i < n; i++)
      if (below(2) || i == n - 1) {
        strbuf_printf(&b, "%s{\"core\":%d,\"flops\":%g,\"sram_bytes\":%llu,\"transfer_factor\":%g}",
                      first ? "" : ",", i, 1e9 * (1 + below(8)), (unsigned long long)(sram_scale * (1 + below(100000))),
                      1.0 + below(3));
        first = 0;
      }
    strbuf_printf(&b, "]");
  }
  strbuf_printf(&b, "}");
  cJSON *root = NULL;
  mp_error err;
  chip *c = NULL;
  if (jsonio_parse("random", b.s, b.len, &root, &err) == MP_OK) chip_from_json(root, "random", &c, &err);
  if (!c) fprintf(stderr, "random chip refused: %s\n%s\n", err.msg, b.s);
  cJSON_Delete(root);
  strbuf_clear(&b);
  return c;
}

/* The model recomputed from its definition, independently of cost.c: sums in double, X from each
 * tensor's consumer list, group figures from the cores.  Returns the bottleneck; *fits, *ratio. */
static double reference_cost(const graph *g, const chip *c, const plan *p, int *fits, double *ratio) {
  double worst = 0;
  *fits = 1;
  *ratio = 0;
  for (int s = 0; s < p->n_stages; s++) {
    const plan_stage *st = &p->stages[s];
    int l = st->first_layer, r = st->first_layer + st->n_layers - 1, n = st->n_cores;
    double F = 0, W = 0, A = 0, M = 0, X = 0;
    for (int j = l; j <= r; j++) {
      F += (double)g->ops[j].flops;
      W += (double)g->ops[j].weight_bytes;
      double a = 0;
      for (int k = 0; k < g->ops[j].n_outputs; k++) {
        const graph_tensor *t = &g->tensors[g->ops[j].outputs[k]];
        a += (double)t->bytes;
        int later = 0;
        for (int q = 0; q < t->n_consumers; q++)
          if (t->consumers[q] > r) later = 1;
        if (later) X += (double)t->bytes;
      }
      A += a;
      if (a > M) M = a;
    }
    double speed = 0, gamma = 0, sram = INFINITY;
    for (int i = st->first_core; i < st->first_core + n; i++) {
      speed += c->cores[i].flops;
      gamma = fmax(gamma, c->cores[i].transfer_factor);
      sram = fmin(sram, (double)c->cores[i].sram_bytes);
    }
    double B = c->noc_bandwidth;
    double t = fmax(F / speed + (n - 1.0) / n * A / B, gamma * X / B);
    double mem = W / n + M;
    if (mem > sram * (1 + 1e-12)) *fits = 0;
    *ratio = fmax(*ratio, mem / sram);
    worst = fmax(worst, t);
  }
  return worst;
}

static int close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-300; }

typedef struct brute {
  int pass;     /* 0: is there a fitting plan, else the least ratio; 1: the least time within bound */
  double bound; /* pass 1: the largest ratio allowed (1 when something fits) */
  double best;  /* the optimum's bottleneck by the definition (pass 1) */
  double ratio; /* pass 0: the least memory ratio (> 1 when nothing fits) */
  int feasible;
  long plans;
  int mismatches; /* plans where cost.c and the reference disagree */
} brute;

/* Every arranged_core list: n_cores entries >= 0 summing to n_layers, the last > 0.  Pass 0 finds
 * whether any plan fits and otherwise the least ratio lambda*; pass 1 the least bottleneck among the
 * plans that fit or, when none does, those within lambda* (1 + OPTIMAL_MEM_SLACK). */
static void enumerate(const graph *g, const chip *c, cost_model *m, int *arr, int i, int left, brute *b) {
  int C = c->n_cores;
  if (i == C - 1) {
    if (left == 0) return;
    arr[i] = left;
    plan *p = NULL;
    mp_error err;
    if (plan_new(arr, C, g->n_ops, &p, &err) != MP_OK) {
      b->mismatches++;
      return;
    }
    int fits, ref_fits;
    double ratio, ref_ratio;
    double t = cost_model_period(m, p, NULL, NULL, &fits, &ratio);
    double ref = reference_cost(g, c, p, &ref_fits, &ref_ratio);
    if (!close_to(t, ref) || fits != ref_fits || !close_to(ratio, ref_ratio)) b->mismatches++;
    b->plans++;
    if (b->pass == 0) {
      if (fits) b->feasible = 1;
      if (b->plans == 1 || ratio < b->ratio) b->ratio = ratio;
    } else if ((b->feasible ? fits : ratio <= b->bound) && t < b->best) {
      b->best = t;
    }
    plan_free(p);
    return;
  }
  for (int k = 0; k <= left; k++) {
    arr[i] = k;
    enumerate(g, c, m, arr, i + 1, left - k, b);
  }
}

/* Runs one instance; returns 0 when optimal matches the brute force, else prints why. */
static int one_instance(int id, graph *g, chip *c, int *infeasible_seen, int *hetero_seen) {
  mp_error err;
  cost_model *m = NULL;
  if (!g || !c || cost_model_new(g, c, &m, &err) != MP_OK) return 1;
  int arr[64];
  brute b = {0, 0, INFINITY, 0, 0, 0, 0};
  enumerate(g, c, m, arr, 0, g->n_ops, &b);
  b.pass = 1;
  b.bound = b.feasible ? 1 : b.ratio * (1 + OPTIMAL_MEM_SLACK);
  enumerate(g, c, m, arr, 0, g->n_ops, &b);
  method_options o;
  method_options_default(&o);
  method_report rep;
  plan *p = NULL;
  int bad = 0;
  if (method_run("optimal", g, c, &o, &p, &rep, &err) != MP_OK) {
    fprintf(stderr, "instance %d: optimal failed: %s\n", id, err.msg);
    bad = 1;
  } else {
    int fits;
    double ratio;
    double t = cost_model_period(m, p, NULL, NULL, &fits, &ratio);
    if (b.mismatches || fits != b.feasible || !close_to(t, b.best) || (!fits && ratio > b.bound * (1 + 1e-12)) ||
        rep.feasible != fits) {
      fprintf(stderr, "instance %d (%d layers, %d cores): optimal %.17g fits %d ratio %g; brute %.17g fits %d ratio %g "
              "over %ld plans, %d cost mismatches\n", id, g->n_ops, c->n_cores, t, fits, ratio, b.best, b.feasible,
              b.ratio, b.plans / 2, b.mismatches);
      bad = 1;
    }
    cost_bound lb;
    cost_lower_bound(g, c, &lb);
    if (lb.bound_s > b.best * (1 + 1e-12)) {
      fprintf(stderr, "instance %d: lower bound %.17g above the optimum %.17g\n", id, lb.bound_s, b.best);
      bad = 1;
    }
  }
  if (!b.feasible) (*infeasible_seen)++;
  if (c->heterogeneous) (*hetero_seen)++;
  plan_free(p);
  cost_model_free(m);
  return bad;
}

static void optimal_should_equal_brute_force_on_400_random_instances(void) {
  rng_state = UINT64_C(0x9e3779b97f4a7c15);
  int failures = 0, infeasible = 0, hetero = 0;
  for (int id = 0; id < 400; id++) {
    int n_layers = 1 + below(6);
    int w = 1 + below(3), h = 1 + below(2);
    int het = below(3) == 0;
    double sram_scale = below(4) == 0 ? 0.2 : 40.0; /* tight memory a quarter of the time */
    graph *g = random_graph(n_layers, below(40) == 0);
    chip *c = random_chip(w, h, het, sram_scale);
    failures += one_instance(id, g, c, &infeasible, &hetero);
    graph_free(g);
    chip_free(c);
  }
  CU_ASSERT_EQUAL(failures, 0);
  CU_ASSERT(infeasible >= 20); /* the memory-infeasible branch was exercised */
  CU_ASSERT(hetero >= 50);     /* and the position-aware DP */
  fprintf(stderr, "  (%d infeasible, %d heterogeneous instances) ", infeasible, hetero);
}

/* The uniform chip's threshold DP against the position-aware DP, which runs once a single core
 * differs; the difference (a larger SRAM on core 0, with memory never binding) changes no figure. */
static void threshold_dp_should_equal_the_position_aware_dp_on_larger_instances(void) {
  rng_state = 12345;
  for (int id = 0; id < 12; id++) {
    int n_layers = 10 + below(6);
    graph *g = random_graph(n_layers, 0);
    char text[512];
    double flops = 1e9 * (1 + below(8)), bw = 1e8 * (1 + below(20));
#define CHIP_FMT                                                                                   \
  "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"u\",\"mesh\":{\"width\":4,\"height\":3},"            \
  "\"core\":{\"flops\":%g,\"sram_bytes\":100000000000},\"noc\":{\"bandwidth\":%g,\"latency\":0}%s}"
    chip *cu = NULL, *ch = NULL;
    cJSON *root = NULL;
    mp_error err;
    snprintf(text, sizeof text, CHIP_FMT, flops, bw, "");
    CU_ASSERT_EQUAL_FATAL(jsonio_parse("u", text, strlen(text), &root, &err), MP_OK);
    CU_ASSERT_EQUAL_FATAL(chip_from_json(root, "u", &cu, &err), MP_OK);
    cJSON_Delete(root);
    snprintf(text, sizeof text, CHIP_FMT, flops, bw, ",\"overrides\":[{\"core\":0,\"sram_bytes\":200000000000}]");
    CU_ASSERT_EQUAL_FATAL(jsonio_parse("h", text, strlen(text), &root, &err), MP_OK);
    CU_ASSERT_EQUAL_FATAL(chip_from_json(root, "h", &ch, &err), MP_OK);
    cJSON_Delete(root);
    method_options o;
    method_options_default(&o);
    method_report ru, rh;
    plan *pu = NULL, *ph = NULL;
    CU_ASSERT_EQUAL_FATAL(method_run("optimal", g, cu, &o, &pu, &ru, &err), MP_OK);
    CU_ASSERT_EQUAL_FATAL(method_run("optimal", g, ch, &o, &ph, &rh, &err), MP_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(ru.notes, "threshold DP"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rh.notes, "position-aware DP"));
    cost_result *a = NULL, *b = NULL;
    CU_ASSERT_EQUAL_FATAL(cost_evaluate(g, cu, pu, &a, &err), MP_OK);
    CU_ASSERT_EQUAL_FATAL(cost_evaluate(g, ch, ph, &b, &err), MP_OK);
    CU_ASSERT(close_to(a->bottleneck_s, b->bottleneck_s));
    cost_result_free(a);
    cost_result_free(b);
    plan_free(pu);
    plan_free(ph);
    chip_free(cu);
    chip_free(ch);
    graph_free(g);
  }
}

/* Layers whose own activation exceeds SRAM: no plan fits, and the plan returned is the one whose
 * worst per-core need is least; the report says so. */
static void optimal_should_return_the_least_infeasible_plan_and_say_so(void) {
  const char *graph_text =
      "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"big\",\"inputs\":[],\"ops\":["
      "{\"name\":\"a\",\"type\":\"X\",\"inputs\":[],\"outputs\":[{\"name\":\"x\",\"bytes\":1000}],\"macs\":0,\"flops\":100,"
      "\"weight_bytes\":4000},"
      "{\"name\":\"b\",\"type\":\"X\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"y\",\"bytes\":10}],\"macs\":0,\"flops\":100,"
      "\"weight_bytes\":0}]}";
  /* 2 cores of 1500 B: layer a alone on two cores needs 4000/2 + 1000 = 3000 B (ratio 2), which no
   * plan improves on (a needs its 1000 B activation plus a share of 4000 B weights on at most two
   * cores); together with b the same cores need 3000 B as well; a on one core needs 5000 B. */
  const char *chip_text =
      "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"small\",\"mesh\":{\"width\":2,\"height\":1},"
      "\"core\":{\"flops\":1e9,\"sram_bytes\":1500},\"noc\":{\"bandwidth\":1e9,\"latency\":0}}";
  cJSON *root = NULL;
  mp_error err;
  graph *g = NULL;
  chip *c = NULL;
  CU_ASSERT_EQUAL_FATAL(jsonio_parse("g", graph_text, strlen(graph_text), &root, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(graph_from_json(root, "g", &g, &err), MP_OK);
  cJSON_Delete(root);
  CU_ASSERT_EQUAL_FATAL(jsonio_parse("c", chip_text, strlen(chip_text), &root, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(chip_from_json(root, "c", &c, &err), MP_OK);
  cJSON_Delete(root);
  method_options o;
  method_options_default(&o);
  method_report rep;
  plan *p = NULL;
  CU_ASSERT_EQUAL_FATAL(method_run("optimal", g, c, &o, &p, &rep, &err), MP_OK);
  CU_ASSERT_EQUAL(rep.feasible, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(rep.notes, "least-infeasible"));
  /* The only plan with ratio 2 is both layers on both cores: arranged [0, 2]. */
  CU_ASSERT_EQUAL(p->n_stages, 1);
  CU_ASSERT_EQUAL(p->arranged[0], 0);
  CU_ASSERT_EQUAL(p->arranged[1], 2);
  cost_result *r = NULL;
  CU_ASSERT_EQUAL_FATAL(cost_evaluate(g, c, p, &r, &err), MP_OK);
  CU_ASSERT_DOUBLE_EQUAL(r->mem_ratio, 2.0, 1e-12);
  cost_result_free(r);
  plan_free(p);
  graph_free(g);
  chip_free(c);
}

/* No method finds a fitting plan with a lower bottleneck than the optimum, and the optimum is never
 * below the lower bound, on larger random instances than brute force can take. */
static void no_method_should_beat_the_optimum_on_medium_instances(void) {
  rng_state = 777;
  for (int id = 0; id < 30; id++) {
    graph *g = random_graph(8 + below(8), 0);
    chip *c = random_chip(2 + below(3), 1 + below(3), below(4) == 0, below(3) == 0 ? 0.5 : 40.0);
    CU_ASSERT_FATAL(g && c);
    method_options o;
    method_options_default(&o);
    method_report rep;
    plan *p = NULL;
    mp_error err;
    cost_result *best = NULL;
    CU_ASSERT_EQUAL_FATAL(method_run("optimal", g, c, &o, &p, &rep, &err), MP_OK);
    CU_ASSERT_EQUAL_FATAL(cost_evaluate(g, c, p, &best, &err), MP_OK);
    plan_free(p);
    cost_bound lb;
    cost_lower_bound(g, c, &lb);
    CU_ASSERT(lb.bound_s <= best->bottleneck_s * (1 + 1e-12));
    for (int i = 1; i < method_count(); i++) {
      if (!strcmp(method_at(i)->name, "rl")) continue; /* trains on the simulator: not for this loop */
      cost_result *r = NULL;
      CU_ASSERT_EQUAL_FATAL(method_run(method_at(i)->name, g, c, &o, &p, &rep, &err), MP_OK);
      CU_ASSERT_EQUAL_FATAL(cost_evaluate(g, c, p, &r, &err), MP_OK);
      if (r->feasible) CU_ASSERT(best->feasible && r->bottleneck_s >= best->bottleneck_s * (1 - 1e-12));
      /* Nothing fits: no plan has a ratio below lambda* >= best's / (1 + slack), and none within best's
       * ratio (so within the slack) has a lower bottleneck. */
      if (!r->feasible && !best->feasible) {
        CU_ASSERT(r->mem_ratio >= best->mem_ratio / (1 + OPTIMAL_MEM_SLACK) * (1 - 1e-12));
        if (r->mem_ratio <= best->mem_ratio) CU_ASSERT(r->bottleneck_s >= best->bottleneck_s * (1 - 1e-12));
      }
      cost_result_free(r);
      plan_free(p);
    }
    cost_result_free(best);
    graph_free(g);
    chip_free(c);
  }
}

static CU_TestInfo tests[] = {
    {"optimal_should_equal_brute_force_on_400_random_instances", optimal_should_equal_brute_force_on_400_random_instances},
    {"threshold_dp_should_equal_the_position_aware_dp_on_larger_instances",
     threshold_dp_should_equal_the_position_aware_dp_on_larger_instances},
    {"optimal_should_return_the_least_infeasible_plan_and_say_so", optimal_should_return_the_least_infeasible_plan_and_say_so},
    {"no_method_should_beat_the_optimum_on_medium_instances", no_method_should_beat_the_optimum_on_medium_instances},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("optimal", tests, argc, argv); }
