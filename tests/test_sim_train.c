/* test_sim_train: training schedules on the simulator against their closed forms.
 * MESHPIPE_TEST_LABELS: simgrid
 *
 * Each case runs in a child (SimGrid starts once per process) that writes the results' JSON for the
 * parent to check.  On a contention-free chain of p equal stages (a line of cores, no latency, a NoC so
 * fast that transfers take no time at double precision): GPipe's mini-batch is (M + p - 1)(t_f + t_b)
 * plus the update and its bubble (p - 1) / (M + p - 1); 1F1B takes as long, completes a micro-batch
 * every t_f + t_b in its steady phase and stage i holds p - i stashes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "fileio.h"
#include "graph.h"
#include "jsonio.h"
#include "plan.h"
#include "sim.h"
#include "sim_train.h"
#include "testutil.h"
#include "timeline.h"

typedef struct tcase {
  const char *graph, *chip;
  int arranged[16], n_cores;
  train_options o;
} tcase;

typedef struct child_job {
  const tcase *cases;
  int n;
  const char *out;
} child_job;

static int parse(const char *text, const char *name, cJSON **root) {
  mp_error err;
  return jsonio_parse(name, text, strlen(text), root, &err) == MP_OK ? 0 : -1;
}

static int child(void *arg) {
  const child_job *cj = arg;
  cJSON *all = cJSON_CreateArray();
  chip *c = NULL;
  sim *s = NULL;
  mp_error err;
  cJSON *root = NULL;
  if (parse(cj->cases[0].chip, "chip", &root) || chip_from_json(root, "chip", &c, &err) != MP_OK ||
      sim_new(c, NULL, &s, &err) != MP_OK) {
    fprintf(stderr, "child: %s\n", err.msg);
    return 10;
  }
  cJSON_Delete(root);
  for (int i = 0; i < cj->n; i++) {
    graph *g = NULL;
    plan *p = NULL;
    train *t = NULL;
    sim_train_result r;
    if (parse(cj->cases[i].graph, "graph", &root) || graph_from_json(root, "graph", &g, &err) != MP_OK ||
        plan_new(cj->cases[i].arranged, cj->cases[i].n_cores, g->n_ops, &p, &err) != MP_OK ||
        train_new(g, &cj->cases[i].o, &t, &err) != MP_OK || sim_train_evaluate(s, t, p, &r, &err) != MP_OK) {
      fprintf(stderr, "case %d: %s\n", i, err.msg);
      return 11;
    }
    cJSON_Delete(root);
    cJSON_AddItemToArray(all, sim_train_result_to_json(&r));
    sim_train_result_clear(&r);
    train_free(t);
    plan_free(p);
    graph_free(g);
  }
  if (jsonio_save(cj->out, all, &err) != MP_OK) return 12;
  cJSON_Delete(all);
  sim_free(s);
  chip_free(c);
  return 0;
}

static cJSON *run_cases(const tcase *cases, int n) {
  static int seq;
  char name[64];
  snprintf(name, sizeof name, "train%d.json", seq++);
  child_job cj = {cases, n, testutil_temp_path(name)};
  int rc = testutil_in_child(child, &cj);
  CU_ASSERT_EQUAL(rc, 0);
  cJSON *root = NULL;
  mp_error err;
  if (rc != 0 || jsonio_load(cj.out, &root, &err) != MP_OK) return NULL;
  return root;
}

static double num(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const cJSON *stage(const cJSON *r, int i) { return cJSON_GetArrayItem(cJSON_GetObjectItem(r, "stages"), i); }

static int close_rel(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }
#define ASSERT_REL(a, b)                                                                                               \
  do {                                                                                                                 \
    double a_ = (a), b_ = (b);                                                                                         \
    if (!close_rel(a_, b_)) fprintf(stderr, "\n  %s = %.17g but %s = %.17g\n", #a, a_, #b, b_);                        \
    CU_ASSERT(close_rel(a_, b_));                                                                                      \
  } while (0)

/* p = 4 equal stages: a zero-work stem with the first layer (its input is the graph's: no input-gradient
 * there), then one Gemm of 1e6 flops per stage on a 1e6 flop/s core: t_f = 1 s, t_b = 2 s.  The NoC is
 * as fast as a chip file allows (1e15 B/s), so the Sends' 1000 bytes take 1e-12 s: 1e-12 of a pass, below
 * the 1e-9 the comparisons allow. */
static const char chain_graph[] =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"chain\",\"inputs\":[{\"name\":\"x\",\"bytes\":1000}],"
    "\"ops\":[{\"name\":\"stem\",\"type\":\"Identity\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"t0\",\"bytes\":1000}],"
    "\"macs\":0,\"flops\":0,\"weight_bytes\":0},"
    "{\"name\":\"L0\",\"type\":\"Gemm\",\"inputs\":[\"t0\"],\"outputs\":[{\"name\":\"t1\",\"bytes\":1000}],"
    "\"macs\":500000,\"flops\":1000000,\"weight_bytes\":2000},"
    "{\"name\":\"L1\",\"type\":\"Gemm\",\"inputs\":[\"t1\"],\"outputs\":[{\"name\":\"t2\",\"bytes\":1000}],"
    "\"macs\":500000,\"flops\":1000000,\"weight_bytes\":2000},"
    "{\"name\":\"L2\",\"type\":\"Gemm\",\"inputs\":[\"t2\"],\"outputs\":[{\"name\":\"t3\",\"bytes\":1000}],"
    "\"macs\":500000,\"flops\":1000000,\"weight_bytes\":2000},"
    "{\"name\":\"L3\",\"type\":\"Gemm\",\"inputs\":[\"t3\"],\"outputs\":[{\"name\":\"t4\",\"bytes\":1000}],"
    "\"macs\":500000,\"flops\":1000000,\"weight_bytes\":2000}]}";

static const char line_chip[] =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"line4\",\"mesh\":{\"width\":4,\"height\":1},"
    "\"core\":{\"flops\":1e6,\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":1e15,\"latency\":0}}";

static tcase chain_case(train_schedule s, int M, int recompute) {
  tcase c = {chain_graph, line_chip, {2, 1, 1, 1}, 4, {0}};
  train_options_default(&c.o);
  c.o.schedule = s;
  c.o.microbatches = M;
  c.o.recompute = recompute;
  return c;
}

static void gpipe_and_1f1b_should_take_the_closed_form_time_on_an_equal_chain(void) {
  enum { P = 4 };
  tcase cs[5] = {chain_case(TRAIN_GPIPE, 6, 0), chain_case(TRAIN_1F1B, 6, 0), chain_case(TRAIN_GPIPE, 1, 0),
                 chain_case(TRAIN_1F1B, 12, 0), chain_case(TRAIN_1F1B, 12, 1)};
  cJSON *res = run_cases(cs, 5);
  CU_ASSERT_PTR_NOT_NULL_FATAL(res);
  double tf = 1, tb = 2, tu = 1000 * 13 / 1e6; /* update: 1000 parameters x 13 flops (adam, fp16 master) */
  for (int k = 0; k < 5; k++) {
    const cJSON *r = cJSON_GetArrayItem(res, k);
    double M = cs[k].o.microbatches, tbk = cs[k].o.recompute ? tb + tf : tb; /* recompute: the forward again */
    ASSERT_REL(num(r, "fb_s"), (M + P - 1) * (tf + tbk));
    ASSERT_REL(num(r, "minibatch_s"), (M + P - 1) * (tf + tbk) + tu);
    ASSERT_REL(num(r, "bubble"), (P - 1) / (M + P - 1));
    ASSERT_REL(num(r, "samples_per_s"), M / ((M + P - 1) * (tf + tbk) + tu));
    ASSERT_REL(num(r, "model_minibatch_s"), num(r, "minibatch_s"));
    ASSERT_REL(num(r, "model_bubble"), num(r, "bubble"));
    for (int i = 0; i < P; i++) {
      const cJSON *s = stage(r, i);
      ASSERT_REL(num(s, "fwd_s"), M * tf);
      ASSERT_REL(num(s, "bwd_s"), M * tbk);
      ASSERT_REL(num(s, "update_s"), tu);
      ASSERT_REL(num(s, "idle_s"), (P - 1) * (tf + tbk));
      int held = cs[k].o.schedule == TRAIN_GPIPE ? (int)M : (P - i < M ? P - i : (int)M);
      CU_ASSERT_EQUAL((int)num(s, "held"), held);
      CU_ASSERT_EQUAL((int)num(s, "model_held"), held);
      /* the SRAM peak over the schedule: static + (held - 1) stashes + one micro-batch's planned arena */
      CU_ASSERT_EQUAL(num(s, "sram_peak_bytes"),
                      num(s, "static_bytes") + (held - 1) * num(s, "stash_bytes") + num(s, "peak_bytes"));
      CU_ASSERT((int)num(s, "sends") == (i < P - 1) && (int)num(s, "recvs") == (i > 0));
    }
  }
  /* 1F1B's steady phase (the backwards of stage 0 that follow a forward, micro-batches 0 .. M - p): one
   * micro-batch every t_f + t_b; and on average over the mini-batch */
  for (int k = 3; k < 5; k++) {
    const cJSON *r = cJSON_GetArrayItem(res, k);
    double tbk = cs[k].o.recompute ? tb + tf : tb;
    const cJSON *c = cJSON_GetObjectItem(r, "completions_s");
    for (int m = 1; m <= cs[k].o.microbatches - P; m++)
      ASSERT_REL(cJSON_GetArrayItem(c, m)->valuedouble - cJSON_GetArrayItem(c, m - 1)->valuedouble, tf + tbk);
    ASSERT_REL(num(r, "period_s"), tf + tbk);
    ASSERT_REL(num(r, "model_period_s"), tf + tbk);
  }
  /* recompute stashes the stage input only: less than without */
  CU_ASSERT(num(stage(cJSON_GetArrayItem(res, 4), 0), "stash_bytes") <
            num(stage(cJSON_GetArrayItem(res, 3), 0), "stash_bytes"));
  cJSON_Delete(res);
}

/* zb on the same chain: a backward splits into B (the input gradient, t_B = 1 s, the forward again on top
 * with recompute) and W (the weight gradient, t_W = 1 s); ZB-H1's fill and drain cost (p - 1)(t_f +
 * max(t_B - t_W, 0)) against 1F1B's (p - 1)(t_f + t_B + t_W), a stage holds at most min(p, M)
 * micro-batches between their forward and their W (stashes and W-stashes), and once the pipeline is full
 * a micro-batch completes every t_f + t_B + t_W. */
static void zb_should_take_zb_h1s_closed_form_time_on_an_equal_chain(void) {
  enum { P = 4 };
  tcase cs[4] = {chain_case(TRAIN_ZB, 6, 0), chain_case(TRAIN_ZB, 12, 0), chain_case(TRAIN_ZB, 12, 1),
                 chain_case(TRAIN_1F1B, 12, 0)};
  cJSON *res = run_cases(cs, 4);
  CU_ASSERT_PTR_NOT_NULL_FATAL(res);
  double tf = 1, tw = 1, tu = 1000 * 13 / 1e6;
  for (int k = 0; k < 3; k++) {
    const cJSON *r = cJSON_GetArrayItem(res, k);
    double M = cs[k].o.microbatches, tbi = cs[k].o.recompute ? 2 : 1, fill = (P - 1) * (tf + fmax(tbi - tw, 0));
    ASSERT_REL(num(r, "fb_s"), M * (tf + tbi + tw) + fill);
    ASSERT_REL(num(r, "minibatch_s"), M * (tf + tbi + tw) + fill + tu);
    ASSERT_REL(num(r, "model_minibatch_s"), num(r, "minibatch_s"));
    ASSERT_REL(num(r, "model_period_s"), tf + tbi + tw);
    for (int i = 0; i < P; i++) {
      const cJSON *s = stage(r, i);
      ASSERT_REL(num(s, "fwd_s"), M * tf);
      ASSERT_REL(num(s, "bwd_s"), M * (tbi + tw));
      ASSERT_REL(num(s, "idle_s"), fill);
      /* the peak state (stashes + W-stashes) as the model has it; test_train.c counts it by hand */
      int held = (int)num(s, "held"), w = (int)num(s, "w_held");
      CU_ASSERT(held == (int)num(s, "model_held") && w == (int)num(s, "model_w_held"));
      CU_ASSERT(held + w <= (P < M ? P : (int)M) && w <= i + 1);
      CU_ASSERT_EQUAL(num(s, "sram_peak_bytes"), num(s, "static_bytes") + (held > 1 ? held - 1 : 0) * num(s, "stash_bytes") +
                                                     w * num(s, "wstash_bytes") + num(s, "peak_bytes"));
    }
    const cJSON *c = cJSON_GetObjectItem(r, "completions_s");
    for (int m = P; m < cs[k].o.microbatches - P; m++)
      ASSERT_REL(cJSON_GetArrayItem(c, m)->valuedouble - cJSON_GetArrayItem(c, m - 1)->valuedouble, tf + tbi + tw);
  }
  /* the same chain and M under 1F1B: 2 (p - 1) s more */
  ASSERT_REL(num(cJSON_GetArrayItem(res, 3), "fb_s") - num(cJSON_GetArrayItem(res, 1), "fb_s"), 2.0 * (P - 1));
  cJSON_Delete(res);
}

/* The cache: the same plan under the same options again is a hit with the same figures; other options
 * are not; sim_checkpoint empties it.  Returns 0, or the number of the first check that failed. */
static int cache_child(void *arg) {
  (void)arg;
  tcase tc = chain_case(TRAIN_1F1B, 4, 0);
  chip *c = NULL;
  graph *g = NULL;
  plan *p = NULL;
  train *t = NULL, *t5 = NULL;
  sim *s = NULL;
  cJSON *root = NULL, *root2 = NULL;
  mp_error err;
  train_options o5 = tc.o;
  o5.microbatches = 5;
  if (parse(tc.chip, "chip", &root) || chip_from_json(root, "chip", &c, &err) != MP_OK ||
      sim_new(c, NULL, &s, &err) != MP_OK || parse(tc.graph, "graph", &root2) ||
      graph_from_json(root2, "graph", &g, &err) != MP_OK || plan_new(tc.arranged, tc.n_cores, g->n_ops, &p, &err) != MP_OK ||
      train_new(g, &tc.o, &t, &err) != MP_OK || train_new(g, &o5, &t5, &err) != MP_OK)
    return 1;
  sim_train_result a, b, d, e;
  sim_stats st0, st1, st2, st3;
  sim_get_stats(s, &st0);
  if (sim_train_evaluate(s, t, p, &a, &err) != MP_OK || sim_train_evaluate(s, t, p, &b, &err) != MP_OK) return 2;
  sim_get_stats(s, &st1);
  if (st1.evaluations - st0.evaluations != 2 || st1.cache_hits - st0.cache_hits != 1) return 3;
  if (a.minibatch_s != b.minibatch_s || a.n_stages != b.n_stages || a.bubble != b.bubble ||
      memcmp(a.stages, b.stages, (size_t)a.n_stages * sizeof *a.stages) != 0 ||
      memcmp(a.completions, b.completions, (size_t)a.microbatches * sizeof *a.completions) != 0)
    return 4;
  if (sim_train_evaluate(s, t5, p, &d, &err) != MP_OK || d.microbatches != 5) return 5;
  sim_get_stats(s, &st2);
  if (st2.cache_hits != st1.cache_hits) return 6; /* other options: simulated */
  double clock;
  if (sim_checkpoint(s, &clock, &err) != MP_OK || sim_train_evaluate(s, t, p, &e, &err) != MP_OK) return 7;
  sim_get_stats(s, &st3);
  if (st3.cache_hits != st2.cache_hits || e.n_stages != a.n_stages) return 8; /* emptied: simulated again */
  sim_train_result_clear(&a);
  sim_train_result_clear(&b);
  sim_train_result_clear(&d);
  sim_train_result_clear(&e);
  cJSON_Delete(root);
  cJSON_Delete(root2);
  train_free(t);
  train_free(t5);
  plan_free(p);
  graph_free(g);
  sim_free(s);
  chip_free(c);
  return 0;
}

static void a_plan_simulated_again_should_come_from_the_cache_until_a_checkpoint(void) {
  CU_ASSERT_EQUAL(testutil_in_child(cache_child, NULL), 0);
}

/* A DAG with a skip connection over two stages, multi-core groups on a 2D mesh with latency, and a core
 * too small for the first stage (DRAM streams): every schedule runs to the end, holds what the model
 * says, and every pass of the model is simulated (contention aside). */
static const char skip_graph[] =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"skip\",\"inputs\":[{\"name\":\"x\",\"bytes\":4096}],"
    "\"ops\":[{\"name\":\"A\",\"type\":\"Conv+Relu\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"a\",\"bytes\":65536}],"
    "\"macs\":2000000,\"flops\":4100000,\"weight_bytes\":300000},"
    "{\"name\":\"B\",\"type\":\"Conv\",\"inputs\":[\"a\"],\"outputs\":[{\"name\":\"b\",\"bytes\":65536}],"
    "\"macs\":3000000,\"flops\":6000000,\"weight_bytes\":20000},"
    "{\"name\":\"C\",\"type\":\"Relu\",\"inputs\":[\"b\"],\"outputs\":[{\"name\":\"c\",\"bytes\":65536}],"
    "\"macs\":0,\"flops\":30000,\"weight_bytes\":0},"
    "{\"name\":\"D\",\"type\":\"Add\",\"inputs\":[\"a\",\"c\"],\"outputs\":[{\"name\":\"d\",\"bytes\":65536}],"
    "\"macs\":0,\"flops\":30000,\"weight_bytes\":0},"
    "{\"name\":\"E\",\"type\":\"Gemm\",\"inputs\":[\"d\"],\"outputs\":[{\"name\":\"y\",\"bytes\":64}],"
    "\"macs\":1000000,\"flops\":2000000,\"weight_bytes\":40000}]}";

static const char mesh_chip[] =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"m3\",\"mesh\":{\"width\":3,\"height\":3},"
    "\"core\":{\"flops\":1e10,\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":1e10,\"latency\":5e-9},"
    "\"dram\":{\"bandwidth\":2e10,\"ports\":[[0,1]]},\"overrides\":[{\"core\":0,\"sram_bytes\":65536}]}";

static void schedules_should_run_a_dag_with_skips_gathers_and_streams(void) {
  tcase cs[4];
  for (int k = 0; k < 4; k++) {
    cs[k] = (tcase){skip_graph, mesh_chip, {0, 1, 0, 0, 2, 1, 0, 0, 1}, 9, {0}};
    train_options_default(&cs[k].o);
    cs[k].o.microbatches = 5;
    cs[k].o.schedule = k == 0 ? TRAIN_GPIPE : k == 3 ? TRAIN_ZB : TRAIN_1F1B;
    cs[k].o.recompute = k == 2;
  }
  cJSON *res = run_cases(cs, 4);
  CU_ASSERT_PTR_NOT_NULL_FATAL(res);
  /* zb streams stage 0 around its W passes too: a third of its traffic more than 1F1B (equal stashes there:
   * stage 0 holds min(p, M) = 4 under both) */
  CU_ASSERT(num(cJSON_GetArrayItem(res, 3), "dram_bytes") > num(cJSON_GetArrayItem(res, 1), "dram_bytes"));
  for (int k = 0; k < 4; k++) {
    const cJSON *r = cJSON_GetArrayItem(res, k);
    CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(r, "stages")), 4);
    CU_ASSERT(num(r, "minibatch_s") > num(r, "fb_s"));
    CU_ASSERT(num(r, "bubble") > 0 && num(r, "bubble") < 1);
    CU_ASSERT(num(r, "dram_bytes") > 0); /* stage 0's first core holds 64 KiB */
    CU_ASSERT(!cJSON_IsTrue(cJSON_GetObjectItem(r, "feasible")));
    /* stage 2 (D) receives a from stage 0 and c from stage 1: two Recvs, two gradients back */
    CU_ASSERT_EQUAL((int)num(stage(r, 2), "recvs"), 2);
    CU_ASSERT_EQUAL((int)num(stage(r, 0), "sends"), 2); /* a to stages 1 and 2 */
    const cJSON *c = cJSON_GetObjectItem(r, "completions_s");
    for (int m = 1; m < 5; m++) CU_ASSERT(cJSON_GetArrayItem(c, m)->valuedouble > cJSON_GetArrayItem(c, m - 1)->valuedouble);
    for (int i = 0; i < 4; i++) {
      const cJSON *s = stage(r, i);
      CU_ASSERT_EQUAL(num(s, "held"), num(s, "model_held"));
      /* contention only slows (the simulated DRAM stream pays a hop's latency less than the model's) */
      CU_ASSERT(num(s, "fwd_s") >= 5 * num(s, "model_fwd_s") * (1 - 1e-4));
      CU_ASSERT(num(s, "bwd_s") >= 5 * num(s, "model_bwd_s") * (1 - 1e-4));
    }
  }
  cJSON_Delete(res);
}

/* VGG-16 trained on the bundled 4x4 (1F1B, the defaults) in optimal's 5-stage inference plan: its
 * groups of 3 to 9 cores stream from the two ports.  With sim_options.fast_streams the cores of a port
 * stream as one task (sim_int.h, "DRAM streams"): the same bytes in fewer activities, and another
 * figure, since a batch has one share of a contended link where its cores had one each (both figures as
 * `simulate --mode train` printed them). */
static const int vgg_opt4[16] = {0, 3, 0, 0, 3, 0, 2, 0, 0, 0, 0, 6, 0, 0, 0, 9};

/* Trains that plan with sim_options.fast_streams = *arg; 0 when its figures are the expected ones. */
static int streams_child(void *arg) {
  int fast = *(const int *)arg;
  chip *c = NULL;
  graph *g = NULL;
  plan *p = NULL;
  train *t = NULL;
  sim *s = NULL;
  mp_error err;
  sim_options o;
  sim_options_init(&o);
  o.fast_streams = fast;
  train_options to;
  train_options_default(&to);
  sim_train_result r;
  if (chip_load(testutil_src("platforms/mesh4x4.json"), &c, &err) != MP_OK ||
      graph_load(testutil_src("traces/vgg16.json"), &g, &err) != MP_OK ||
      plan_new(vgg_opt4, 16, g->n_ops, &p, &err) != MP_OK || train_new(g, &to, &t, &err) != MP_OK ||
      sim_new(c, &o, &s, &err) != MP_OK || sim_train_evaluate(s, t, p, &r, &err) != MP_OK) {
    fprintf(stderr, "streams child: %s\n", err.msg);
    return 10;
  }
  static const double samples_per_s[2] = {19.1742851695, 19.1555675242};
  static const long activities[2] = {709, 469};
  int rc = !close_rel(r.samples_per_s, samples_per_s[fast]) || r.dram_bytes != UINT64_C(50286600066) ||
           r.activities != activities[fast];
  if (rc)
    fprintf(stderr, "\n  fast_streams %d: %.12g samples/s, %llu DRAM bytes, %ld activities\n", fast, r.samples_per_s,
            (unsigned long long)r.dram_bytes, r.activities);
  sim_train_result_clear(&r);
  sim_free(s);
  train_free(t);
  plan_free(p);
  graph_free(g);
  chip_free(c);
  return rc;
}

static void training_with_fast_streams_should_stream_a_ports_cores_as_one_task(void) {
  int per_core = 0, batched = 1;
  CU_ASSERT_EQUAL(testutil_in_child(streams_child, &per_core), 0);
  CU_ASSERT_EQUAL(testutil_in_child(streams_child, &batched), 0);
}

/* An all-gather's ptasks leave out the chain links that cannot bind (sim_int.h, "All-gathers"), and
 * executions wait on the job's timer (sim_int.h, "Timer"): ResNet-50 trained on 8x8 (2 MiB per core:
 * every stage streams) under 1F1B and zb, in plans whose groups have up to 38 cores (chains of three
 * blocks), gives every link's figures, and SimGrid's own executions' (to 1e-9 relative, 1e-15 s
 * absolute: the engine clock's last bits). */
typedef struct gather_job {
  int full_gather;
  const char *out;
  int simgrid_waits;
} gather_job;

static int gather_child(void *arg) {
  const gather_job *gj = arg;
  graph *g = NULL;
  chip *c = NULL;
  sim *s = NULL;
  mp_error err;
  sim_options so;
  sim_options_init(&so);
  so.full_gather = gj->full_gather;
  so.simgrid_waits = gj->simgrid_waits;
  if (graph_load(testutil_src("traces/resnet50.json"), &g, &err) != MP_OK ||
      chip_load(testutil_src("platforms/mesh8x8.json"), &c, &err) != MP_OK || sim_new(c, &so, &s, &err) != MP_OK)
    return 10;
  static const int layers[3][4] = {{20, 0, 0, 0}, {10, 20, 0, 0}, {5, 10, 15, 0}}; /* the last takes the rest */
  static const int cores[3][4] = {{26, 38, 0, 0}, {8, 38, 18, 0}, {4, 12, 10, 38}};
  cJSON *all = cJSON_CreateArray();
  for (int k = 0; k < 6; k++) {
    int n = k % 3 + 2, l[4], cs[4], left = g->n_ops;
    for (int i = 0; i < n; i++) {
      l[i] = i == n - 1 ? left : layers[k % 3][i];
      left -= l[i];
      cs[i] = cores[k % 3][i];
    }
    train_options o;
    train_options_default(&o);
    o.microbatches = 4;
    o.schedule = k < 3 ? TRAIN_1F1B : TRAIN_ZB;
    plan *p = NULL;
    train *t = NULL;
    sim_train_result r;
    if (plan_from_stages(l, cs, n, &p, &err) != MP_OK || train_new(g, &o, &t, &err) != MP_OK ||
        sim_train_evaluate(s, t, p, &r, &err) != MP_OK) {
      fprintf(stderr, "case %d: %s\n", k, err.msg);
      return 11;
    }
    cJSON_AddItemToArray(all, sim_train_result_to_json(&r));
    sim_train_result_clear(&r);
    train_free(t);
    plan_free(p);
  }
  if (jsonio_save(gj->out, all, &err) != MP_OK) return 12;
  cJSON_Delete(all);
  sim_free(s);
  chip_free(c);
  graph_free(g);
  return 0;
}

/* Those six runs with every link, or (waits 1) with SimGrid's own executions instead of the timer's
 * (sim_int.h, "Timer"), against the default: the same figures. */
static void same_figures_as_the_default(int waits) {
  cJSON *res[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++) {
    gather_job gj = {i && !waits, testutil_temp_path(i ? "gather_other.json" : "gather_kept.json"), i && waits};
    mp_error err;
    CU_ASSERT_EQUAL_FATAL(testutil_in_child(gather_child, &gj), 0);
    CU_ASSERT_EQUAL(jsonio_load(gj.out, &res[i], &err), MP_OK);
  }
  CU_ASSERT_PTR_NOT_NULL_FATAL(res[0]);
  CU_ASSERT_PTR_NOT_NULL_FATAL(res[1]);
  CU_ASSERT_EQUAL(cJSON_GetArraySize(res[0]), 6);
  CU_ASSERT(num(cJSON_GetArrayItem(res[0], 0), "dram_bytes") > 0);
  CU_ASSERT_EQUAL(testutil_json_close(res[0], res[1], 1e-9, 1e-15), 1);
  cJSON_Delete(res[0]);
  cJSON_Delete(res[1]);
}

static void all_gathers_without_the_links_that_cannot_bind_should_give_the_same_figures(void) {
  same_figures_as_the_default(0);
}

static void executions_on_the_timer_should_give_the_figures_of_simgrids_own(void) { same_figures_as_the_default(1); }

/* The timeline of GPipe's mini-batch of M = 4 on the equal chain: the run is the one sim_train_evaluate
 * makes (its closed form), the file passes timeline_validate, and it holds per stage M forwards and M
 * backwards, its update, the 3M Sends and 3M gradients between the stages and the four cores' static
 * bytes: 14M + 8 events.  Stage 3 runs forward m from 3 + m s and its first backward from 7 s. */
static double first_ts(const cJSON *events, const char *name) {
  double t = INFINITY;
  const cJSON *e;
  cJSON_ArrayForEach(e, events) {
    const cJSON *n = cJSON_GetObjectItem(e, "name"), *ph = cJSON_GetObjectItem(e, "ph");
    if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0 && cJSON_IsString(ph) &&
        strchr("BX", ph->valuestring[0]) && num(e, "ts") < t)
      t = num(e, "ts");
  }
  return t;
}

static int timeline_child(void *arg) {
  (void)arg;
  tcase k = chain_case(TRAIN_GPIPE, 4, 0);
  chip *c = NULL;
  graph *g = NULL;
  plan *p = NULL;
  sim *s = NULL;
  train *t = NULL;
  timeline *tl = NULL;
  cJSON *root = NULL;
  mp_error err;
  sim_train_result r;
  char *text = NULL;
  size_t len = 0, n_events = 0;
  if (parse(k.chip, "chip", &root) || chip_from_json(root, "chip", &c, &err) != MP_OK) return 60;
  cJSON_Delete(root);
  if (parse(k.graph, "graph", &root) || graph_from_json(root, "graph", &g, &err) != MP_OK ||
      plan_new(k.arranged, k.n_cores, g->n_ops, &p, &err) != MP_OK || train_new(g, &k.o, &t, &err) != MP_OK ||
      sim_new(c, NULL, &s, &err) != MP_OK || timeline_new(c, "chain", &tl, &err) != MP_OK ||
      sim_train_evaluate_timeline(s, t, p, tl, &r, &err) != MP_OK) {
    fprintf(stderr, "\n  %s\n", err.msg);
    return 61;
  }
  cJSON_Delete(root);
  if (!close_rel(r.fb_s, 7 * 3.0)) return 62; /* (M + p - 1)(t_f + t_b) */
  if (timeline_count(tl) != 14 * 4 + 8) {
    fprintf(stderr, "\n  %zu events\n", timeline_count(tl));
    return 63;
  }
  if (timeline_to_string(tl, &text, &len, &err) != MP_OK || timeline_validate("t.json", text, len, &n_events, &err) != MP_OK)
    return 64;
  cJSON *doc = cJSON_Parse(text), *events = cJSON_GetObjectItem(doc, "traceEvents");
  if (!events || !close_rel(first_ts(events, "L3"), 3e6) || !close_rel(first_ts(events, "L3 (backward)"), 7e6) ||
      !isfinite(first_ts(events, "grad t3")) || !isfinite(first_ts(events, "update")))
    return 65;
  cJSON_Delete(doc);
  free(text);
  sim_train_result_clear(&r);
  timeline_free(tl);
  sim_free(s);
  train_free(t);
  plan_free(p);
  graph_free(g);
  chip_free(c);
  return 0;
}

static void a_timeline_should_show_every_pass_send_and_update_of_the_mini_batch(void) {
  CU_ASSERT_EQUAL(testutil_in_child(timeline_child, NULL), 0);
}

/* Record and replay.  The first child records the DAG above under GPipe, 1F1B, 1F1B with recompute and
 * zb on mesh_chip, reads each trace back from its text (which must write again to the same text) and
 * replays it; the second does the same on other_chip (4 MiB on every core, so nothing streams; faster
 * cores, a slower NoC) from the first's files.  Each replay's JSON must be sim_train_evaluate's (to 1e-9,
 * testutil_json_close: the engine's clock grows from one run to the next, which moves the last of the 12
 * digits a figure keeps): on its own chip the same run, elsewhere what simulating the plan there gives
 * (test_cli_sim compares whole processes' output exactly).  Then the refusals of sim_train_replay: a pass that differs
 * from the first of its kind, a backward before its forward, each kind of trace given to the other's
 * replay, a weight-gradient pass before its backward and a 'wgrad' outside zb.  A child returns a
 * distinct code per failed check. */
static const char other_chip[] =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"m3b\",\"mesh\":{\"width\":3,\"height\":3},"
    "\"core\":{\"flops\":2e10,\"sram_bytes\":4194304},\"noc\":{\"bandwidth\":3e9,\"latency\":2e-8},"
    "\"dram\":{\"bandwidth\":2e10,\"ports\":[[2,2]]}}";

typedef struct rr_job {
  const char *chip;
  int record;
} rr_job;

static const char *rr_path(int k) {
  char name[32];
  snprintf(name, sizeof name, "rr%d.trace", k);
  return testutil_temp_path(name);
}

static int backward_of(trace_kind k) { return k == TRACE_GRECV || k == TRACE_BACKWARD || k == TRACE_GSEND; }

/* The refusals, on the recorded trace tr (restored after each edit). */
static int refusals(sim *s, trace *tr) {
  sim_train_result r;
  mp_error err;
  trace_group *G = &tr->groups[0];
  int i = 0;
  while (G->actions[i].kind != TRACE_COMPUTE || G->actions[i].microbatch != 3) i++;
  G->actions[i].flops += 1;
  if (sim_train_replay(s, tr, &r, &err) != MP_INPUT || !strstr(err.msg, "the forward of micro-batch 3 of group 0") ||
      !strstr(err.msg, "differs from micro-batch 0's"))
    return 40;
  G->actions[i].flops -= 1;
  /* the last group's first backward moved before its first forward: nothing waits for it, so the trace
   * is well formed, but no stage can run a micro-batch backward before forward */
  trace_group *L = &tr->groups[tr->n_groups - 1];
  int f0 = 0, b0 = 0;
  while (L->actions[b0].kind != TRACE_BACKWARD) b0++;
  int b1 = b0;
  while (b1 < L->n_actions && backward_of(L->actions[b1].kind) && L->actions[b1].microbatch == 0) b1++;
  trace_action *copy = malloc((size_t)L->n_actions * sizeof *copy);
  if (!copy) return 41;
  memcpy(copy, L->actions, (size_t)L->n_actions * sizeof *copy);
  memcpy(L->actions, copy + b0, (size_t)(b1 - b0) * sizeof *copy);
  memcpy(L->actions + (b1 - b0), copy + f0, (size_t)(b0 - f0) * sizeof *copy);
  mp_status st = sim_train_replay(s, tr, &r, &err);
  memcpy(L->actions, copy, (size_t)L->n_actions * sizeof *copy);
  free(copy);
  if (st != MP_INPUT || !strstr(err.msg, "runs the backward of micro-batch 0 before its forward")) {
    fprintf(stderr, "\n  %s\n", err.msg);
    return 42;
  }
  sim_result ir;
  if (sim_replay(s, tr, &ir, &err) != MP_USAGE || !strstr(err.msg, "a training trace")) return 43;
  tr->training = 0;
  st = sim_train_replay(s, tr, &r, &err);
  tr->training = 1;
  if (st != MP_USAGE || !strstr(err.msg, "an inference trace")) return 44;
  return 0;
}

/* zb's: a weight-gradient pass before its backward, and a trace of 1F1B with a 'wgrad'. */
static int zb_refusals(sim *s, trace *tr) {
  sim_train_result r;
  mp_error err;
  trace_group *L = &tr->groups[tr->n_groups - 1];
  int b0 = 0, w0 = 0;
  while (L->actions[b0].kind != TRACE_BACKWARD) b0++;
  while (L->actions[w0].kind != TRACE_WGRAD) w0++;
  if (L->actions[w0].microbatch != 0 || w0 < b0) return 50;
  trace_action w = L->actions[w0];
  memmove(L->actions + b0 + 1, L->actions + b0, (size_t)(w0 - b0) * sizeof w); /* W0 just before B0 */
  L->actions[b0] = w;
  mp_status st = sim_train_replay(s, tr, &r, &err);
  memmove(L->actions + b0, L->actions + b0 + 1, (size_t)(w0 - b0) * sizeof w);
  L->actions[w0] = w;
  if (st != MP_INPUT || !strstr(err.msg, "runs the weight-gradient pass of micro-batch 0 before its backward")) {
    fprintf(stderr, "\n  %s\n", err.msg);
    return 51;
  }
  tr->train.schedule = TRAIN_1F1B;
  st = sim_train_replay(s, tr, &r, &err);
  tr->train.schedule = TRAIN_ZB;
  if (st != MP_INPUT || !strstr(err.msg, "'wgrad' is an action of zb traces")) {
    fprintf(stderr, "\n  %s\n", err.msg);
    return 52;
  }
  return sim_train_replay(s, tr, &r, &err) == MP_OK ? (sim_train_result_clear(&r), 0) : 53;
}

static int rr_child(void *arg) {
  const rr_job *job = arg;
  chip *c = NULL;
  graph *g = NULL;
  plan *p = NULL;
  sim *s = NULL;
  cJSON *root = NULL;
  mp_error err;
  int arranged[] = {0, 1, 0, 0, 2, 1, 0, 0, 1};
  if (parse(job->chip, "chip", &root) || chip_from_json(root, "chip", &c, &err) != MP_OK) return 20;
  cJSON_Delete(root);
  if (parse(skip_graph, "graph", &root) || graph_from_json(root, "graph", &g, &err) != MP_OK ||
      plan_new(arranged, 9, g->n_ops, &p, &err) != MP_OK || sim_new(c, NULL, &s, &err) != MP_OK)
    return 21;
  cJSON_Delete(root);
  for (int k = 0; k < 4; k++) {
    train_options o;
    train_options_default(&o);
    o.microbatches = 5;
    o.schedule = k == 0 ? TRAIN_GPIPE : k == 3 ? TRAIN_ZB : TRAIN_1F1B;
    o.recompute = k == 2;
    train *t = NULL;
    trace *rec = NULL, *back = NULL;
    char *text = NULL, *again = NULL;
    size_t len = 0;
    sim_train_result a, b;
    if (train_new(g, &o, &t, &err) != MP_OK) return 22;
    if (job->record && (sim_train_record(s, t, p, &rec, &err) != MP_OK || trace_write(rec, rr_path(k), &err) != MP_OK))
      return 23;
    if (fileio_read_all(rr_path(k), &text, &len, &err) != MP_OK ||
        trace_parse(rr_path(k), text, len, &back, &err) != MP_OK || trace_to_string(back, &again, NULL, &err) != MP_OK)
      return 24;
    if (strcmp(text, again) != 0) return 25;
    if (sim_train_evaluate(s, t, p, &a, &err) != MP_OK || sim_train_replay(s, back, &b, &err) != MP_OK) {
      fprintf(stderr, "\n  %s\n", err.msg);
      return 26;
    }
    cJSON *ja = sim_train_result_to_json(&a), *jb = sim_train_result_to_json(&b);
    if (!testutil_json_close(ja, jb, 1e-9, 0)) return 30 + k;
    if (job->record && k == 2 && (num(ja, "dram_bytes") <= 0 || a.feasible)) return 27; /* core 0 streams here */
    if (!job->record && k == 2 && (num(ja, "dram_bytes") != 0 || !a.feasible)) return 28; /* and fits there */
    int rc = job->record && k == 1 ? refusals(s, back) : job->record && k == 3 ? zb_refusals(s, back) : 0;
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    sim_train_result_clear(&a);
    sim_train_result_clear(&b);
    free(text);
    free(again);
    trace_free(rec);
    trace_free(back);
    train_free(t);
    if (rc) return rc;
  }
  sim_free(s);
  plan_free(p);
  graph_free(g);
  chip_free(c);
  return 0;
}

static void a_recorded_mini_batch_should_replay_to_the_simulated_result_here_and_on_another_chip(void) {
  rr_job here = {mesh_chip, 1}, there = {other_chip, 0};
  CU_ASSERT_EQUAL(testutil_in_child(rr_child, &here), 0);
  CU_ASSERT_EQUAL(testutil_in_child(rr_child, &there), 0);
}

/* A hand-written trace (test_trace.c's good_train, kept as the trace fuzzer's seed) on a 2 x 1 chip of 1e9
 * flop/s cores and a 1e9 B/s NoC without latency: c0's forward (1000 flops) 1 us, t_a's 64 bytes 64 ns,
 * c1's forward 0.5 us and backward 1 us, the gradient back 64 ns, c0's backward 2 us: the last backward
 * ends at 4.628 us, and c0's update of 12 flops 12 ns later.  A second grecv of the same gradient waits
 * for the same arrival. */
static int hand_child(void *arg) {
  (void)arg;
  static const char line2[] = "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"t2\",\"mesh\":{\"width\":2,"
                              "\"height\":1},\"core\":{\"flops\":1e9,\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":1e9,"
                              "\"latency\":0}}";
  chip *c = NULL;
  sim *s = NULL;
  cJSON *root = NULL;
  mp_error err;
  char *text = NULL;
  size_t len = 0;
  if (parse(line2, "chip", &root) || chip_from_json(root, "chip", &c, &err) != MP_OK ||
      sim_new(c, NULL, &s, &err) != MP_OK ||
      fileio_read_all(testutil_src("tests/fuzz/seeds/trace/two-groups-train.trace"), &text, &len, &err) != MP_OK)
    return 50;
  cJSON_Delete(root);
  const char *from = "c0 grecv c1 0 t_a\n";
  char *at = strstr(text, from), *dup = malloc(len + strlen(from) + 1), *count = NULL;
  if (!at || !dup) return 51;
  size_t head = (size_t)(at - text);
  memcpy(dup, text, head);
  strcpy(dup + head, from);
  strcat(dup, at);
  if (!(count = strstr(dup, "actions 10\n"))) return 52;
  memcpy(count, "actions 11\n", 11);
  for (int k = 0; k < 2; k++) {
    trace *t = NULL;
    sim_train_result r;
    const char *src = k ? dup : text;
    if (trace_parse("hand.trace", src, strlen(src), &t, &err) != MP_OK || sim_train_replay(s, t, &r, &err) != MP_OK) {
      fprintf(stderr, "\n  %s\n", err.msg);
      return 53;
    }
    if (!close_rel(r.fb_s, 4.628e-6) || !close_rel(r.minibatch_s, 4.640e-6) || r.n_stages != 2 ||
        !close_rel(r.stages[0].fwd_s, 1e-6) || !close_rel(r.stages[1].bwd_s, 1e-6) || r.stages[0].held != 1)
      return 54 + k;
    sim_train_result_clear(&r);
    trace_free(t);
  }
  free(dup);
  free(text);
  sim_free(s);
  chip_free(c);
  return 0;
}

static void a_hand_written_mini_batch_should_replay_to_its_hand_count(void) {
  CU_ASSERT_EQUAL(testutil_in_child(hand_child, NULL), 0);
}

int main(int argc, char **argv) {
  CU_TestInfo tests[] = {
      {"a_plan_simulated_again_should_come_from_the_cache_until_a_checkpoint",
       a_plan_simulated_again_should_come_from_the_cache_until_a_checkpoint},
      {"gpipe_and_1f1b_should_take_the_closed_form_time_on_an_equal_chain",
       gpipe_and_1f1b_should_take_the_closed_form_time_on_an_equal_chain},
      {"zb_should_take_zb_h1s_closed_form_time_on_an_equal_chain", zb_should_take_zb_h1s_closed_form_time_on_an_equal_chain},
      {"schedules_should_run_a_dag_with_skips_gathers_and_streams", schedules_should_run_a_dag_with_skips_gathers_and_streams},
      {"training_with_fast_streams_should_stream_a_ports_cores_as_one_task",
       training_with_fast_streams_should_stream_a_ports_cores_as_one_task},
      {"a_hand_written_mini_batch_should_replay_to_its_hand_count", a_hand_written_mini_batch_should_replay_to_its_hand_count},
      {"all_gathers_without_the_links_that_cannot_bind_should_give_the_same_figures",
       all_gathers_without_the_links_that_cannot_bind_should_give_the_same_figures},
      {"executions_on_the_timer_should_give_the_figures_of_simgrids_own",
       executions_on_the_timer_should_give_the_figures_of_simgrids_own},
      {"a_timeline_should_show_every_pass_send_and_update_of_the_mini_batch",
       a_timeline_should_show_every_pass_send_and_update_of_the_mini_batch},
      {"a_recorded_mini_batch_should_replay_to_the_simulated_result_here_and_on_another_chip",
       a_recorded_mini_batch_should_replay_to_the_simulated_result_here_and_on_another_chip},
      CU_TEST_INFO_NULL};
  return testutil_run("sim_train", tests, argc, argv);
}
