/* test_sim: the SimGrid pipeline simulator against closed forms and hand-derived figures.
 * MESHPIPE_TEST_LABELS: simgrid
 *
 * SimGrid starts once per process, so every engine runs in a child (testutil_in_child): the child
 * evaluates a list of (graph, plan, M) cases on one chip and writes the results' JSON to a file the
 * parent checks.  Figures must agree to 1e-9 relative (the simulator rounds to 12 digits). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "cost.h"
#include "fileio.h"
#include "graph.h"
#include "jsonio.h"
#include "plan.h"
#include "sim.h"
#include "sim_int.h"
#include "testutil.h"
#include "timeline.h"

/* testutil's temporary paths live in a few rotating buffers: keep a copy of each for the test. */
static const char *keep(const char *path) {
  static char kept[32][1024];
  static int n;
  char *copy = kept[n++ % 32];
  snprintf(copy, sizeof kept[0], "%s", path);
  return copy;
}

/* ---- helpers ----------------------------------------------------------------------------------- */

typedef struct sim_case {
  const char *graph; /* graph JSON */
  int arranged[64];
  int n_cores;
  int M;
} sim_case;

typedef struct child_job {
  const char *chip;
  const sim_case *cases;
  int n_cases;
  int cache;
  const char *out;
  int fast_gather;
  int isolate;
  int fast_streams;
} child_job;

static int load_graph(const char *text, graph **g, mp_error *err) {
  cJSON *root = NULL;
  mp_status st = jsonio_parse("test-graph", text, strlen(text), &root, err);
  if (st == MP_OK) st = graph_from_json(root, "test-graph", g, err);
  cJSON_Delete(root);
  return st;
}

static int load_chip(const char *text, chip **c, mp_error *err) {
  cJSON *root = NULL;
  mp_status st = jsonio_parse("test-chip", text, strlen(text), &root, err);
  if (st == MP_OK) st = chip_from_json(root, "test-chip", c, err);
  cJSON_Delete(root);
  return st;
}

static int child_eval(void *arg) {
  const child_job *j = arg;
  chip *c = NULL;
  sim *s = NULL;
  mp_error err;
  err_clear(&err);
  sim_options o;
  sim_options_init(&o);
  o.cache_size = j->cache ? 4096 : 0;
  o.fast_gather = j->fast_gather;
  o.isolate = j->isolate;
  o.fast_streams = j->fast_streams;
  if (load_chip(j->chip, &c, &err) != MP_OK || sim_new(c, &o, &s, &err) != MP_OK) {
    fprintf(stderr, "child: %s\n", err.msg);
    return 10;
  }
  cJSON *all = cJSON_CreateArray();
  for (int i = 0; i < j->n_cases; i++) {
    graph *g = NULL;
    plan *p = NULL;
    sim_result r;
    if (load_graph(j->cases[i].graph, &g, &err) != MP_OK ||
        plan_new(j->cases[i].arranged, j->cases[i].n_cores, g->n_ops, &p, &err) != MP_OK ||
        sim_evaluate_m(s, g, p, j->cases[i].M, &r, &err) != MP_OK) {
      fprintf(stderr, "child: case %d: %s\n", i, err.msg);
      return 11;
    }
    cJSON *o_r = sim_result_to_json(&r);
    cJSON_AddBoolToObject(o_r, "cached", r.cached);
    cJSON_AddItemToArray(all, o_r);
    sim_result_clear(&r);
    plan_free(p);
    graph_free(g);
  }
  if (jsonio_save(j->out, all, &err) != MP_OK) return 12;
  cJSON_Delete(all);
  sim_free(s);
  chip_free(c);
  return 0;
}

/* Runs job j (its out set here) in a fresh child; returns the array of result objects (owned) or NULL. */
static cJSON *eval_job(child_job *j) {
  static int seq;
  char name[64];
  snprintf(name, sizeof name, "results%d.json", seq++);
  j->out = testutil_temp_path(name);
  int rc = testutil_in_child(child_eval, j);
  CU_ASSERT_EQUAL(rc, 0);
  if (rc != 0) return NULL;
  cJSON *root = NULL;
  mp_error err;
  if (jsonio_load(j->out, &root, &err) != MP_OK) return NULL;
  return root;
}

/* Runs the cases in a fresh child; returns the array of result objects (owned) or NULL. */
static cJSON *eval_cases_opt(const char *chip_json, const sim_case *cases, int n, int cache, int fast_gather,
                             int isolate) {
  child_job j = {chip_json, cases, n, cache, NULL, fast_gather, isolate, 0};
  return eval_job(&j);
}

static cJSON *eval_cases_with(const char *chip_json, const sim_case *cases, int n, int cache, int fast_gather) {
  return eval_cases_opt(chip_json, cases, n, cache, fast_gather, 0);
}

static cJSON *eval_cases(const char *chip_json, const sim_case *cases, int n, int cache) {
  return eval_cases_opt(chip_json, cases, n, cache, 0, 0);
}

static double num(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const cJSON *stage(const cJSON *res, int i) {
  return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(res, "stages"), i);
}

static int close_rel(double a, double b, double tol) { return fabs(a - b) <= tol * fmax(fabs(a), fabs(b)); }

#define ASSERT_REL(a, b)                                                                                               \
  do {                                                                                                                 \
    double a_ = (a), b_ = (b);                                                                                         \
    if (!close_rel(a_, b_, 1e-9)) fprintf(stderr, "\n  %s = %.17g but %s = %.17g\n", #a, a_, #b, b_);                  \
    CU_ASSERT(close_rel(a_, b_, 1e-9));                                                                                \
  } while (0)

/* ---- a chain on a line of cores: the closed form ------------------------------------------------ */

/* x -> L0 -> L1 -> L2 -> L3: flops and output bytes chosen so that stages and transfers differ. */
static const double chain_flops[4] = {3e6, 7e6, 2e6, 5e6};
static const double chain_bytes[4] = {40000, 10000, 90000, 16};
static const char chain_graph[] =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"chain\",\"inputs\":[{\"name\":\"x\",\"bytes\":64}],"
    "\"ops\":["
    "{\"name\":\"L0\",\"type\":\"Conv\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"t0\",\"bytes\":40000}],"
    "\"macs\":1500000,\"flops\":3000000,\"weight_bytes\":1000},"
    "{\"name\":\"L1\",\"type\":\"Conv\",\"inputs\":[\"t0\"],\"outputs\":[{\"name\":\"t1\",\"bytes\":10000}],"
    "\"macs\":3500000,\"flops\":7000000,\"weight_bytes\":2000},"
    "{\"name\":\"L2\",\"type\":\"Conv\",\"inputs\":[\"t1\"],\"outputs\":[{\"name\":\"t2\",\"bytes\":90000}],"
    "\"macs\":1000000,\"flops\":2000000,\"weight_bytes\":3000},"
    "{\"name\":\"L3\",\"type\":\"Gemm\",\"inputs\":[\"t2\"],\"outputs\":[{\"name\":\"y\",\"bytes\":16}],"
    "\"macs\":2500000,\"flops\":5000000,\"weight_bytes\":4000}]}";

/* 1x4 line: every transfer between consecutive cores uses its own link. */
static const char line4_chip[] =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"line4\",\"mesh\":{\"width\":4,\"height\":1},"
    "\"core\":{\"flops\":1e12,\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":1e10,\"latency\":5e-9}}";

static void sim_chain_makespan_should_match_the_closed_form(void) {
  sim_case cs[3] = {
      {chain_graph, {1, 1, 1, 1}, 4, 8}, {chain_graph, {1, 1, 1, 1}, 4, 1}, {chain_graph, {1, 1, 1, 1}, 4, 3}};
  cJSON *res = eval_cases(line4_chip, cs, 3, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(res);
  /* stages: compute of each layer on one core, then a one-hop transfer of its output (none after L3) */
  double t[7], sum = 0, mx = 0;
  int n = 0;
  for (int i = 0; i < 4; i++) {
    t[n++] = chain_flops[i] / 1e12;
    if (i < 3) t[n++] = chain_bytes[i] / 1e10 + 5e-9;
  }
  for (int i = 0; i < n; i++) {
    sum += t[i];
    if (t[i] > mx) mx = t[i];
  }
  for (int k = 0; k < 3; k++) {
    const cJSON *r = cJSON_GetArrayItem(res, k);
    int M = cs[k].M;
    ASSERT_REL(num(r, "makespan_s"), sum + (M - 1) * mx);
    ASSERT_REL(num(r, "latency_s"), sum);
    if (M > 1) {
      ASSERT_REL(num(r, "period_s"), mx);
      ASSERT_REL(num(r, "samples_per_s"), 1 / mx);
    }
    for (int i = 0; i < 4; i++) { /* per micro-batch */
      ASSERT_REL(num(stage(r, i), "compute_s"), chain_flops[i] / 1e12);
      if (i < 3) ASSERT_REL(num(stage(r, i), "comm_s"), chain_bytes[i] / 1e10 + 5e-9);
    }
    CU_ASSERT_EQUAL((int)num(r, "bottleneck_stage"), 2); /* its 90000-byte send, 9.005 us, is the slowest */
  }
  cJSON_Delete(res);
}

/* 2x4 mesh, no latency, core 5 twice as fast and core 3 a host-attached device (gamma 2):
 * multi-core groups gather, and the period equals the analytical bottleneck computed here. */
static const char mesh24_chip[] =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"mesh2x4\",\"mesh\":{\"width\":4,\"height\":2},"
    "\"core\":{\"flops\":1e12,\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":1e10,\"latency\":0},"
    "\"overrides\":[{\"core\":5,\"flops\":2e12},{\"core\":3,\"transfer_factor\":2.0}]}";

static void sim_period_should_equal_the_analytical_bottleneck_without_latency(void) {
  /* plans: stages (layers / cores) = (1/2, 1/1, 1/3, 1/2) and (2/3, 2/5) */
  sim_case cs[2] = {{chain_graph, {0, 1, 1, 0, 0, 1, 0, 1}, 8, 8}, {chain_graph, {0, 0, 2, 0, 0, 0, 0, 2}, 8, 6}};
  for (int fast = 0; fast <= 1; fast++) { /* both all-gather models give the model's time here */
    cJSON *res = eval_cases_with(mesh24_chip, cs, 2, 0, fast);
    CU_ASSERT_PTR_NOT_NULL_FATAL(res);
    static const double speed[8] = {1e12, 1e12, 1e12, 1e12, 1e12, 2e12, 1e12, 1e12};
    static const double gamma[8] = {1, 1, 1, 2, 1, 1, 1, 1};
    for (int k = 0; k < 2; k++) {
      const cJSON *r = cJSON_GetArrayItem(res, k);
      /* the analytical model, from the formula: stage = (first layer, layers, first core, cores) */
      int st[4][4], ns = 0, core = 0, layer = 0;
      for (int i = 0; i < 8; i++)
        if (cs[k].arranged[i] > 0) {
          st[ns][0] = layer;
          st[ns][1] = cs[k].arranged[i];
          st[ns][2] = core;
          st[ns][3] = i - core + 1;
          layer += cs[k].arranged[i];
          core = i + 1;
          ns++;
        }
      double bottleneck = 0;
      for (int i = 0; i < ns; i++) {
        double F = 0, A = 0, X = 0, S = 0, g = 1;
        for (int l = st[i][0]; l < st[i][0] + st[i][1]; l++) {
          F += chain_flops[l];
          A += chain_bytes[l];
        }
        int last = st[i][0] + st[i][1] - 1;
        if (last < 3) X = chain_bytes[last]; /* a chain: only the last layer's output leaves */
        for (int q = st[i][2]; q < st[i][2] + st[i][3]; q++) {
          S += speed[q];
          if (gamma[q] > g) g = gamma[q];
        }
        int c = st[i][3];
        double compute = F / S + (double)(c - 1) / c * A / 1e10, send = g * X / 1e10;
        double ti = compute > send ? compute : send;
        if (ti > bottleneck) bottleneck = ti;
        ASSERT_REL(num(stage(r, i), "compute_s"), compute);
        if (X > 0) ASSERT_REL(num(stage(r, i), "comm_s"), send);
        ASSERT_REL(num(stage(r, i), "analytical_t_s"), ti);
      }
      ASSERT_REL(num(r, "period_s"), bottleneck);
      ASSERT_REL(num(r, "model_period_s"), bottleneck);
    }
    cJSON_Delete(res);
  }
}

/* The chain with its products (dims), on a line of 4 cores with a 16 x 16 MAC array at 1 GHz. */
static const char chain_dims_graph[] =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"chain\",\"inputs\":[{\"name\":\"x\",\"bytes\":64}],"
    "\"ops\":["
    "{\"name\":\"L0\",\"type\":\"Conv\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"t0\",\"bytes\":40000}],"
    "\"macs\":1500000,\"flops\":3000000,\"weight_bytes\":1000,\"dims\":{\"g\":1,\"m\":100,\"n\":50,\"k\":300}},"
    "{\"name\":\"L1\",\"type\":\"Conv\",\"inputs\":[\"t0\"],\"outputs\":[{\"name\":\"t1\",\"bytes\":10000}],"
    "\"macs\":3500000,\"flops\":7000000,\"weight_bytes\":2000,\"dims\":{\"g\":1,\"m\":100,\"n\":70,\"k\":500}},"
    "{\"name\":\"L2\",\"type\":\"Conv\",\"inputs\":[\"t1\"],\"outputs\":[{\"name\":\"t2\",\"bytes\":90000}],"
    "\"macs\":1000000,\"flops\":2000000,\"weight_bytes\":3000,\"dims\":{\"g\":1,\"m\":100,\"n\":100,\"k\":100}},"
    "{\"name\":\"L3\",\"type\":\"Gemm\",\"inputs\":[\"t2\"],\"outputs\":[{\"name\":\"y\",\"bytes\":16}],"
    "\"macs\":2500000,\"flops\":5000000,\"weight_bytes\":4000,\"dims\":{\"g\":1,\"m\":50,\"n\":100,\"k\":500}}]}";
static const char line4_array_chip[] =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"line4a\",\"mesh\":{\"width\":4,\"height\":1},"
    "\"core\":{\"sram_bytes\":1048576,\"clock_hz\":1e9,\"matrix\":{\"rows\":16,\"cols\":16}},"
    "\"noc\":{\"bandwidth\":1e10,\"latency\":0}}";

/* Layers 0-1 on cores 0-1, layer 2 on core 2, layer 3 on core 3.  Array cycles by hand (tiles of the
 * reduction k and the outputs n, rows m streamed, the tiles' columns and the rows split over the cores):
 * L0 on 2 cores ceil(300/16) = 19 x (4 column tiles x 100 rows) / 2 = 3800; L1 32 x 5 x 50 = 8000 (5
 * tiles by 50 rows each beats 3 tiles by 100); L2 on one 7 x 7 x 100 = 4900; L3 32 x 7 x 50 = 11200.
 * Stage 0: 11.8 us + (1/2) 50000 B / 10 GB/s = 14.3 us, the bottleneck; stage 2 11.2 us.  The simulator
 * runs that work, so its steady period is the model's. */
static void sim_period_should_equal_the_core_model_bottleneck_by_hand(void) {
  sim_case cs[1] = {{chain_dims_graph, {0, 2, 1, 1}, 4, 0}};
  cJSON *res = eval_cases(line4_array_chip, cs, 1, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(res);
  const cJSON *r = cJSON_GetArrayItem(res, 0);
  ASSERT_REL(num(stage(r, 0), "compute_s"), 11.8e-6 + 2.5e-6);
  ASSERT_REL(num(stage(r, 1), "compute_s"), 4.9e-6);
  ASSERT_REL(num(stage(r, 2), "compute_s"), 11.2e-6);
  ASSERT_REL(num(r, "period_s"), 14.3e-6);
  ASSERT_REL(num(r, "model_period_s"), 14.3e-6);
  cJSON_Delete(res);
}

/* ---- energy ------------------------------------------------------------------------------------- */

/* Two stages on a line of 4 cores with energy figures: L0 (1e6 MACs, 1000 other flops) on cores 0-1,
 * L1 (2e6 MACs) on cores 2-3, whose 1016 B of SRAM hold 500 B less than their share (1500 B of weights
 * + 16 B), so each reads 500 B from the port at core 3 every micro-batch.  By hand, in pJ:
 *   stage 0  compute 1e6 x 0.5 + 1000 x 0.25 = 500,250; SRAM (64 + 1000 + 40,000) x 0.125 = 5,133;
 *            NoC (all-gather (2-1) x 40,000 + Send 40,000 x 1 hop) x 2 = 160,000
 *   stage 1  compute 2e6 x 0.5 = 1,000,000; SRAM (40,000 + 3,000 + 16) x 0.125 = 5,377; NoC (all-gather
 *            16 + DRAM 500 x 1 hop for core 2, 0 for core 3) x 2 = 1,032; DRAM 1,000 x 16 = 16,000
 *   static   0.01 W x 4 cores x 4 us (the period: stage 0's Send, 40,000 B at 10 GB/s) = 160,000
 * 1,847,792 pJ per sample; 0.461948 W; (2,001,000 + 4,000,000) flops / 1.847792e-6 J = 3.24765 TOPS/W. */
static const char energy_graph[] =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"e\",\"inputs\":[{\"name\":\"x\",\"bytes\":64}],"
    "\"ops\":["
    "{\"name\":\"L0\",\"type\":\"Conv\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"t0\",\"bytes\":40000}],"
    "\"macs\":1000000,\"flops\":2001000,\"weight_bytes\":1000},"
    "{\"name\":\"L1\",\"type\":\"Gemm\",\"inputs\":[\"t0\"],\"outputs\":[{\"name\":\"y\",\"bytes\":16}],"
    "\"macs\":2000000,\"flops\":4000000,\"weight_bytes\":3000}]}";
#define LINE4E_CHIP                                                                                                    \
  "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"line4e\",\"mesh\":{\"width\":4,\"height\":1},"               \
  "\"core\":{\"flops\":1e12,\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":1e10,\"latency\":0},"                       \
  "\"dram\":{\"bandwidth\":1e10,\"ports\":[[3,0]]},"                                                                   \
  "\"overrides\":[{\"core\":2,\"sram_bytes\":1016},{\"core\":3,\"sram_bytes\":1016}]"
static const char energy_free_chip[] = LINE4E_CHIP "}";
static const char energy_chip[] =
    LINE4E_CHIP ","
    "\"energy\":{\"mac_pj\":0.5,\"vector_op_pj\":0.25,\"sram_pj_per_byte\":0.125,\"noc_pj_per_byte_hop\":2,"
    "\"dram_pj_per_byte\":16,\"static_w_per_core\":0.01}}";

static void energy_per_sample_should_equal_the_hand_sum_on_a_two_stage_chain(void) {
  sim_case cs[1] = {{energy_graph, {0, 1, 0, 1}, 4, 0}};
  cJSON *res = eval_cases(energy_chip, cs, 1, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(res);
  const cJSON *r = cJSON_GetArrayItem(res, 0), *e = cJSON_GetObjectItem(r, "energy");
  ASSERT_REL(num(r, "period_s"), 4e-6);
  ASSERT_REL(num(r, "energy_j_per_sample"), 1847792e-12);
  ASSERT_REL(num(r, "power_w"), 1847792e-12 / 4e-6);
  ASSERT_REL(num(r, "samples_per_j"), 1 / 1847792e-12);
  ASSERT_REL(num(r, "tops_per_w"), 6001000 / 1847792e-12 / 1e12);
  ASSERT_REL(num(e, "compute_j"), 1500250e-12);
  ASSERT_REL(num(e, "sram_j"), 10510e-12);
  ASSERT_REL(num(e, "noc_j"), 161032e-12);
  ASSERT_REL(num(e, "dram_j"), 16000e-12);
  ASSERT_REL(num(e, "static_j"), 160000e-12);
  ASSERT_REL(num(stage(r, 0), "energy_j"), (500250 + 5133 + 160000 + 80000) * 1e-12);
  ASSERT_REL(num(stage(r, 1), "energy_j"), (1000000 + 5377 + 1032 + 16000 + 80000) * 1e-12);
  /* the analytical model spends the same */
  graph *g = NULL;
  chip *c = NULL;
  plan *p = NULL;
  cost_result *m = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(load_graph(energy_graph, &g, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(load_chip(energy_chip, &c, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(plan_new(cs[0].arranged, 4, 2, &p, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(cost_evaluate(g, c, p, &m, &err), MP_OK);
  ASSERT_REL(m->energy.j_per_sample, 1847792e-12);
  ASSERT_REL(m->stages[1].energy_j, (1000000 + 5377 + 1032 + 16000 + 80000) * 1e-12);
  cost_result_free(m);
  plan_free(p);
  chip_free(c);
  graph_free(g);
  cJSON_Delete(res);
}

static void a_chip_without_energy_figures_should_report_no_energy(void) {
  sim_case cs[1] = {{energy_graph, {0, 1, 0, 1}, 4, 0}};
  cJSON *res = eval_cases(energy_free_chip, cs, 1, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(res);
  const cJSON *r = cJSON_GetArrayItem(res, 0);
  ASSERT_REL(num(r, "period_s"), 4e-6); /* the same run */
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(r, "energy"));
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(r, "energy_j_per_sample"));
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(stage(r, 0), "energy_j"));
  cJSON_Delete(res);
}

/* ---- contention and latency -------------------------------------------------------------------- */

/* L0 and L1 both read x and finish together; L2 reads t0 (and t1 in the shared variant), so the
 * transfers 0->2 and 1->2 on a 1x3 line share the link x1y0>x2y0. */
static const char shared_graph[] =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"shared\",\"inputs\":[{\"name\":\"x\",\"bytes\":8}],"
    "\"ops\":["
    "{\"name\":\"L0\",\"type\":\"Conv\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"t0\",\"bytes\":1000000}],"
    "\"macs\":500000,\"flops\":1000000,\"weight_bytes\":0},"
    "{\"name\":\"L1\",\"type\":\"Conv\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"t1\",\"bytes\":1000000}],"
    "\"macs\":500000,\"flops\":1000000,\"weight_bytes\":0},"
    "{\"name\":\"L2\",\"type\":\"Add\",\"inputs\":[\"t0\",\"t1\"],\"outputs\":[{\"name\":\"y\",\"bytes\":8}],"
    "\"macs\":0,\"flops\":1000000,\"weight_bytes\":0}]}";
static const char alone_graph[] =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"alone\",\"inputs\":[{\"name\":\"x\",\"bytes\":8}],"
    "\"ops\":["
    "{\"name\":\"L0\",\"type\":\"Conv\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"t0\",\"bytes\":1000000}],"
    "\"macs\":500000,\"flops\":1000000,\"weight_bytes\":0},"
    "{\"name\":\"L1\",\"type\":\"Conv\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"t1\",\"bytes\":1000000}],"
    "\"macs\":500000,\"flops\":1000000,\"weight_bytes\":0},"
    "{\"name\":\"L2\",\"type\":\"Add\",\"inputs\":[\"t0\"],\"outputs\":[{\"name\":\"y\",\"bytes\":8}],"
    "\"macs\":0,\"flops\":1000000,\"weight_bytes\":0}]}";
static const char line3_chip[] =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"line3\",\"mesh\":{\"width\":3,\"height\":1},"
    "\"core\":{\"flops\":1e12,\"sram_bytes\":4194304},\"noc\":{\"bandwidth\":1e10,\"latency\":0}}";

static void sim_two_transfers_on_one_link_should_take_twice_as_long(void) {
  sim_case cs[2] = {{alone_graph, {1, 1, 1}, 3, 1}, {shared_graph, {1, 1, 1}, 3, 1}};
  cJSON *res = eval_cases(line3_chip, cs, 2, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(res);
  const cJSON *alone = cJSON_GetArrayItem(res, 0), *shared = cJSON_GetArrayItem(res, 1);
  ASSERT_REL(num(stage(alone, 0), "comm_s"), 1e6 / 1e10);
  ASSERT_REL(num(stage(shared, 0), "comm_s"), 2 * num(stage(alone, 0), "comm_s"));
  ASSERT_REL(num(stage(shared, 1), "comm_s"), 2 * num(stage(alone, 0), "comm_s"));
  /* the shared link carried both tensors and is the busiest */
  const cJSON *l0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(shared, "links"), 0);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(l0, "link")->valuestring, "x1y0>x2y0");
  CU_ASSERT_EQUAL(num(l0, "bytes"), 2e6);
  cJSON_Delete(res);
}

/* t travels from core 0 (group 0) to the first core of group 2 over h hops; group 1 computes for a
 * millisecond so that nothing else is on the links meanwhile. */
static const char hops_graph[] =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"hops\",\"inputs\":[{\"name\":\"x\",\"bytes\":8}],"
    "\"ops\":["
    "{\"name\":\"L0\",\"type\":\"Conv\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"t\",\"bytes\":10000}],"
    "\"macs\":500000,\"flops\":1000000,\"weight_bytes\":0},"
    "{\"name\":\"L1\",\"type\":\"Conv\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"u\",\"bytes\":8}],"
    "\"macs\":500000000,\"flops\":1000000000,\"weight_bytes\":0},"
    "{\"name\":\"L2\",\"type\":\"Add\",\"inputs\":[\"t\",\"u\"],\"outputs\":[{\"name\":\"y\",\"bytes\":8}],"
    "\"macs\":0,\"flops\":1000000,\"weight_bytes\":0}]}";
static const char line6_chip[] =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"line6\",\"mesh\":{\"width\":6,\"height\":1},"
    "\"core\":{\"flops\":1e12,\"sram_bytes\":4194304},\"noc\":{\"bandwidth\":1e10,\"latency\":1e-8}}";

static void sim_transfer_time_should_grow_by_the_hop_latency(void) {
  sim_case cs[4];
  for (int h = 2; h <= 5; h++) { /* group 0 = core 0, group 1 = cores 1..h-1, group 2 = cores h..5 */
    sim_case *c = &cs[h - 2];
    memset(c, 0, sizeof *c);
    c->graph = hops_graph;
    c->n_cores = 6;
    c->M = 1;
    c->arranged[0] = 1;
    c->arranged[h - 1] = 1;
    c->arranged[5] = 1;
  }
  cJSON *res = eval_cases(line6_chip, cs, 4, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(res);
  for (int h = 2; h <= 5; h++) {
    double t = num(stage(cJSON_GetArrayItem(res, h - 2), 0), "comm_s");
    ASSERT_REL(t, 1e4 / 1e10 + h * 1e-8);
    if (h > 2) {
      double prev = num(stage(cJSON_GetArrayItem(res, h - 3), 0), "comm_s");
      CU_ASSERT(fabs((t - prev) - 1e-8) < 1e-18);
    }
  }
  cJSON_Delete(res);
}

/* ---- the ready queue ----------------------------------------------------------------------------- */

/* Group 1 (core 1) holds L1 (reads t, 100 us in transit), L2 (reads only the graph input, 50 us)
 * and L3 (reads both).  Its ready queue runs L2 while t travels: L2 0-50 us, t arrives at
 * 1 + 100 = 101 us, L1 101-102, L3 102-103 us.  In layer order it would take 153 us. */
static const char ready_graph[] =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"ready\",\"inputs\":[{\"name\":\"x\",\"bytes\":8}],"
    "\"ops\":["
    "{\"name\":\"L0\",\"type\":\"Conv\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"t\",\"bytes\":1000000}],"
    "\"macs\":500000,\"flops\":1000000,\"weight_bytes\":0},"
    "{\"name\":\"L1\",\"type\":\"Conv\",\"inputs\":[\"t\"],\"outputs\":[{\"name\":\"a\",\"bytes\":8}],"
    "\"macs\":500000,\"flops\":1000000,\"weight_bytes\":0},"
    "{\"name\":\"L2\",\"type\":\"Conv\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"b\",\"bytes\":8}],"
    "\"macs\":25000000,\"flops\":50000000,\"weight_bytes\":0},"
    "{\"name\":\"L3\",\"type\":\"Add\",\"inputs\":[\"a\",\"b\"],\"outputs\":[{\"name\":\"y\",\"bytes\":8}],"
    "\"macs\":0,\"flops\":1000000,\"weight_bytes\":0}]}";
static const char line2_chip[] =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"line2\",\"mesh\":{\"width\":2,\"height\":1},"
    "\"core\":{\"flops\":1e12,\"sram_bytes\":4194304},\"noc\":{\"bandwidth\":1e10,\"latency\":0}}";

static void sim_ready_queue_should_run_independent_layers_while_a_tensor_travels(void) {
  sim_case cs[1] = {{ready_graph, {1, 3}, 2, 1}};
  cJSON *res = eval_cases(line2_chip, cs, 1, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(res);
  const cJSON *r = cJSON_GetArrayItem(res, 0);
  ASSERT_REL(num(r, "makespan_s"), 103e-6);
  ASSERT_REL(num(stage(r, 1), "compute_s"), 52e-6);
  ASSERT_REL(num(stage(r, 0), "comm_s"), 100e-6);
  cJSON_Delete(res);
}

/* ---- speed scaling ----------------------------------------------------------------------------- */

static const char big_chain[] =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"big\",\"inputs\":[{\"name\":\"x\",\"bytes\":64}],"
    "\"ops\":["
    "{\"name\":\"L0\",\"type\":\"Conv\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"t0\",\"bytes\":1000}],"
    "\"macs\":1000000000,\"flops\":2000000000,\"weight_bytes\":0},"
    "{\"name\":\"L1\",\"type\":\"Conv\",\"inputs\":[\"t0\"],\"outputs\":[{\"name\":\"t1\",\"bytes\":1000}],"
    "\"macs\":3000000000,\"flops\":6000000000,\"weight_bytes\":0},"
    "{\"name\":\"L2\",\"type\":\"Conv\",\"inputs\":[\"t1\"],\"outputs\":[{\"name\":\"t2\",\"bytes\":1000}],"
    "\"macs\":2000000000,\"flops\":4000000000,\"weight_bytes\":0},"
    "{\"name\":\"L3\",\"type\":\"Gemm\",\"inputs\":[\"t2\"],\"outputs\":[{\"name\":\"y\",\"bytes\":16}],"
    "\"macs\":500000000,\"flops\":1000000000,\"weight_bytes\":0}]}";
static const char line4_fast_chip[] =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"line4fast\",\"mesh\":{\"width\":4,\"height\":1},"
    "\"core\":{\"flops\":2e12,\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":1e10,\"latency\":5e-9}}";

static void sim_doubling_core_speed_should_double_compute_bound_throughput(void) {
  sim_case cs[1] = {{big_chain, {1, 1, 1, 1}, 4, 8}};
  cJSON *slow = eval_cases(line4_chip, cs, 1, 0), *fast = eval_cases(line4_fast_chip, cs, 1, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(slow);
  CU_ASSERT_PTR_NOT_NULL_FATAL(fast);
  double ts = num(cJSON_GetArrayItem(slow, 0), "samples_per_s"),
         tf = num(cJSON_GetArrayItem(fast, 0), "samples_per_s");
  ASSERT_REL(tf, 2 * ts);
  ASSERT_REL(ts, 1e12 / 6e9);
  cJSON_Delete(slow);
  cJSON_Delete(fast);
}

/* ---- determinism ------------------------------------------------------------------------------- */

static char *print_result(const cJSON *r) {
  cJSON *copy = cJSON_Duplicate(r, 1);
  cJSON_DeleteItemFromObjectCaseSensitive(copy, "cached");
  char *s = cJSON_PrintUnformatted(copy);
  cJSON_Delete(copy);
  return s;
}

static void sim_same_plan_should_give_the_same_result_in_one_process_and_across_processes(void) {
  /* the plan, then 30 others on the 2x4 mesh, then the plan again */
  sim_case cs[32];
  memset(cs, 0, sizeof cs);
  int probe[8] = {0, 1, 1, 0, 0, 1, 0, 1};
  for (int i = 0; i < 32; i++) {
    cs[i].graph = chain_graph;
    cs[i].n_cores = 8;
    cs[i].M = 8;
    memcpy(cs[i].arranged, probe, sizeof probe);
    if (i > 0 && i < 31) { /* another split of the 4 layers over 8 cores */
      memset(cs[i].arranged, 0, sizeof probe);
      int a = 1 + i % 7, b = 1 + (i / 7) % 3;
      cs[i].arranged[a - 1] = b;
      cs[i].arranged[7] = 4 - b;
      cs[i].M = 1 + i % 8;
    }
  }
  cJSON *one = eval_cases(mesh24_chip, cs, 32, 0);
  cJSON *cached = eval_cases(mesh24_chip, cs, 32, 1);
  cJSON *fresh = eval_cases(mesh24_chip, cs, 1, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(one);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cached);
  CU_ASSERT_PTR_NOT_NULL_FATAL(fresh);
  char *a = print_result(cJSON_GetArrayItem(one, 0)), *b = print_result(cJSON_GetArrayItem(one, 31));
  char *c = print_result(cJSON_GetArrayItem(fresh, 0)), *d = print_result(cJSON_GetArrayItem(cached, 31));
  CU_ASSERT_STRING_EQUAL(a, b);
  CU_ASSERT_STRING_EQUAL(a, c);
  CU_ASSERT_STRING_EQUAL(a, d);
  CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cached, 31), "cached")));
  CU_ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(one, 31), "cached")));
  free(a);
  free(b);
  free(c);
  free(d);
  cJSON_Delete(one);
  cJSON_Delete(cached);
  cJSON_Delete(fresh);
}

static void sim_isolated_evaluations_should_be_bit_identical_to_a_fresh_process(void) {
  /* the probe plan, 150 others on the 2x4 mesh (M up to 8), the probe again: isolated, the engine's
   * clock never moves, so the last evaluation is the first one bit for bit, and a fresh process's */
  enum { N = 152 };
  sim_case *cs = calloc(N, sizeof *cs);
  int probe[8] = {0, 1, 1, 0, 0, 1, 0, 1};
  for (int i = 0; i < N; i++) {
    cs[i].graph = chain_graph;
    cs[i].n_cores = 8;
    cs[i].M = 8;
    memcpy(cs[i].arranged, probe, sizeof probe);
    if (i > 0 && i < N - 1) {
      memset(cs[i].arranged, 0, sizeof probe);
      cs[i].arranged[i % 7] = 1 + i % 3;
      cs[i].arranged[7] = 4 - (1 + i % 3);
      cs[i].M = 1 + i % 8;
    }
  }
  cJSON *iso = eval_cases_opt(mesh24_chip, cs, N, 0, 0, 1);
  cJSON *fresh = eval_cases(mesh24_chip, cs, 1, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(iso);
  CU_ASSERT_PTR_NOT_NULL_FATAL(fresh);
  char *a = print_result(cJSON_GetArrayItem(iso, 0)), *b = print_result(cJSON_GetArrayItem(iso, N - 1));
  char *c = print_result(cJSON_GetArrayItem(fresh, 0));
  CU_ASSERT_STRING_EQUAL(a, b);
  CU_ASSERT_STRING_EQUAL(a, c);
  /* and every isolated evaluation starts from the clock of a fresh process */
  cJSON *one = eval_cases(mesh24_chip, cs + 77, 1, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(one);
  char *d = print_result(cJSON_GetArrayItem(iso, 77)), *e = print_result(cJSON_GetArrayItem(one, 0));
  CU_ASSERT_STRING_EQUAL(d, e);
  free(a);
  free(b);
  free(c);
  free(d);
  free(e);
  cJSON_Delete(iso);
  cJSON_Delete(fresh);
  cJSON_Delete(one);
  free(cs);
}

/* ---- DRAM streaming ------------------------------------------------------------------------------ */

static const char dram_chip[] =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"dram2\",\"mesh\":{\"width\":2,\"height\":1},"
    "\"core\":{\"flops\":1e12,\"sram_bytes\":2500},\"noc\":{\"bandwidth\":1e10,\"latency\":1e-9},"
    "\"dram\":{\"bandwidth\":1e9,\"ports\":[[0,0]]}}";
static const char dram_graph[] =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"heavy\",\"inputs\":[{\"name\":\"x\",\"bytes\":8}],"
    "\"ops\":[{\"name\":\"L0\",\"type\":\"Gemm\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"y\",\"bytes\":1000}],"
    "\"macs\":500000,\"flops\":1000000,\"weight_bytes\":4000}]}";

static void sim_weights_beyond_sram_should_stream_from_dram_and_flag_the_plan(void) {
  /* s = 4000 / 2 + 1000 = 3000 > 2500: each core streams 500 bytes per micro-batch, each core its own
   * transfer; the two share the port's 1 GB/s link (1000 bytes: 1 us).  The one to core 1 also crosses
   * one NoC hop (1 ns latency), during which core 0's has the port to itself, so the port stays busy
   * and both are done at 1 us (the model adds the hop: 1.001 us), before compute 1e6 / 2e12 = 0.5 us
   * and the gather of 1000 bytes over 2 cores (500 / 1e10 + 1e-9 = 51 ns). */
  sim_case cs[1] = {{dram_graph, {0, 1}, 2, 2}};
  cJSON *res = eval_cases(dram_chip, cs, 1, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(res);
  const cJSON *r = cJSON_GetArrayItem(res, 0);
  CU_ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r, "feasible")));
  CU_ASSERT_EQUAL(num(r, "dram_bytes"), 1000); /* per micro-batch */
  CU_ASSERT_EQUAL(num(stage(r, 0), "dram_bytes"), 1000);
  CU_ASSERT_EQUAL(num(stage(r, 0), "sram_bytes"), 3000);
  CU_ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(stage(r, 0), "fits")));
  ASSERT_REL(num(stage(r, 0), "dram_s"), 1e-6);
  ASSERT_REL(num(stage(r, 0), "compute_s"), 0.5e-6 + 51e-9);
  ASSERT_REL(num(r, "makespan_s"), 2 * (1e-6 + 0.5e-6 + 51e-9));
  ASSERT_REL(num(stage(r, 0), "analytical_t_s"), 1.001e-6 + 0.5e-6 + 51e-9);
  /* 1000 bytes each per micro-batch: the port's link, and x0y0>x1y0 (gather 500 + core 1's stream
   * 500), listed first as the lower link number */
  const cJSON *ls = cJSON_GetObjectItemCaseSensitive(r, "links");
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ls, 0), "link")->valuestring, "x0y0>x1y0");
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ls, 1), "link")->valuestring,
                         "dram0>x0y0");
  CU_ASSERT_EQUAL(num(cJSON_GetArrayItem(ls, 0), "bytes"), 1000);
  CU_ASSERT_EQUAL(num(cJSON_GetArrayItem(ls, 1), "bytes"), 1000);
  cJSON_Delete(res);
}

/* A 3x1 line with a DRAM port at (0,0): NoC links 1 GB/s, 1 ns per hop, cores of 3000 bytes.  One layer
 * of 4000 weight bytes and a 3000-byte output on all three cores (plan [0,0,1]): each core needs
 * 4000 / 3 + 3000 bytes, 1333.3 over, all of them weights (W / c >= the excess: nothing to write back).
 * Core 0 sits at the port and reads over the port's link alone; cores 1 and 2 read over x0y0>x1y0 too
 * (2666.7 bytes), core 2 one hop further; each core's transfer is its own.  With a 1 TB/s port the
 * first NoC link out of the port limits the streams, not the port (4000 bytes, 4 ns): that link is busy
 * from core 1's first hop (1 ns) to 1 ns + 2666.7 B / 1 GB/s; with a 1 GB/s port the port's link does,
 * busy from the start (core 0's transfer crosses nothing else) to 4000 B / 1 GB/s.  The model adds the
 * longest route's latency instead (2 ns) to the busiest link's time.  Compute: 1e6 / 3e12 plus the all-gather of 3000 bytes over
 * three cores, (2/3) 3000 / 1e9, plus its hop's 1 ns.  Nothing else moves: the period is compute + stream. */
static const char port_line_chip[] =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"line3p\",\"mesh\":{\"width\":3,\"height\":1},"
    "\"core\":{\"flops\":1e12,\"sram_bytes\":3000},\"noc\":{\"bandwidth\":1e9,\"latency\":1e-9},"
    "\"dram\":{\"bandwidth\":%s,\"ports\":[[0,0]]}}";
static const char heavy_graph[] =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"heavy2\",\"inputs\":[{\"name\":\"x\",\"bytes\":8}],"
    "\"ops\":[{\"name\":\"L0\",\"type\":\"Gemm\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"y\",\"bytes\":3000}],"
    "\"macs\":500000,\"flops\":1000000,\"weight_bytes\":4000}]}";

static void sim_a_dram_stream_should_be_limited_by_the_first_link_out_of_the_port(void) {
  char chips[2][512];
  snprintf(chips[0], sizeof chips[0], port_line_chip, "1e12");
  snprintf(chips[1], sizeof chips[1], port_line_chip, "1e9");
  sim_case cs[1] = {{heavy_graph, {0, 0, 1}, 3, 4}};
  const double e = 4000.0 / 3, streams[2] = {2 * e / 1e9 + 1e-9, 3 * e / 1e9};
  const double model[2] = {2 * e / 1e9 + 2e-9, 3 * e / 1e9 + 2e-9};
  const double compute = 1e6 / 3e12 + 2.0 / 3 * 3000 / 1e9 + 1e-9;
  for (int k = 0; k < 2; k++) {
    cJSON *res = eval_cases(chips[k], cs, 1, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(res);
    const cJSON *r = cJSON_GetArrayItem(res, 0);
    CU_ASSERT_EQUAL(num(stage(r, 0), "dram_bytes"), 4000);
    ASSERT_REL(num(stage(r, 0), "dram_s"), streams[k]);
    ASSERT_REL(num(stage(r, 0), "compute_s"), compute);
    ASSERT_REL(num(stage(r, 0), "analytical_t_s"), compute + model[k]);
    ASSERT_REL(num(r, "period_s"), compute + streams[k]);
    ASSERT_REL(num(r, "model_period_s"), compute + model[k]);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(r, "model_binding")->valuestring, "dram");
    cJSON_Delete(res);
  }
}

/* With sim_options.fast_streams the cores of one port read as one task, which starts moving after its
 * longest route's latency and then goes at its busiest link's pace: the model's stream time, where a
 * transfer per core (above) takes less.  The line's 1 TB/s port: 2 ns + 2666.7 B / 1 GB/s on the first
 * NoC link; its 1 GB/s port: 2 ns + 4000 B / 1 GB/s.  The two-core chip above: 1 ns + 1000 B / 1 GB/s. */
static void sim_fast_streams_should_take_the_models_stream_time(void) {
  char chips[2][512];
  snprintf(chips[0], sizeof chips[0], port_line_chip, "1e12");
  snprintf(chips[1], sizeof chips[1], port_line_chip, "1e9");
  sim_case line[1] = {{heavy_graph, {0, 0, 1}, 3, 4}}, pair[1] = {{dram_graph, {0, 1}, 2, 2}};
  const double e = 4000.0 / 3, model[2] = {2 * e / 1e9 + 2e-9, 3 * e / 1e9 + 2e-9};
  const double compute = 1e6 / 3e12 + 2.0 / 3 * 3000 / 1e9 + 1e-9;
  for (int k = 0; k < 2; k++) {
    child_job j = {chips[k], line, 1, 0, NULL, 0, 0, 1};
    cJSON *res = eval_job(&j);
    CU_ASSERT_PTR_NOT_NULL_FATAL(res);
    const cJSON *r = cJSON_GetArrayItem(res, 0);
    CU_ASSERT_EQUAL(num(stage(r, 0), "dram_bytes"), 4000);
    ASSERT_REL(num(stage(r, 0), "dram_s"), model[k]);
    ASSERT_REL(num(r, "period_s"), compute + model[k]);
    ASSERT_REL(num(r, "model_period_s"), compute + model[k]);
    cJSON_Delete(res);
  }
  child_job j = {dram_chip, pair, 1, 0, NULL, 0, 0, 1};
  cJSON *res = eval_job(&j);
  CU_ASSERT_PTR_NOT_NULL_FATAL(res);
  const cJSON *r = cJSON_GetArrayItem(res, 0);
  ASSERT_REL(num(stage(r, 0), "dram_s"), 1.001e-6);
  ASSERT_REL(num(r, "makespan_s"), 2 * (1.001e-6 + 0.5e-6 + 51e-9));
  cJSON_Delete(res);
}

/* Two cores in a row with a DRAM port of 1000 B/s at (0,0), NoC links of 1e6 B/s: a (5e8 flops) on core
 * 0 and b (2e9) on core 1, each reading 1100 B of its 2000 B of weights per micro-batch.  b is the
 * slower; a fills the window and then starts a micro-batch whenever b completes one, as b starts its
 * next, so their reads share the port (b's take over 2.1 s; 1.1 s alone) and the period is 4.2 s, as
 * the model's placement of the reads says ((1100 + 1100) / 1000 + 2 s: test_cost). */
static const char pair_port_chip[] =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"pair\",\"mesh\":{\"width\":2,\"height\":1},"
    "\"core\":{\"flops\":1e9,\"sram_bytes\":1000},\"noc\":{\"bandwidth\":1e6,\"latency\":0},"
    "\"dram\":{\"bandwidth\":1000,\"ports\":[[0,0]]}}";
static const char staggered_graph[] =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"t2\",\"inputs\":[{\"name\":\"in\",\"bytes\":100}],"
    "\"ops\":[{\"name\":\"a\",\"type\":\"X\",\"inputs\":[\"in\"],\"outputs\":[{\"name\":\"x\",\"bytes\":100}],"
    "\"macs\":0,\"flops\":500000000,\"weight_bytes\":2000},{\"name\":\"b\",\"type\":\"X\",\"inputs\":[\"x\"],"
    "\"outputs\":[{\"name\":\"y\",\"bytes\":100}],\"macs\":0,\"flops\":2000000000,\"weight_bytes\":2000}]}";

static void sim_reads_that_start_together_should_share_the_port(void) {
  sim_case cs[1] = {{staggered_graph, {1, 1}, 2, 0}};
  cJSON *res = eval_cases(pair_port_chip, cs, 1, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(res);
  const cJSON *r = cJSON_GetArrayItem(res, 0);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(r, "period_kind")->valuestring, "steady");
  ASSERT_REL(num(r, "period_s"), 4.2);
  CU_ASSERT(num(stage(r, 1), "dram_s") > 2.1); /* shared nearly throughout: 1.1 s alone */
  CU_ASSERT(fabs(num(r, "model_period_s") - 4.2) <= 1e-9 * 4.2);
  cJSON_Delete(res);
}

/* Bytes per micro-batch on the named link of a result, or -1 when it is not listed. */
static double link_bytes_of(const cJSON *r, const char *name) {
  const cJSON *l;
  cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(r, "links")) {
    if (strcmp(cJSON_GetObjectItemCaseSensitive(l, "link")->valuestring, name) == 0) return num(l, "bytes");
  }
  return -1;
}

/* The same line with a 1 GB/s port; the layer's 6000-byte output alone exceeds the 3000-byte cores.
 * Plan [1,0,1]: the layer on core 0 (at the port) needs 4000 + 6000 bytes, 7000 over: 4000 of weights
 * and 3000 of spilled activation are read before it (7 us over the port's down link), the 3000 written
 * back after it (3 us over its up link), no NoC hop.  An Add on cores 1-2 reads y (6000 bytes over
 * x0y0>x1y0: 6 us + 1 ns) and fits. */
static void sim_a_stage_whose_activation_overflows_should_spill_and_reload(void) {
  char chip_text[512];
  snprintf(chip_text, sizeof chip_text, port_line_chip, "1e9");
  static const char spill_graph[] =
      "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"spill\",\"inputs\":[{\"name\":\"x\",\"bytes\":8}],"
      "\"ops\":[{\"name\":\"L0\",\"type\":\"Gemm\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"y\",\"bytes\":6000}],"
      "\"macs\":500000,\"flops\":1000000,\"weight_bytes\":4000},"
      "{\"name\":\"L1\",\"type\":\"Add\",\"inputs\":[\"y\"],\"outputs\":[{\"name\":\"z\",\"bytes\":8}],"
      "\"macs\":0,\"flops\":1000,\"weight_bytes\":0}]}";
  sim_case cs[1] = {{spill_graph, {1, 0, 1}, 3, 4}};
  cJSON *res = eval_cases(chip_text, cs, 1, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(res);
  const cJSON *r = cJSON_GetArrayItem(res, 0);
  CU_ASSERT_EQUAL(num(stage(r, 0), "dram_bytes"), 7000 + 3000);
  ASSERT_REL(num(stage(r, 0), "dram_s"), 7e-6 + 3e-6);
  ASSERT_REL(num(stage(r, 0), "compute_s"), 1e6 / 1e12);
  ASSERT_REL(num(stage(r, 0), "comm_s"), 6e-6 + 1e-9);
  ASSERT_REL(num(stage(r, 0), "analytical_t_s"), 1e-6 + 10e-6);
  ASSERT_REL(num(r, "period_s"), 11e-6);
  CU_ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(stage(r, 0), "fits")));
  CU_ASSERT_EQUAL(num(stage(r, 1), "dram_bytes"), 0);
  CU_ASSERT_EQUAL(link_bytes_of(r, "dram0>x0y0"), 7000);
  CU_ASSERT_EQUAL(link_bytes_of(r, "x0y0>dram0"), 3000);
  CU_ASSERT_EQUAL(link_bytes_of(r, "x0y0>x1y0"), 6000);
  cJSON_Delete(res);
}

/* t made by L0 (core 0) is read by L1 (core 1) and L2 (core 2): two Send/Recv pairs, one per
 * destination group, one after the other from core 0: 10000 / 1e10 + 1 ns to core 1, then
 * 10000 / 1e10 + 2 ns to core 2 over x0y0>x1y0 and x1y0>x2y0, alone on the links (u stays on core 1). */
static const char fanout_graph[] =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"fanout\",\"inputs\":[{\"name\":\"x\",\"bytes\":8}],"
    "\"ops\":["
    "{\"name\":\"L0\",\"type\":\"Conv\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"t\",\"bytes\":10000}],"
    "\"macs\":500000,\"flops\":1000000,\"weight_bytes\":0},"
    "{\"name\":\"L1\",\"type\":\"Conv\",\"inputs\":[\"t\"],\"outputs\":[{\"name\":\"u\",\"bytes\":8}],"
    "\"macs\":500000,\"flops\":1000000,\"weight_bytes\":0},"
    "{\"name\":\"L2\",\"type\":\"Add\",\"inputs\":[\"t\"],\"outputs\":[{\"name\":\"y\",\"bytes\":8}],"
    "\"macs\":0,\"flops\":1000000,\"weight_bytes\":0}]}";
static const char line3lat_chip[] =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"line3l\",\"mesh\":{\"width\":3,\"height\":1},"
    "\"core\":{\"flops\":1e12,\"sram_bytes\":4194304},\"noc\":{\"bandwidth\":1e10,\"latency\":1e-9}}";

static void sim_a_tensor_read_by_two_later_groups_should_be_sent_twice(void) {
  sim_case cs[1] = {{fanout_graph, {1, 1, 1}, 3, 6}};
  cJSON *res = eval_cases(line3lat_chip, cs, 1, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(res);
  const cJSON *r = cJSON_GetArrayItem(res, 0);
  CU_ASSERT_EQUAL(num(stage(r, 0), "sends"), 2);
  CU_ASSERT_EQUAL(num(stage(r, 2), "recvs"), 1);
  double two = (1e4 / 1e10 + 1e-9) + (1e4 / 1e10 + 2e-9);
  ASSERT_REL(num(stage(r, 0), "comm_s"), two);
  ASSERT_REL(num(stage(r, 0), "analytical_t_s"), two); /* send-bound: 2.003 us against 1 us of compute */
  ASSERT_REL(num(r, "period_s"), two);
  ASSERT_REL(num(r, "model_period_s"), two);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(r, "model_binding")->valuestring, "send");
  cJSON_Delete(res);
}

/* ---- routes -------------------------------------------------------------------------------------- */

static int check_routes(void *arg) {
  const char *chip_json = arg;
  chip *c = NULL;
  sim *s = NULL;
  mp_error err;
  if (load_chip(chip_json, &c, &err) != MP_OK || sim_new(c, NULL, &s, &err) != MP_OK) return 10;
  char names[64][48];
  for (int a = 0; a < c->n_cores; a++)
    for (int b = 0; b < c->n_cores; b++) {
      if (a == b) continue;
      int n = sim_route_links(s, a, b, names, 64);
      /* the XY route, by hand: along x first, then along y */
      int x = c->cores[a].x, y = c->cores[a].y, tx = c->cores[b].x, ty = c->cores[b].y, k = 0;
      char want[64][48];
      while (x != tx) {
        int nx = x + (tx > x ? 1 : -1);
        snprintf(want[k++], 48, "x%dy%d>x%dy%d", x, y, nx, y);
        x = nx;
      }
      while (y != ty) {
        int ny = y + (ty > y ? 1 : -1);
        snprintf(want[k++], 48, "x%dy%d>x%dy%d", x, y, x, ny);
        y = ny;
      }
      if (n != k) {
        fprintf(stderr, "route %d->%d: %d links, want %d\n", a, b, n, k);
        return 1;
      }
      for (int i = 0; i < k; i++)
        if (strcmp(names[i], want[i]) != 0) {
          fprintf(stderr, "route %d->%d: link %d is %s, want %s\n", a, b, i, names[i], want[i]);
          return 2;
        }
    }
  if (sim_route_links(s, 0, 0, names, 64) != -1 || sim_route_links(s, 0, c->n_cores, names, 64) != -1) return 3;
  sim_free(s);
  chip_free(c);
  return 0;
}

static void sim_routes_should_be_exactly_the_xy_routes(void) {
  static const char *const chips[] = {
      "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"m33\",\"mesh\":{\"width\":3,\"height\":3},"
      "\"core\":{\"flops\":1e12,\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":1e10,\"latency\":1e-9},"
      "\"dram\":{\"bandwidth\":1e11,\"ports\":[[1,1]]}}",
      "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"m54\",\"mesh\":{\"width\":5,\"height\":4},"
      "\"core\":{\"flops\":1e12,\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":1e10,\"latency\":1e-9}}",
      "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"m27\",\"mesh\":{\"width\":2,\"height\":7},"
      "\"core\":{\"flops\":1e12,\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":1e10,\"latency\":1e-9}}",
  };
  for (int i = 0; i < 3; i++) CU_ASSERT_EQUAL(testutil_in_child(check_routes, (void *)chips[i]), 0);
}

/* ---- the two platforms: Full and DijkstraCache --------------------------------------------------- */

typedef struct routed_job {
  const char *chip_json; /* for dump_routes */
  const char *chip_path; /* for routed_figures, relative to the source tree */
  int routing;
  int full_gather;
  int rerun_private;
  int simgrid_waits;
  int steady; /* routed_figures: run to steady state instead of M = 4 */
  const char *out;
} routed_job;

/* Writes every core-to-core route (sim_route_links) of the chip, one line each, to j->out. */
static int dump_routes(void *arg) {
  const routed_job *j = arg;
  chip *c = NULL;
  sim *s = NULL;
  mp_error err;
  sim_options o;
  sim_options_init(&o);
  o.routing = j->routing;
  if (load_chip(j->chip_json, &c, &err) != MP_OK || sim_new(c, &o, &s, &err) != MP_OK) return 10;
  FILE *f = fopen(j->out, "w");
  if (!f) return 11;
  char names[64][48];
  for (int a = 0; a < c->n_cores; a++)
    for (int b = 0; b < c->n_cores; b++) {
      if (a == b) continue;
      int n = sim_route_links(s, a, b, names, 64);
      if (n < 1 || n > 64) return 12;
      fprintf(f, "%d %d:", a, b);
      for (int k = 0; k < n; k++) fprintf(f, " %s", names[k]);
      fputc('\n', f);
    }
  if (fclose(f) != 0) return 13;
  sim_free(s);
  chip_free(c);
  return 0;
}

static char *routes_with(const routed_job *j0, int routing) {
  static int seq;
  char name[64];
  snprintf(name, sizeof name, "routes%d.txt", seq++);
  routed_job j = *j0;
  j.routing = routing;
  j.out = keep(testutil_temp_path(name));
  CU_ASSERT_EQUAL(testutil_in_child(dump_routes, &j), 0);
  char *text = NULL;
  size_t n = 0;
  mp_error err;
  if (fileio_read_all(j.out, &text, &n, &err) != MP_OK) return NULL;
  return text;
}

static void sim_full_dijkstra_and_torus_platforms_should_route_alike(void) {
  /* a mesh with a DRAM port, and one above the Full limit (the automatic choice is the torus there) */
  routed_job small = {.chip_json = "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"m43\","
                                   "\"mesh\":{\"width\":4,\"height\":3},\"core\":{\"flops\":1e12,"
                                   "\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":1e10,\"latency\":1e-9},"
                                   "\"dram\":{\"bandwidth\":1e11,\"ports\":[[2,1]]}}"};
  routed_job big = {.chip_json = "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"m98\","
                                 "\"mesh\":{\"width\":9,\"height\":8},\"core\":{\"flops\":1e12,"
                                 "\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":1e10,\"latency\":1e-9}}"};
  CU_ASSERT_EQUAL(SIM_FULL_ROUTING_MAX_CORES < 72, 1);
  const routed_job *chips[2] = {&small, &big};
  for (int i = 0; i < 2; i++) {
    char *full = routes_with(chips[i], SIM_ROUTING_FULL), *dij = routes_with(chips[i], SIM_ROUTING_DIJKSTRA),
         *aut = routes_with(chips[i], SIM_ROUTING_AUTO), *many = routes_with(chips[i], SIM_ROUTING_MANY),
         *torus = routes_with(chips[i], SIM_ROUTING_TORUS);
    CU_ASSERT_PTR_NOT_NULL_FATAL(full);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dij);
    CU_ASSERT_PTR_NOT_NULL_FATAL(aut);
    CU_ASSERT_PTR_NOT_NULL_FATAL(many);
    CU_ASSERT_PTR_NOT_NULL_FATAL(torus);
    CU_ASSERT_STRING_EQUAL(full, dij);
    CU_ASSERT_STRING_EQUAL(full, aut);
    CU_ASSERT_STRING_EQUAL(full, many);
    CU_ASSERT_STRING_EQUAL(full, torus); /* never round the torus: it is twice the mesh in each direction */
    free(many);
    free(torus);
    CU_ASSERT_PTR_NOT_NULL(strstr(full, "\n0 2: x0y0>x1y0 x1y0>x2y0\n")); /* a route along a row, by hand */
    free(full);
    free(dij);
    free(aut);
  }
}

/* Evaluates 40 random ResNet-50 plans (1..12 stages, M = 4 or to steady state: most stream weights
 * from DRAM on this chip) with j's options and writes their JSON, one line each, to j->out. */
static int routed_figures(void *arg) {
  const routed_job *j = arg;
  graph *g = NULL;
  chip *c = NULL;
  sim *s = NULL;
  mp_error err;
  sim_options o;
  sim_options_init(&o);
  o.routing = j->routing;
  o.full_gather = j->full_gather;
  o.rerun_private = j->rerun_private;
  o.simgrid_waits = j->simgrid_waits;
  o.cache_size = 0;
  o.microbatches = j->steady ? 0 : 4;
  if (graph_load(testutil_src("traces/resnet50.json"), &g, &err) != MP_OK ||
      chip_load(testutil_src(j->chip_path), &c, &err) != MP_OK || sim_new(c, &o, &s, &err) != MP_OK)
    return 10;
  FILE *f = fopen(j->out, "w");
  if (!f) return 11;
  uint64_t x = 12345;
  for (int e = 0; e < 40; e++) {
    int k = 1 + e % 12, layers[12], cores[12], left_l = g->n_ops, left_c = c->n_cores;
    for (int i = 0; i < k; i++) { /* random positive counts that sum up */
      x = x * 6364136223846793005u + 1442695040888963407u;
      int rest = k - 1 - i;
      layers[i] = rest == 0 ? left_l : 1 + (int)((x >> 33) % (uint64_t)(left_l - rest));
      cores[i] = rest == 0 ? left_c : 1 + (int)((x >> 17) % (uint64_t)(left_c - rest > 4 ? 4 : left_c - rest));
      left_l -= layers[i];
      left_c -= cores[i];
    }
    plan *p = NULL;
    sim_result r;
    if (plan_from_stages(layers, cores, k, &p, &err) != MP_OK || sim_evaluate(s, g, p, &r, &err) != MP_OK) return 12;
    cJSON *o_r = sim_result_to_json(&r);
    char *text = o_r ? cJSON_PrintUnformatted(o_r) : NULL;
    if (!text) return 13;
    fprintf(f, "%s\n", text);
    cJSON_free(text);
    cJSON_Delete(o_r);
    sim_result_clear(&r);
    plan_free(p);
  }
  if (fclose(f) != 0) return 14;
  sim_free(s);
  chip_free(c);
  graph_free(g);
  return 0;
}

/* Runs routed_figures for j[0] and j[1], each in a fresh child, and reads what they wrote into text[0]
 * and text[1] (owned; NULL when unreadable). */
static void routed_pair(routed_job j[2], char *text[2]) {
  for (int i = 0; i < 2; i++) {
    text[i] = NULL;
    CU_ASSERT_EQUAL(testutil_in_child(routed_figures, &j[i]), 0);
    size_t n = 0;
    mp_error err;
    CU_ASSERT_EQUAL(fileio_read_all(j[i].out, &text[i], &n, &err), MP_OK);
  }
}

static void sim_full_and_dijkstra_platforms_should_give_identical_figures(void) {
  char *text[2];
  routed_job j[2] = {{.chip_path = "platforms/mesh4x4.json",
                      .routing = SIM_ROUTING_FULL,
                      .out = keep(testutil_temp_path("figures_full.jsonl"))},
                     {.chip_path = "platforms/mesh4x4.json",
                      .routing = SIM_ROUTING_DIJKSTRA,
                      .out = keep(testutil_temp_path("figures_dijkstra.jsonl"))}};
  routed_pair(j, text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text[0]);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text[1]);
  CU_ASSERT_PTR_NOT_NULL(strstr(text[0], "\"feasible\":false")); /* weights streamed from DRAM too */
  CU_ASSERT_STRING_EQUAL(text[0], text[1]); /* bit for bit, not only to 12 digits */
  free(text[0]);
  free(text[1]);
}

/* The Torus platform gives the Full platform's figures, bit for bit: the same links on every route, in
 * the same order, the ports' links through their zones' routes. */
static void sim_torus_platform_should_give_the_full_platforms_figures(void) {
  const char *chips[2] = {"platforms/mesh4x4.json", "platforms/mesh8x8.json"};
  for (int m = 0; m < 2; m++) {
    char *text[2];
    routed_job j[2] = {{.chip_path = chips[m],
                        .routing = SIM_ROUTING_FULL,
                        .steady = m,
                        .out = keep(testutil_temp_path("figures_full2.jsonl"))},
                       {.chip_path = chips[m],
                        .routing = SIM_ROUTING_TORUS,
                        .steady = m,
                        .out = keep(testutil_temp_path("figures_torus.jsonl"))}};
    routed_pair(j, text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text[0]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text[1]);
    CU_ASSERT_PTR_NOT_NULL(strstr(text[0], "\"feasible\":false"));
    CU_ASSERT_STRING_EQUAL(text[0], text[1]);
    free(text[0]);
    free(text[1]);
  }
}

/* Which platform a chip gets: Full up to the limits, the torus beyond when the cores have one speed and
 * no Paje trace names the links, Dijkstra otherwise. */
static void sim_platform_kind_should_follow_size_speeds_and_tracing(void) {
  const char *big = "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"m98\",\"mesh\":{\"width\":9,"
                    "\"height\":8},\"core\":{\"flops\":1e12,\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":1e10,"
                    "\"latency\":1e-9}}";
  const char *mixed = "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"m98h\",\"mesh\":{\"width\":9,"
                      "\"height\":8},\"core\":{\"flops\":1e12,\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":1e10,"
                      "\"latency\":1e-9},\"overrides\":[{\"core\":70,\"flops\":2e12}]}";
  chip *b = NULL, *h = NULL, *small = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(load_chip(big, &b, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(load_chip(mixed, &h, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(load_chip(line4_chip, &small, &err), MP_OK);
  CU_ASSERT_EQUAL(sim_platform_kind(small, SIM_ROUTING_AUTO, 0), SIM_PLATFORM_FULL);
  CU_ASSERT_EQUAL(sim_platform_kind(small, SIM_ROUTING_TORUS, 0), SIM_PLATFORM_TORUS);
  CU_ASSERT_EQUAL(sim_platform_kind(b, SIM_ROUTING_AUTO, 0), SIM_PLATFORM_TORUS);
  CU_ASSERT_EQUAL(sim_platform_kind(b, SIM_ROUTING_AUTO, 1), SIM_PLATFORM_DIJKSTRA);
  CU_ASSERT_EQUAL(sim_platform_kind(b, SIM_ROUTING_MANY, 0), SIM_PLATFORM_FULL);
  CU_ASSERT_EQUAL(sim_platform_kind(b, SIM_ROUTING_DIJKSTRA, 0), SIM_PLATFORM_DIJKSTRA);
  CU_ASSERT_EQUAL(sim_platform_kind(h, SIM_ROUTING_AUTO, 0), SIM_PLATFORM_DIJKSTRA);
  CU_ASSERT_EQUAL(sim_platform_torus_ok(h), 0);
  CU_ASSERT_EQUAL(sim_platform_torus_ok(b), 1);
  /* the torus's link names: its hosts are x + 2W y, UP from the lower id, DOWN back */
  char name[48];
  int k = sim_platform_torus_link(b, "mesh_link_from_19_to_37_DOWN"); /* x1y1 > x1y2 reversed: x1y2 > x1y1 */
  CU_ASSERT_FATAL(k >= 0);
  chip_link_name(b, k, name, sizeof name);
  CU_ASSERT_STRING_EQUAL(name, "x1y2>x1y1");
  k = sim_platform_torus_link(b, "mesh_link_from_19_to_20_UP");
  CU_ASSERT_FATAL(k >= 0);
  chip_link_name(b, k, name, sizeof name);
  CU_ASSERT_STRING_EQUAL(name, "x1y1>x2y1");
  CU_ASSERT_EQUAL(sim_platform_torus_link(b, "mesh_link_from_8_to_9_UP"), -1);     /* x8 > x9: off the mesh */
  CU_ASSERT_EQUAL(sim_platform_torus_link(b, "mesh_link_from_19_to_20_SIDE"), -1); /* neither UP nor DOWN */
  CU_ASSERT_EQUAL(sim_platform_torus_link(b, "mesh_link_from_19_to_20_UPx"), -1);
  CU_ASSERT_EQUAL(sim_platform_torus_link(b, "x1y1>x2y1"), -1);
  CU_ASSERT_EQUAL(sim_platform_torus_link(b, "mesh_link_from_19_to_21_UP"), -1); /* not neighbours */
  chip_free(b);
  chip_free(h);
  chip_free(small);
}

/* testutil_json_close over two texts of one JSON object per line, to 1e-9 relative or 1e-15 s absolute
 * (times that differ in the engine clock's last bits), but for the member `skip` (NULL: none). */
static int json_lines_close(const char *a, const char *b, const char *skip) {
  int lines = 0;
  for (;;) {
    const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
    if (!ea || !eb) return !ea && !eb && lines > 0;
    cJSON *x = cJSON_ParseWithLength(a, (size_t)(ea - a)), *y = cJSON_ParseWithLength(b, (size_t)(eb - b));
    if (skip && x && y) {
      cJSON_DeleteItemFromObject(x, skip);
      cJSON_DeleteItemFromObject(y, skip);
    }
    int same = x && y && testutil_json_close(x, y, 1e-9, 1e-15);
    cJSON_Delete(x);
    cJSON_Delete(y);
    if (!same) return 0;
    lines++;
    a = ea + 1;
    b = eb + 1;
  }
}

/* An all-gather's ptasks leave out the chain links that cannot bind (sim_int.h, "All-gathers"): 40
 * random ResNet-50 plans on 4x4 (DRAM streams, Sends across groups; one ptask per chain) give the figures
 * of every link, bit for bit, and on 8x8, whose last group's chain has several blocks of which only one
 * of the quiet ones runs, to the last digits. */
static void sim_all_gathers_without_the_links_that_cannot_bind_should_give_the_same_figures(void) {
  const char *chips[2] = {"platforms/mesh4x4.json", "platforms/mesh8x8.json"};
  for (int m = 0; m < 2; m++) {
    char *text[2];
    routed_job j[2] = {{.chip_path = chips[m], .out = keep(testutil_temp_path("gather_kept.jsonl"))},
                       {.chip_path = chips[m], .full_gather = 1, .out = keep(testutil_temp_path("gather_full.jsonl"))}};
    routed_pair(j, text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text[0]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text[1]);
    if (m == 0) {
      CU_ASSERT_PTR_NOT_NULL(strstr(text[0], "\"feasible\":false"));
      CU_ASSERT_STRING_EQUAL(text[0], text[1]);
    } else {
      CU_ASSERT_EQUAL(json_lines_close(text[0], text[1], NULL), 1);
    }
    free(text[0]);
    free(text[1]);
  }
}

/* The sum of the member `key` over a text of one JSON object per line. */
static double json_lines_sum(const char *a, const char *key) {
  double sum = 0;
  for (const char *e; (e = strchr(a, '\n')) != NULL; a = e + 1) {
    cJSON *x = cJSON_ParseWithLength(a, (size_t)(e - a));
    sum += cJSON_GetNumberValue(cJSON_GetObjectItem(x, key));
    cJSON_Delete(x);
  }
  return sum;
}

/* A transfer that nothing else can slow runs once and then takes the time it took (sim_int.h, "Private
 * transfers"): 40 random ResNet-50 plans on 4x4 (DRAM streams sharing both ports, Sends across groups)
 * and on 8x8 give the figures of running every transfer every time, with fewer activities. */
static void sim_private_transfers_run_once_should_give_the_figures_of_running_them_every_time(void) {
  const char *chips[2] = {"platforms/mesh4x4.json", "platforms/mesh8x8.json"};
  for (int m = 0; m < 2; m++) {
    char *text[2];
    routed_job j[2] = {{.chip_path = chips[m], .out = keep(testutil_temp_path("private_once.jsonl"))},
                       {.chip_path = chips[m],
                        .rerun_private = 1,
                        .out = keep(testutil_temp_path("private_all.jsonl"))}};
    routed_pair(j, text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text[0]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text[1]);
    CU_ASSERT_PTR_NOT_NULL(strstr(text[0], "\"feasible\":false"));
    CU_ASSERT_EQUAL(json_lines_close(text[0], text[1], "activities"), 1);
    double once = json_lines_sum(text[0], "activities"), every = json_lines_sum(text[1], "activities");
    CU_ASSERT(once < 0.95 * every);
    free(text[0]);
    free(text[1]);
  }
}

/* Executions and private transfers' replays wait on one timer actor (sim_int.h, "Timer"): 40 random
 * ResNet-50 plans on 4x4 (M = 4) and on 8x8 (to steady state) give the figures of SimGrid's own
 * executions and sleeps, with as many activities. */
static void sim_waits_on_the_timer_should_give_the_figures_of_simgrids_own_waits(void) {
  const char *chips[2] = {"platforms/mesh4x4.json", "platforms/mesh8x8.json"};
  for (int m = 0; m < 2; m++) {
    char *text[2];
    routed_job j[2] = {{.chip_path = chips[m], .steady = m, .out = keep(testutil_temp_path("waits_timer.jsonl"))},
                       {.chip_path = chips[m],
                        .steady = m,
                        .simgrid_waits = 1,
                        .out = keep(testutil_temp_path("waits_simgrid.jsonl"))}};
    routed_pair(j, text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text[0]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text[1]);
    CU_ASSERT_EQUAL(json_lines_close(text[0], text[1], NULL), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(text[m], m ? "\"period_kind\":\"steady\"" : "\"feasible\":false"));
    free(text[0]);
    free(text[1]);
  }
}

/* ---- checkpoints of the engine's history ---------------------------------------------------------- */

/* What a child does before the 8 plans it writes: mode 0 advances its clock to 1000 s, plays 6 plans
 * and checkpoints (the interrupted run); mode 1 plays 2 plans and restores that checkpoint's clock
 * (the resumed run); mode 2 plays the 2 plans only (a resumed run that forgot the clock). */
typedef struct history_job {
  int mode;
  double clock; /* mode 0 writes it, mode 1 reads it */
  const char *out;
} history_job;

static plan *random_plan(const graph *g, const chip *c, uint64_t *x) {
  int k = 1 + (int)(*x % 6), layers[6], cores[6], left_l = g->n_ops, left_c = c->n_cores;
  for (int i = 0; i < k; i++) {
    *x = *x * 6364136223846793005u + 1442695040888963407u;
    int rest = k - 1 - i;
    layers[i] = rest == 0 ? left_l : 1 + (int)((*x >> 33) % (uint64_t)(left_l - rest));
    cores[i] = rest == 0 ? left_c : 1 + (int)((*x >> 17) % (uint64_t)(left_c - rest > 4 ? 4 : left_c - rest));
    left_l -= layers[i];
    left_c -= cores[i];
  }
  plan *p = NULL;
  mp_error err;
  return plan_from_stages(layers, cores, k, &p, &err) == MP_OK ? p : NULL;
}

static int history_figures(void *arg) {
  history_job *j = arg;
  graph *g = NULL;
  chip *c = NULL;
  sim *s = NULL;
  mp_error err;
  sim_options o;
  sim_options_init(&o);
  o.microbatches = 6;
  if (graph_load(testutil_src("traces/resnet50.json"), &g, &err) != MP_OK ||
      chip_load(testutil_src("platforms/mesh4x4.json"), &c, &err) != MP_OK || sim_new(c, &o, &s, &err) != MP_OK)
    return 10;
  uint64_t before = 99, after = 7;
  if (j->mode == 0 && sim_restore(s, 1000.0, &err) != MP_OK) return 11;
  for (int e = 0; e < (j->mode == 0 ? 6 : 2); e++) {
    plan *p = random_plan(g, c, &before);
    sim_result r;
    if (!p || sim_evaluate(s, g, p, &r, &err) != MP_OK) return 12;
    sim_result_clear(&r);
    plan_free(p);
  }
  if (j->mode == 0 && sim_checkpoint(s, &j->clock, &err) != MP_OK) return 13;
  if (j->mode == 1) {
    double now;
    /* not back in time, not to a clock no run reaches */
    if (sim_restore(s, 1e-9, &err) != MP_INPUT || !strstr(err.msg, "earlier than the engine's")) return 14;
    if (sim_restore(s, NAN, &err) != MP_INPUT || sim_restore(s, 2e9, &err) != MP_INPUT) return 15;
    if (sim_restore(s, j->clock, &err) != MP_OK || sim_checkpoint(s, &now, &err) != MP_OK || now != j->clock) return 16;
  }
  FILE *f = fopen(j->out, "w");
  if (!f) return 17;
  for (int e = 0; e < 8; e++) {
    plan *p = random_plan(g, c, &after);
    sim_result r;
    if (!p || sim_evaluate(s, g, p, &r, &err) != MP_OK) return 18;
    fprintf(f, "%a %a\n", r.period_s, r.makespan_s);
    sim_result_clear(&r);
    plan_free(p);
  }
  if (fclose(f) != 0) return 19;
  if (j->mode == 0) { /* the clock for the next child */
    FILE *k = fopen(keep(testutil_temp_path("history_clock")), "w");
    if (!k || fprintf(k, "%a\n", j->clock) < 0 || fclose(k) != 0) return 20;
  }
  sim_free(s);
  chip_free(c);
  graph_free(g);
  return 0;
}

/* A resumed trainer restores the clock of its checkpoint: from then on its simulator gives the figures
 * of the interrupted one bit for bit, which it does not with the clock of its own history. */
static void a_restored_engine_should_give_the_checkpointed_engines_figures_bit_for_bit(void) {
  char *text[3] = {NULL, NULL, NULL};
  double clock = 0;
  for (int m = 0; m < 3; m++) {
    history_job j = {.mode = m, .clock = clock, .out = keep(testutil_temp_path(m == 0 ? "history0" : m == 1 ? "history1" : "history2"))};
    CU_ASSERT_EQUAL_FATAL(testutil_in_child(history_figures, &j), 0);
    if (m == 0) {
      FILE *k = fopen(testutil_temp_path("history_clock"), "r");
      CU_ASSERT_PTR_NOT_NULL_FATAL(k);
      CU_ASSERT_EQUAL(fscanf(k, "%la", &clock), 1);
      fclose(k);
      CU_ASSERT(clock > 1000.0);
    }
    size_t n = 0;
    mp_error err;
    CU_ASSERT_EQUAL(fileio_read_all(j.out, &text[m], &n, &err), MP_OK);
  }
  CU_ASSERT_PTR_NOT_NULL_FATAL(text[0]);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text[1]);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text[2]);
  CU_ASSERT_STRING_EQUAL(text[0], text[1]);
  CU_ASSERT_STRING_NOT_EQUAL(text[0], text[2]); /* the history shows in the last digits */
  for (int m = 0; m < 3; m++) free(text[m]);
}

/* ---- golden output through the CLI ---------------------------------------------------------------- */

/* 2x2 mesh (snake: core 0 (0,0), 1 (1,0), 2 (1,1), 3 (0,1)), 1 TFLOP/s, 10 GB/s links, 1 ns per hop.
 * Plan [0,1,1,1]: stage 0 = layer a on cores 0-1, stage 1 = layer b on core 2, stage 2 = c on core 3.
 * Per micro-batch:
 *   stage 0: 2e6 / 2e12 = 1 us, then all-gather of 4000 bytes over 2 cores: each direction of link
 *            x0y0<>x1y0 carries 2000 bytes = 0.2 us + 1 ns: compute 1.201 us;
 *            send ta 4000 bytes core 1 -> core 2 (one hop): 0.4 us + 1 ns = 0.401 us
 *   stage 1: 4e6 / 1e12 = 4 us; send tb 2000 bytes core 2 -> core 3: 0.201 us
 *   stage 2: 1e6 / 1e12 = 1 us (y is a graph output: no send)
 * As a line of 5 stages: sum = 6.803 us, max = 4 us; M = 4: makespan = 6.803 + 3 * 4 = 18.803 us,
 * latency 6.803 us, period 4 us: 250000 samples/s, bottleneck stage 1.
 * Per micro-batch: compute 1.201 / 4 / 1 us; comm 0.401 / 0.201 / 0 us; idle = period - compute =
 * 2.799 / 0 / 3 us.  Model: t = 1.201 / 4 / 1 us (the model counts the all-gather's hop latency too).
 * SRAM per core: 1000/2 + 4000 = 4500, 2000 + 2000 = 4000, 0 + 100 = 100 bytes.
 * Links per micro-batch: x1y0>x1y1 4000 bytes (ta), then 2000 each, by link number: x0y0>x1y0,
 * x1y0>x0y0, x1y1>x0y1; utilisation of the first 4000 / (1e10 * 4e-6) = 0.1 of the period.
 * Activities: per micro-batch 2 + 1 (stage 0), 1 + 1 (stage 1), 1 (stage 2), but every transfer is
 * private (sim_int.h): from the second micro-batch on, stage 0's all-gather is timed within its
 * execution, so 6 + 3 * 5 = 21. */
static const char golden_graph[] =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"golden\",\"inputs\":[{\"name\":\"x\",\"bytes\":1000}],"
    "\"ops\":["
    "{\"name\":\"a\",\"type\":\"Conv\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"ta\",\"bytes\":4000}],"
    "\"macs\":1000000,\"flops\":2000000,\"weight_bytes\":1000},"
    "{\"name\":\"b\",\"type\":\"Conv\",\"inputs\":[\"ta\"],\"outputs\":[{\"name\":\"tb\",\"bytes\":2000}],"
    "\"macs\":2000000,\"flops\":4000000,\"weight_bytes\":2000},"
    "{\"name\":\"c\",\"type\":\"Gemm\",\"inputs\":[\"tb\"],\"outputs\":[{\"name\":\"y\",\"bytes\":100}],"
    "\"macs\":500000,\"flops\":1000000,\"weight_bytes\":0}]}\n";
static const char golden_chip[] =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"golden2x2\",\"mesh\":{\"width\":2,\"height\":2},"
    "\"core\":{\"flops\":1e12,\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":1e10,\"latency\":1e-9}}\n";
static const char golden_plan[] = "{\"format\":\"meshpipe-plan\",\"version\":1,\"arranged_core\":[0,1,1,1]}\n";

static void sim_golden_output_should_match_the_hand_derived_figures(void) {
  char args[2048];
  const char *gp = keep(testutil_write_temp("golden.json", golden_graph));
  const char *cp = keep(testutil_write_temp("golden_chip.json", golden_chip));
  const char *pp = keep(testutil_write_temp("golden_plan.json", golden_plan));
  snprintf(args, sizeof args, "simulate -g '%s' -c '%s' -p '%s' --microbatches 4 --json", gp, cp, pp);
  char *out = NULL, *errout = NULL;
  int rc = testutil_meshpipe(args, &out, &errout);
  CU_ASSERT_EQUAL(rc, 0);
  if (rc != 0) fprintf(stderr, "%s", errout ? errout : "");
  cJSON *r = out ? cJSON_Parse(out) : NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  ASSERT_REL(num(r, "makespan_s"), 18.803e-6);
  ASSERT_REL(num(r, "latency_s"), 6.803e-6);
  ASSERT_REL(num(r, "period_s"), 4e-6);
  ASSERT_REL(num(r, "samples_per_s"), 250000);
  ASSERT_REL(num(r, "model_period_s"), 4e-6);
  CU_ASSERT_EQUAL(num(r, "bottleneck_stage"), 1);
  CU_ASSERT_EQUAL(num(r, "microbatches"), 4);
  CU_ASSERT_EQUAL(num(r, "activities"), 21);
  CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "feasible")));
  /* per micro-batch; idle = period - compute */
  static const double compute[3] = {1.201e-6, 4e-6, 1e-6}, comm[3] = {0.401e-6, 0.201e-6, 0},
                      idle[3] = {2.799e-6, 0, 3e-6}, model[3] = {1.201e-6, 4e-6, 1e-6}, sram[3] = {4500, 4000, 100};
  CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r, "stages")), 3);
  for (int i = 0; i < 3; i++) {
    ASSERT_REL(num(stage(r, i), "compute_s"), compute[i]);
    CU_ASSERT(fabs(num(stage(r, i), "comm_s") - comm[i]) <= 1e-9 * comm[0]);
    CU_ASSERT(fabs(num(stage(r, i), "idle_s") - idle[i]) <= 1e-9 * idle[0]);
    ASSERT_REL(num(stage(r, i), "analytical_t_s"), model[i]);
    CU_ASSERT_EQUAL(num(stage(r, i), "sram_bytes"), sram[i]);
  }
  const cJSON *cores = cJSON_GetObjectItemCaseSensitive(r, "cores");
  CU_ASSERT_EQUAL(cJSON_GetArraySize(cores), 4);
  CU_ASSERT_EQUAL(num(cJSON_GetArrayItem(cores, 1), "sram_bytes"), 4500);
  CU_ASSERT_EQUAL(num(cJSON_GetArrayItem(cores, 3), "sram_capacity"), 1048576);
  static const char *const links[4] = {"x1y0>x1y1", "x0y0>x1y0", "x1y0>x0y0", "x1y1>x0y1"};
  static const double bytes[4] = {4000, 2000, 2000, 2000}; /* per micro-batch */
  const cJSON *ls = cJSON_GetObjectItemCaseSensitive(r, "links");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(ls), 4);
  for (int k = 0; k < 4; k++) {
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ls, k), "link")->valuestring, links[k]);
    CU_ASSERT_EQUAL(num(cJSON_GetArrayItem(ls, k), "bytes"), bytes[k]);
  }
  ASSERT_REL(num(cJSON_GetArrayItem(ls, 0), "utilisation"), 4000 / (1e10 * 4e-6)); /* of the period */
  cJSON_Delete(r);
  free(out);
  free(errout);
  /* the text report names its units */
  snprintf(args, sizeof args, "simulate -g '%s' -c '%s' -p '%s' --microbatches 4", gp, cp, pp);
  rc = testutil_meshpipe(args, &out, &errout);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "250000 samples/s"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "18.803 us for the 4 micro-batches"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "fixed run    4 micro-batches (-M)"));
  free(out);
  free(errout);
}

/* ---- steady state -------------------------------------------------------------------------------- */

/* A steady run stops once its completions are periodic.  Its period must be the long-run interval:
 * with fixed runs of N < N' micro-batches, both past the start-up, c[N'-1] - c[N-1] = (N' - N) T, and
 * c[N-1] = c[0] + (N - 1) P(N), so T = ((N' - 1) P(N') - (N - 1) P(N)) / (N' - N). */
static void sim_steady_state_should_equal_the_long_run_interval(void) {
  /* a chain without contention; two transfers sharing a link; the golden three-stage pipeline */
  static const struct {
    const char *graph, *chip;
    int arranged[8], n_cores;
  } runs[] = {{chain_graph, line4_chip, {1, 1, 1, 1}, 4},
              {shared_graph, line3_chip, {1, 1, 1}, 3},
              {golden_graph, golden_chip, {0, 1, 1, 1}, 4},
              {chain_graph, mesh24_chip, {0, 1, 1, 0, 0, 1, 0, 1}, 8}};
  for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
    sim_case cs[3];
    for (int i = 0; i < 3; i++) {
      memset(&cs[i], 0, sizeof cs[i]);
      cs[i].graph = runs[k].graph;
      cs[i].n_cores = runs[k].n_cores;
      memcpy(cs[i].arranged, runs[k].arranged, sizeof runs[k].arranged);
    }
    cs[0].M = 0; /* steady */
    cs[1].M = 200;
    cs[2].M = 400;
    cJSON *res = eval_cases(runs[k].chip, cs, 3, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(res);
    const cJSON *st = cJSON_GetArrayItem(res, 0), *a = cJSON_GetArrayItem(res, 1), *b = cJSON_GetArrayItem(res, 2);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(st, "period_kind")->valuestring, "steady");
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(a, "period_kind")->valuestring, "fixed");
    double T = (399 * num(b, "period_s") - 199 * num(a, "period_s")) / 200;
    CU_ASSERT(close_rel(num(st, "period_s"), T, 1e-8));
    /* it stopped early: the warm-up, W itself (the stage means start there), and the completions the state
     * rule needs to propose the cycle (the last q intervals and the q before them) */
    int W = (int)num(st, "warmup_microbatches"), n = (int)num(st, "microbatches"), q = (int)num(st, "cycle");
    CU_ASSERT(q >= 1 && W >= 1 && n >= W + 1 && n > 2 * q && n < 40);
    CU_ASSERT_EQUAL(num(st, "latency_s"), num(a, "latency_s")); /* the same fill */
    cJSON_Delete(res);
  }
}

/* A bundled chip and graph (paths in the source tree), a plan of them from its arranged_core list and
 * a sim with options o: what a child's run needs. */
typedef struct bundled_run {
  chip *c;
  graph *g;
  plan *p;
  sim *s;
} bundled_run;

/* The run of chip c (taken; NULL: it could not be made): 0, or -1 when something could not be made
 * (bundled_close frees what was). */
static int bundled_with(chip *c, const char *graph_path, const int *arranged, const sim_options *o, bundled_run *b) {
  mp_error err;
  memset(b, 0, sizeof *b);
  b->c = c;
  if (!c || graph_load(testutil_src(graph_path), &b->g, &err) != MP_OK ||
      plan_new(arranged, b->c->n_cores, b->g->n_ops, &b->p, &err) != MP_OK || sim_new(b->c, o, &b->s, &err) != MP_OK)
    return -1;
  return 0;
}

static int bundled_open(const char *chip_path, const char *graph_path, const int *arranged, const sim_options *o,
                        bundled_run *b) {
  chip *c = NULL;
  mp_error err;
  if (chip_load(testutil_src(chip_path), &c, &err) != MP_OK) c = NULL;
  return bundled_with(c, graph_path, arranged, o, b);
}

static void bundled_close(bundled_run *b) {
  sim_free(b->s);
  plan_free(b->p);
  graph_free(b->g);
  chip_free(b->c);
}

/* b's plan run to steady state into *r (caller-owned), and the long run's interval T from fixed runs
 * of n < n2 micro-batches (sim_steady_state_should_equal_the_long_run_interval): 0, or -1 when a run
 * failed (then *r holds nothing). */
static int steady_and_long_run(const bundled_run *b, int n, int n2, sim_result *r, double *T) {
  mp_error err;
  sim_result a, c;
  if (sim_evaluate(b->s, b->g, b->p, r, &err) != MP_OK) return -1;
  if (sim_evaluate_m(b->s, b->g, b->p, n, &a, &err) != MP_OK) {
    sim_result_clear(r);
    return -1;
  }
  if (sim_evaluate_m(b->s, b->g, b->p, n2, &c, &err) != MP_OK) {
    sim_result_clear(&a);
    sim_result_clear(r);
    return -1;
  }
  *T = ((n2 - 1) * c.period_s - (n - 1) * a.period_s) / (n2 - n);
  sim_result_clear(&a);
  sim_result_clear(&c);
  return 0;
}

/* VGG-16 on the 8x8 chip cut evenly (23 stages; the first two convolutions spill their activations
 * and the classifier streams its weights from the two DRAM ports): with the window at 2p + 2 from the
 * start, a warm-up of 30 micro-batches, completions periodic over six intervals by the 38th (but 3.6 %
 * slow), and the pipeline's state repeating from the 50th on.  The even plan: one layer on every third core,
 * then on every second. */
static const int vgg_even8[64] = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0,
                                  0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0,
                                  1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1};

/* How slow_transient runs that plan, its cap (0: the default, 4 x 23 + 32 = 124) and first window (0:
 * the default), and what the steady run must give: settled or not, within how many micro-batches, and
 * when the cap cuts it short how close the mean of its second half is to the long run's period.
 * First windows of 1 to 48 micro-batches all settle into the long run's schedule. */
typedef struct transient_run {
  int cap, first_window;
  int settled, min_microbatches, max_microbatches;
  double unsettled_rel;
} transient_run;

/* Simulates that plan as *arg says, and fixed runs of 500 and 1000 micro-batches (whose window is
 * 2p + 2); checks the steady period against the long run's, to 1e-9 when it settled and within
 * tr->unsettled_rel when the cap cut it short; 1..4 when a figure is wrong, 10..11 when the run could
 * not be made. */
static int slow_transient(void *arg) {
  const transient_run *tr = arg;
  bundled_run e;
  sim_options o;
  sim_options_init(&o);
  o.max_microbatches = tr->cap;
  o.first_window = tr->first_window;
  if (bundled_open("platforms/mesh8x8.json", "traces/vgg16.json", vgg_even8, &o, &e) != 0) return 10;
  sim_result r;
  double T;
  if (steady_and_long_run(&e, 500, 1000, &r, &T) != 0) return 11;
  int rc = 0, settled = r.period_kind == SIM_PERIOD_STEADY;
  if (settled != tr->settled) rc = 1;
  else if (settled && !close_rel(r.period_s, T, 1e-9)) rc = 2;
  else if (!settled && (r.period_kind != SIM_PERIOD_UNSETTLED || r.microbatches != tr->cap || !close_rel(r.period_s, T, tr->unsettled_rel)))
    rc = 3;
  else if (r.microbatches < tr->min_microbatches || r.microbatches > tr->max_microbatches) rc = 4;
  sim_result_clear(&r);
  bundled_close(&e);
  return rc;
}

/* With the window at 2p + 2 from the start, the first stages run ahead until it is full and their
 * traffic slows the completions for about 50 micro-batches, periodically for a while: the run must
 * wait that out (taking the 3.6 % slower stretch for the steady state is the error to avoid), and then
 * settles into the long run's schedule.  Cut short at 45, it says so and reports the mean of its
 * second half, still 2.3 % slow. */
static void sim_steady_state_should_wait_out_a_slow_transient(void) {
  transient_run deflt = {0, 1000, 1, 40, 124, 0}, short_cap = {45, 1000, 0, 45, 45, 0.03};
  CU_ASSERT_EQUAL(testutil_in_child(slow_transient, &deflt), 0);
  CU_ASSERT_EQUAL(testutil_in_child(slow_transient, &short_cap), 0);
}

/* The default first window, what the model says the pipeline holds, has no such transient: the same
 * period in a sixth of the micro-batches.  A window of one micro-batch starves every stage but one; the
 * run must grow it until a group or sender is saturated, and then report the same period (a window that
 * stayed at one would report one micro-batch's latency through the pipeline, 4.6 periods). */
static void sim_steady_state_should_grow_a_window_that_starves_the_pipeline(void) {
  transient_run deflt = {0, 0, 1, 1, 24, 0}, one = {0, 1, 1, 1, 124, 0};
  CU_ASSERT_EQUAL(testutil_in_child(slow_transient, &deflt), 0);
  CU_ASSERT_EQUAL(testutil_in_child(slow_transient, &one), 0);
}

/* ResNet-50 cut into 41 stages on 16x16 (rl's plan of the README's run; per group its last core and
 * layers): about 35 micro-batches in flight at its period and a warm-up of 39.  Its state repeats a few
 * micro-batches after the warm-up; completions periodic over a span that covers the micro-batches in
 * flight took it to 83. */
static const int deep16_ends[41][2] = {
    {10, 1},  {11, 2},  {16, 1},  {22, 1},  {26, 1},  {29, 1},  {36, 1},  {40, 1},  {45, 1},  {54, 1},  {59, 1},
    {67, 1},  {74, 1},  {80, 1},  {84, 1},  {87, 1},  {94, 1},  {98, 1},  {101, 1}, {108, 1}, {112, 1}, {115, 1},
    {121, 1}, {125, 1}, {131, 1}, {144, 2}, {147, 1}, {156, 2}, {159, 1}, {168, 2}, {171, 1}, {180, 2}, {183, 1},
    {192, 2}, {196, 1}, {205, 2}, {209, 1}, {221, 2}, {239, 4}, {242, 1}, {255, 6}};

/* Simulates that plan to steady state and for 200 and 400 micro-batches; 0 when the steady run settled
 * at the long run's period within 12 micro-batches of its warm-up, 1..3 when not, 10..11 when the run
 * could not be made. */
static int deep_pipeline(void *arg) {
  (void)arg;
  int arranged[256] = {0};
  for (int k = 0; k < 41; k++) arranged[deep16_ends[k][0]] = deep16_ends[k][1];
  bundled_run e;
  sim_options o;
  sim_options_init(&o);
  if (bundled_open("platforms/mesh16x16.json", "traces/resnet50.json", arranged, &o, &e) != 0) return 10;
  sim_result r;
  double T;
  if (steady_and_long_run(&e, 200, 400, &r, &T) != 0) return 11;
  int rc = 0;
  if (r.period_kind != SIM_PERIOD_STEADY) rc = 1;
  else if (!close_rel(r.period_s, T, 1e-9)) rc = 2;
  else if (r.warmup_microbatches < 30 || r.microbatches > r.warmup_microbatches + 12) rc = 3;
  sim_result_clear(&r);
  bundled_close(&e);
  return rc;
}

static void sim_steady_state_should_stop_a_deep_pipeline_once_its_state_repeats(void) {
  CU_ASSERT_EQUAL(testutil_in_child(deep_pipeline, NULL), 0);
}

/* ResNet-50 on 8x8 in four stages (cores 0-23, 24-27, 28-58 and 59-63 take 10, 10, 20 and 17 layers):
 * its DRAM-bound stages keep the completions aperiodic with any window. */
typedef struct window_run {
  int first_window;
  const char *out; /* where the child writes the result's JSON */
} window_run;

static int never_settling(void *arg) {
  const window_run *w = arg;
  int arranged[64] = {0};
  arranged[23] = 10;
  arranged[27] = 10;
  arranged[58] = 20;
  arranged[63] = 17;
  bundled_run e;
  mp_error err;
  sim_options o;
  sim_options_init(&o);
  o.first_window = w->first_window;
  if (bundled_open("platforms/mesh8x8.json", "traces/resnet50.json", arranged, &o, &e) != 0) return 10;
  sim_result r;
  timeline *tl = NULL;
  if (timeline_new(e.c, NULL, &tl, &err) != MP_OK || sim_evaluate_timeline(e.s, e.g, e.p, 0, tl, &r, &err) != MP_OK)
    return 11;
  cJSON *o_r = sim_result_to_json(&r);
  if (!o_r || !cJSON_AddNumberToObject(o_r, "timeline_events", (double)timeline_count(tl))) return 12;
  timeline_free(tl);
  char *text = cJSON_PrintUnformatted(o_r);
  if (!text || fileio_write_atomic(w->out, text, strlen(text), &err) != MP_OK) return 12;
  cJSON_free(text);
  cJSON_Delete(o_r);
  sim_result_clear(&r);
  bundled_close(&e);
  return 0;
}

/* A run that starts narrow and finds no periodic stretch is run again with the window at 2p + 2 from
 * the start, so it reports what that run reports (the mean of its second half), not the mean of a
 * narrow window's aperiodic completions (0.009 % apart here), and its timeline holds that run's events
 * alone; only its activities count both runs. */
static void sim_a_narrow_run_that_never_settles_should_report_the_widest_windows_figures(void) {
  window_run w[2] = {{0, keep(testutil_temp_path("narrow.json"))}, {1000, keep(testutil_temp_path("wide.json"))}};
  cJSON *res[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++) {
    CU_ASSERT_EQUAL_FATAL(testutil_in_child(never_settling, &w[i]), 0);
    char *text = NULL;
    size_t n = 0;
    mp_error err;
    CU_ASSERT_EQUAL_FATAL(fileio_read_all(w[i].out, &text, &n, &err), MP_OK);
    res[i] = cJSON_Parse(text);
    free(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(res[i]);
  }
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(res[0], "period_kind")->valuestring, "unsettled");
  CU_ASSERT(num(res[0], "activities") > num(res[1], "activities"));
  cJSON_DeleteItemFromObjectCaseSensitive(res[0], "activities");
  cJSON_DeleteItemFromObjectCaseSensitive(res[1], "activities");
  CU_ASSERT(testutil_json_close(res[0], res[1], 1e-9, 1e-15));
  cJSON_Delete(res[0]);
  cJSON_Delete(res[1]);
}

/* A steady run that cannot settle within its cap says so and reports the mean of the second half. */
static int capped_run(void *arg) {
  (void)arg;
  chip *c = NULL;
  graph *g = NULL;
  plan *p = NULL;
  sim *s = NULL;
  mp_error err;
  sim_options o;
  sim_options_init(&o);
  o.max_microbatches = 5;
  int arranged[4] = {1, 1, 1, 1};
  if (load_chip(line4_chip, &c, &err) != MP_OK || load_graph(chain_graph, &g, &err) != MP_OK ||
      plan_new(arranged, 4, 4, &p, &err) != MP_OK || sim_new(c, &o, &s, &err) != MP_OK)
    return 10;
  sim_result r, f;
  if (sim_evaluate(s, g, p, &r, &err) != MP_OK || sim_evaluate_m(s, g, p, 5, &f, &err) != MP_OK) return 11;
  if (r.period_kind != SIM_PERIOD_UNSETTLED || r.microbatches != 5 || r.cycle != 0) return 1;
  /* a chain is periodic from the start: the mean of any stretch of intervals is the fixed run's */
  if (fabs(r.period_s - f.period_s) > 1e-9 * f.period_s || f.period_kind != SIM_PERIOD_FIXED) return 2;
  sim_result_clear(&r);
  sim_result_clear(&f);
  sim_free(s);
  plan_free(p);
  graph_free(g);
  chip_free(c);
  return 0;
}

static void sim_steady_run_should_report_an_unsettled_period_at_its_cap(void) {
  CU_ASSERT_EQUAL(testutil_in_child(capped_run, NULL), 0);
}

/* VGG-16 cut by rl into 9 stages on 8x8 with 4 MiB per core (a case of bench --fidelity): the stages
 * near the DRAM ports stream weights through the ports' first links, and fall behind for a long time.
 * At the automatic cap of 68 the mean of the second half is 857.7 us, below what the busiest link,
 * x0y3>x1y3, allows (its bytes take 1.126 ms per micro-batch); the run must go on with its cap doubled
 * and report 1.197 ms over 136 micro-batches, unsettled, above that floor and within 5 % of the steady
 * period (1.255 ms: settled after 219 micro-batches under a cap of 400).  A cap the caller set is
 * kept, transient and all. */
static const int vgg_rl8[64] = {1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0,
                                0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 4, 0, 0, 0,
                                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 2};
static const char mesh8x8_4mi[] =
    "{\"format\": \"meshpipe-chip\", \"version\": 1, \"name\": \"mesh8x8-4Mi\", \"mesh\": {\"width\": 8, "
    "\"height\": 8}, \"core\": {\"flops\": 1e12, \"sram_bytes\": 4194304}, \"noc\": {\"bandwidth\": 64e9, "
    "\"latency\": 5e-9}, \"dram\": {\"bandwidth\": 200e9, \"ports\": [[0, 3], [7, 4]]}}";

static double busiest_utilisation(const sim_result *r) {
  double u = 0;
  for (int k = 0; k < r->n_links; k++) u = fmax(u, r->links[k].utilisation);
  return u;
}

/* The run under cap (0: automatic) into *r: 0, or -1 when it could not be made. */
static int vgg_rl8_run(int cap, sim_result *r) {
  bundled_run b;
  mp_error err;
  sim_options o;
  sim_options_init(&o);
  o.max_microbatches = cap;
  int rc = bundled_with(testutil_chip_text(mesh8x8_4mi), "traces/vgg16.json", vgg_rl8, &o, &b) == 0 &&
                   sim_evaluate(b.s, b.g, b.p, r, &err) == MP_OK
               ? 0
               : -1;
  bundled_close(&b);
  return rc;
}

static int below_the_link_floor(void *arg) {
  int cap = *(const int *)arg;
  sim_result r;
  if (vgg_rl8_run(cap, &r) != 0) return 10;
  int rc = 0;
  if (r.period_kind != SIM_PERIOD_UNSETTLED && cap != 400) rc = 1;
  else if (cap == 0 && (r.microbatches != 136 || !close_rel(r.period_s, 1.19729613421e-3, 1e-6) ||
                        busiest_utilisation(&r) > 1 || !close_rel(r.period_s, 1.25522065921e-3, 0.05)))
    rc = 2;
  else if (cap == 68 && (r.microbatches != 68 || !close_rel(r.period_s, 857.661556917e-6, 1e-6) ||
                         busiest_utilisation(&r) < 1.3))
    rc = 3;
  else if (cap == 400 && (r.period_kind != SIM_PERIOD_STEADY || r.microbatches != 219 ||
                          !close_rel(r.period_s, 1.25522065921e-3, 1e-6)))
    rc = 4;
  sim_result_clear(&r);
  return rc;
}

static void sim_a_mean_below_the_link_floor_should_run_on_with_the_cap_doubled(void) {
  static const int caps[] = {0, 68, 400};
  for (int i = 0; i < 3; i++) CU_ASSERT_EQUAL(testutil_in_child(below_the_link_floor, (void *)&caps[i]), 0);
}

/* ---- bad input ------------------------------------------------------------------------------------ */

static int bad_inputs(void *arg) {
  (void)arg;
  chip *c = NULL;
  graph *g = NULL, *g2 = NULL;
  sim *s = NULL, *s2 = NULL;
  plan *p_layers = NULL, *p_cores = NULL, *p = NULL;
  mp_error err;
  sim_result r;
  sim_options o;
  sim_options_init(&o);
  if (load_chip(golden_chip, &c, &err) != MP_OK || load_graph(golden_graph, &g, &err) != MP_OK ||
      load_graph(chain_graph, &g2, &err) != MP_OK)
    return 10;
  o.microbatches = -1;
  if (sim_new(c, &o, &s, &err) != MP_USAGE || !strstr(err.msg, "micro-batches")) return 1;
  o.microbatches = 0;
  o.max_microbatches = 3;
  if (sim_new(c, &o, &s, &err) != MP_USAGE || !strstr(err.msg, "at least 4")) return 16;
  o.max_microbatches = 0;
  o.first_window = -1;
  if (sim_new(c, &o, &s, &err) != MP_USAGE || !strstr(err.msg, "first window")) return 17;
  o.first_window = 0;
  o.top_links = -1;
  if (sim_new(c, &o, &s, &err) != MP_USAGE) return 14;
  o.top_links = 8;
  /* no room for the platform file: refused, and the engine is still free to start */
  const char *tmpdir = getenv("TMPDIR");
  char saved_tmp[1024] = "";
  if (tmpdir) snprintf(saved_tmp, sizeof saved_tmp, "%s", tmpdir);
  setenv("TMPDIR", "/nonexistent-meshpipe-dir", 1);
  if (sim_new(c, &o, &s, &err) != MP_RUN || !strstr(err.msg, "/nonexistent-meshpipe-dir")) return 15;
  if (tmpdir)
    setenv("TMPDIR", saved_tmp, 1);
  else
    unsetenv("TMPDIR");
  /* a chip that chip_load would refuse, mended in memory: still refused, before SimGrid sees it */
  double saved = c->cores[2].transfer_factor;
  c->cores[2].transfer_factor = 0.5;
  if (sim_new(c, &o, &s, &err) != MP_INPUT || !strstr(err.msg, "core 2")) return 2;
  c->cores[2].transfer_factor = saved;
  if (sim_new(c, &o, &s, &err) != MP_OK) return 3;
  if (sim_new(c, &o, &s2, &err) != MP_RUN || !strstr(err.msg, "once per process") || s2) return 4;
  int four[4] = {0, 1, 1, 2}, three[3] = {1, 1, 1}, ok[4] = {0, 1, 1, 1};
  if (plan_new(four, 4, 4, &p_layers, &err) != MP_OK || plan_new(three, 3, 3, &p_cores, &err) != MP_OK ||
      plan_new(ok, 4, 3, &p, &err) != MP_OK)
    return 11;
  if (sim_evaluate(s, g, p_layers, &r, &err) != MP_INPUT || !strstr(err.msg, "layers")) return 5;
  if (sim_evaluate(s, g, p_cores, &r, &err) != MP_INPUT || !strstr(err.msg, "cores")) return 6;
  if (sim_evaluate_m(s, g, p, -1, &r, &err) != MP_USAGE) return 7;
  if (sim_evaluate(s, g2, p, &r, &err) != MP_INPUT) return 8; /* the chain has 4 layers */
  if (sim_evaluate(s, g, p, &r, &err) != MP_OK) return 9;     /* and the sim still works */
  sim_stats st;
  sim_get_stats(s, &st);
  if (st.evaluations != 1 || st.activities != r.activities) return 12;
  sim_result_clear(&r);
  sim_free(s);
  if (sim_new(c, &o, &s, &err) != MP_RUN) return 13; /* not even after the first is gone */
  plan_free(p);
  plan_free(p_layers);
  plan_free(p_cores);
  graph_free(g);
  graph_free(g2);
  chip_free(c);
  return 0;
}

static void sim_should_refuse_bad_input_with_a_clear_error(void) {
  int rc = testutil_in_child(bad_inputs, NULL);
  if (rc != 0) fprintf(stderr, "\n  bad_inputs failed at check %d\n", rc);
  CU_ASSERT_EQUAL(rc, 0);
}

static int bad_routing(void *arg) {
  (void)arg;
  chip *c = NULL;
  sim *s = NULL;
  mp_error err;
  sim_options o;
  sim_options_init(&o);
  if (load_chip(golden_chip, &c, &err) != MP_OK) return 10;
  o.routing = 7;
  if (sim_new(c, &o, &s, &err) != MP_USAGE || s || !strstr(err.msg, "routing 7")) return 1;
  chip *mixed = NULL;
  if (load_chip("{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"h2\",\"mesh\":{\"width\":2,\"height\":1},"
                "\"core\":{\"flops\":1e12,\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":1e10,\"latency\":1e-9},"
                "\"overrides\":[{\"core\":1,\"flops\":2e12}]}",
                &mixed, &err) != MP_OK)
    return 11;
  o.routing = SIM_ROUTING_TORUS;
  if (sim_new(mixed, &o, &s, &err) != MP_USAGE || s || !strstr(err.msg, "one speed") || !strstr(err.msg, "test-chip"))
    return 3;
  chip_free(mixed);
  o.routing = SIM_ROUTING_DIJKSTRA; /* refused before SimGrid started: it can still start */
  if (sim_new(c, &o, &s, &err) != MP_OK) return 2;
  sim_free(s);
  chip_free(c);
  return 0;
}

static void sim_new_should_refuse_an_unknown_routing(void) { CU_ASSERT_EQUAL(testutil_in_child(bad_routing, NULL), 0); }

static void simulate_cli_should_exit_2_on_bad_input(void) {
  const char *gp = keep(testutil_write_temp("golden.json", golden_graph));
  const char *cp = keep(testutil_write_temp("golden_chip.json", golden_chip));
  const char *pp = keep(testutil_write_temp("short_plan.json", "{\"format\":\"meshpipe-plan\",\"version\":1,"
                                                               "\"arranged_core\":[0,0,1,1]}\n"));
  const char *pp_ok = keep(testutil_write_temp("golden_plan.json", golden_plan));
  char args[2048];
  char *out = NULL, *errout = NULL;
  snprintf(args, sizeof args, "simulate -g '%s' -c '%s' -p '%s'", gp, cp, pp);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &errout), 2);
  CU_ASSERT_PTR_NOT_NULL(errout && strstr(errout, "meshpipe: "));
  CU_ASSERT_PTR_NOT_NULL(errout && strstr(errout, "short_plan.json"));
  free(out);
  free(errout);
  snprintf(args, sizeof args, "simulate -g '%s' -c '%s'", gp, cp);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &errout), 2);
  CU_ASSERT_PTR_NOT_NULL(errout && strstr(errout, "needs a plan"));
  free(out);
  free(errout);
  snprintf(args, sizeof args, "simulate -g '%s' -c '%s' -p '%s' --microbatches 0", gp, cp, pp_ok);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &errout), 2);
  CU_ASSERT_PTR_NOT_NULL(errout && strstr(errout, "--microbatches"));
  free(out);
  free(errout);
  snprintf(args, sizeof args, "simulate -g '%s' -c '%s' -p '%s' extra", gp, cp, pp_ok);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &errout), 2);
  CU_ASSERT_PTR_NOT_NULL(errout && strstr(errout, "unexpected argument"));
  free(out);
  free(errout);
}

/* ---- the platform file ----------------------------------------------------------------------------- */

static void sim_platform_write_should_fail_cleanly_on_an_unwritable_path(void) {
  chip *c = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(load_chip(golden_chip, &c, &err), MP_OK);
  CU_ASSERT_EQUAL(sim_platform_write(c, "/nonexistent-dir/platform.xml", &err), MP_OUTPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent-dir/platform.xml"));
  chip_free(c);
}

static CU_TestInfo tests[] = {
    {"sim_steady_state_should_equal_the_long_run_interval", sim_steady_state_should_equal_the_long_run_interval},
    {"sim_steady_run_should_report_an_unsettled_period_at_its_cap",
     sim_steady_run_should_report_an_unsettled_period_at_its_cap},
    {"sim_a_mean_below_the_link_floor_should_run_on_with_the_cap_doubled",
     sim_a_mean_below_the_link_floor_should_run_on_with_the_cap_doubled},
    {"sim_steady_state_should_wait_out_a_slow_transient", sim_steady_state_should_wait_out_a_slow_transient},
    {"sim_steady_state_should_grow_a_window_that_starves_the_pipeline",
     sim_steady_state_should_grow_a_window_that_starves_the_pipeline},
    {"sim_steady_state_should_stop_a_deep_pipeline_once_its_state_repeats",
     sim_steady_state_should_stop_a_deep_pipeline_once_its_state_repeats},
    {"sim_a_narrow_run_that_never_settles_should_report_the_widest_windows_figures",
     sim_a_narrow_run_that_never_settles_should_report_the_widest_windows_figures},
    {"sim_chain_makespan_should_match_the_closed_form", sim_chain_makespan_should_match_the_closed_form},
    {"sim_period_should_equal_the_core_model_bottleneck_by_hand", sim_period_should_equal_the_core_model_bottleneck_by_hand},
    {"energy_per_sample_should_equal_the_hand_sum_on_a_two_stage_chain",
     energy_per_sample_should_equal_the_hand_sum_on_a_two_stage_chain},
    {"a_chip_without_energy_figures_should_report_no_energy", a_chip_without_energy_figures_should_report_no_energy},
    {"sim_period_should_equal_the_analytical_bottleneck_without_latency",
     sim_period_should_equal_the_analytical_bottleneck_without_latency},
    {"sim_two_transfers_on_one_link_should_take_twice_as_long",
     sim_two_transfers_on_one_link_should_take_twice_as_long},
    {"sim_transfer_time_should_grow_by_the_hop_latency", sim_transfer_time_should_grow_by_the_hop_latency},
    {"sim_ready_queue_should_run_independent_layers_while_a_tensor_travels",
     sim_ready_queue_should_run_independent_layers_while_a_tensor_travels},
    {"sim_doubling_core_speed_should_double_compute_bound_throughput",
     sim_doubling_core_speed_should_double_compute_bound_throughput},
    {"sim_same_plan_should_give_the_same_result_in_one_process_and_across_processes",
     sim_same_plan_should_give_the_same_result_in_one_process_and_across_processes},
    {"sim_all_gathers_without_the_links_that_cannot_bind_should_give_the_same_figures",
     sim_all_gathers_without_the_links_that_cannot_bind_should_give_the_same_figures},
    {"sim_private_transfers_run_once_should_give_the_figures_of_running_them_every_time",
     sim_private_transfers_run_once_should_give_the_figures_of_running_them_every_time},
    {"sim_waits_on_the_timer_should_give_the_figures_of_simgrids_own_waits",
     sim_waits_on_the_timer_should_give_the_figures_of_simgrids_own_waits},
    {"sim_isolated_evaluations_should_be_bit_identical_to_a_fresh_process",
     sim_isolated_evaluations_should_be_bit_identical_to_a_fresh_process},
    {"sim_weights_beyond_sram_should_stream_from_dram_and_flag_the_plan",
     sim_weights_beyond_sram_should_stream_from_dram_and_flag_the_plan},
    {"sim_a_dram_stream_should_be_limited_by_the_first_link_out_of_the_port",
     sim_a_dram_stream_should_be_limited_by_the_first_link_out_of_the_port},
    {"sim_fast_streams_should_take_the_models_stream_time", sim_fast_streams_should_take_the_models_stream_time},
    {"sim_reads_that_start_together_should_share_the_port", sim_reads_that_start_together_should_share_the_port},
    {"sim_a_stage_whose_activation_overflows_should_spill_and_reload",
     sim_a_stage_whose_activation_overflows_should_spill_and_reload},
    {"sim_a_tensor_read_by_two_later_groups_should_be_sent_twice", sim_a_tensor_read_by_two_later_groups_should_be_sent_twice},
    {"sim_routes_should_be_exactly_the_xy_routes", sim_routes_should_be_exactly_the_xy_routes},
    {"sim_golden_output_should_match_the_hand_derived_figures",
     sim_golden_output_should_match_the_hand_derived_figures},
    {"sim_should_refuse_bad_input_with_a_clear_error", sim_should_refuse_bad_input_with_a_clear_error},
    {"simulate_cli_should_exit_2_on_bad_input", simulate_cli_should_exit_2_on_bad_input},
    {"sim_platform_write_should_fail_cleanly_on_an_unwritable_path",
     sim_platform_write_should_fail_cleanly_on_an_unwritable_path},
    {"sim_full_dijkstra_and_torus_platforms_should_route_alike", sim_full_dijkstra_and_torus_platforms_should_route_alike},
    {"sim_torus_platform_should_give_the_full_platforms_figures", sim_torus_platform_should_give_the_full_platforms_figures},
    {"sim_platform_kind_should_follow_size_speeds_and_tracing", sim_platform_kind_should_follow_size_speeds_and_tracing},
    {"sim_full_and_dijkstra_platforms_should_give_identical_figures",
     sim_full_and_dijkstra_platforms_should_give_identical_figures},
    {"a_restored_engine_should_give_the_checkpointed_engines_figures_bit_for_bit",
     a_restored_engine_should_give_the_checkpointed_engines_figures_bit_for_bit},
    {"sim_new_should_refuse_an_unknown_routing", sim_new_should_refuse_an_unknown_routing},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("sim", tests, argc, argv); }
