/* Tests of optimal_train.c against brute force with training memory: on random small instances (DAGs with
 * skip connections; uniform and heterogeneous chips, with and without DRAM ports, memory sometimes too
 * small; GPipe or 1F1B, 1-4 micro-batches, every optimizer, with and without recompute) every plan is
 * enumerated and costed on the training model (train_evaluate), its stages held with the stashes
 * train_in_flight gives them (under 1F1B: how many stages follow).  optimal's certified period bound must
 * be the brute-force optimum of the lower relaxation, that relaxation must be recomputed here from
 * train.h's figures on chips without DRAM (compute and the Sends, memory first), never above a plan's
 * period; its mini-batch bound never above the brute-force least mini-batch, the figures it reports its
 * plan's, and its plan the least mini-batch whenever it says exact; how often it is is measured. */
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
#include "optimal_train.h"
#include "plan.h"
#include "strbuf.h"
#include "testgen.h"
#include "testutil.h"
#include "train.h"

/* A random DAG of n layers of trainable types (Conv, Gemm, Relu, Add): layer j reads the previous
 * layer's output and, with probability 1/2, a random earlier layer's (a skip connection). */
static graph *random_graph(int n) {
  static const char *const types[] = {"Conv", "Gemm", "Relu", "Add"};
  strbuf b = {0};
  strbuf_printf(&b, "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"r\","
                    "\"inputs\":[{\"name\":\"in\",\"bytes\":%d}],\"ops\":[",
                1 + testgen_below(5000));
  for (int j = 0; j < n; j++) {
    const char *type = types[testgen_below(4)];
    int weighted = type[0] == 'C' || type[0] == 'G';
    uint64_t macs = weighted ? (uint64_t)testgen_below(1000000) : 0;
    uint64_t flops = 2 * macs + (uint64_t)testgen_below(1000);
    strbuf_printf(&b, "%s{\"name\":\"op%d\",\"type\":\"%s\",\"inputs\":[", j ? "," : "", j, type);
    if (j == 0)
      strbuf_printf(&b, "\"in\"");
    else
      strbuf_printf(&b, "\"t%d\"", j - 1);
    if (j >= 2 && testgen_below(2)) strbuf_printf(&b, ",\"t%d\"", testgen_below(j - 1));
    int weight_bytes = weighted ? testgen_below(100000) : 0; /* drawn first: GCC's order (testgen.h) */
    int out_bytes = testgen_below(40000);
    strbuf_printf(&b, "],\"outputs\":[{\"name\":\"t%d\",\"bytes\":%d}],\"macs\":%llu,\"flops\":%llu,"
                      "\"weight_bytes\":%d}",
                  j, out_bytes, (unsigned long long)macs, (unsigned long long)flops, weight_bytes);
  }
  strbuf_printf(&b, "]}");
  graph *g = b.oom ? NULL : testutil_graph_text(b.s);
  strbuf_clear(&b);
  return g;
}

static int close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-300; }

/* ---- brute force ------------------------------------------------------------------------------------ */

typedef struct brute {
  const graph *g;
  const chip *c;
  const train_options *o;
  train *t;
  cost_model *m;
  double best, relaxed;         /* least full-model period / relaxed value over every plan */
  double best_fit, relaxed_fit; /* the same over the plans that fit */
  double best_mb, best_mb_fit;  /* least full-model mini-batch time, over every plan / those that fit */
  int any_fits;
  long plans;
  int bad_plan, bad_relaxed, above_period; /* plans where a check failed */
} brute;

/* The relaxation of plan p recomputed from train.h (chips without DRAM): per stage the larger of its
 * compute (F_f + F_b + recompute over its cores, its all-gathers) and its Sends both ways, with the stashes
 * train_in_flight gives stage i of n; *fits when every stage's per-core need is within its SRAM. */
static double reference_relaxed(brute *b, const plan *p, int *fits) {
  double worst = 0;
  *fits = 1;
  mp_error err;
  for (int i = 0; i < p->n_stages; i++) {
    const plan_stage *s = &p->stages[i];
    train_range r;
    if (train_range_of(b->t, s->first_layer, s->n_layers, &r, &err) != MP_OK) return -1;
    double f = 0, sram = INFINITY;
    for (int k = s->first_core; k < s->first_core + s->n_cores; k++) {
      f += b->c->cores[k].flops;
      sram = fmin(sram, (double)b->c->cores[k].sram_bytes);
    }
    const chip_core *first = &b->c->cores[s->first_core];
    double compute = cost_compute_s((double)(r.fwd_flops + r.bwd_flops + r.recompute_flops),
                                    b->c->heterogeneous ? f : s->n_cores * first->flops,
                                    (double)(r.fwd_gather + r.bwd_gather), s->n_cores, b->c->noc_bandwidth);
    double gamma = first->transfer_factor;
    for (int k = s->first_core; k < s->first_core + s->n_cores; k++)
      gamma = fmax(gamma, b->c->cores[k].transfer_factor);
    double send = cost_send_s((double)(r.send_bytes + r.recv_bytes), gamma, b->c->noc_bandwidth);
    worst = fmax(worst, fmax(compute, send));
    train_hold h = train_hold_of(b->o, i, p->n_stages);
    if (train_hold_mem_bytes(&r, s->n_cores, &h) > sram) *fits = 0;
  }
  return worst;
}

static void visit_plan(void *ctx, const plan *p) {
  brute *b = ctx;
  mp_error err;
  int fits = 0, ref_fits = 0;
  train_result *r = NULL;
  double relaxed = -1;
  if (train_evaluate(b->t, b->c, p, &r, &err) != MP_OK ||
      optimal_train_relaxed(b->g, b->c, b->o, p, &relaxed, &err) != MP_OK) {
    train_result_free(r);
    b->bad_plan++;
    return;
  }
  double period = r->period_s, mb = r->minibatch_s;
  fits = r->feasible;
  train_result_free(r);
  if (b->plans == 0 || mb < b->best_mb) b->best_mb = mb;
  if (fits && (!b->any_fits || mb < b->best_mb_fit)) b->best_mb_fit = mb;
  if (b->c->n_dram == 0) {
    double ref = reference_relaxed(b, p, &ref_fits);
    if (!close_to(ref, relaxed) || ref_fits != fits) b->bad_relaxed++;
  }
  if (relaxed > period * (1 + 1e-12)) b->above_period++;
  if (b->plans == 0 || period < b->best) b->best = period;
  if (b->plans == 0 || relaxed < b->relaxed) b->relaxed = relaxed;
  if (fits && (!b->any_fits || period < b->best_fit)) b->best_fit = period;
  if (fits && (!b->any_fits || relaxed < b->relaxed_fit)) b->relaxed_fit = relaxed;
  b->any_fits |= fits;
  b->plans++;
}

typedef struct tally {
  int instances, hetero, streaming, gpipe, failures, equal, exact, classes;
  double worst_gap;
} tally;

/* Runs one instance; returns 0 when every check holds, else prints why. */
static int one_instance(int id, graph *g, chip *c, const train_options *o, tally *t) {
  mp_error err;
  brute b = {.g = g, .c = c, .o = o};
  if (!g || !c || train_new(g, o, &b.t, &err) != MP_OK) return 1;
  b.bad_plan += testgen_each_plan(c->n_cores, g->n_ops, visit_plan, &b);
  int mem_first = c->n_dram == 0 && b.any_fits; /* memory has no time there: a plan that fits comes first */
  if (mem_first) {
    b.best = b.best_fit;
    b.relaxed = b.relaxed_fit;
    b.best_mb = b.best_mb_fit;
  }
  optimal_result res;
  method_report rep = {0};
  plan *p = NULL;
  int bad = 0, fits = 0;
  if (optimal_train_solve(g, c, o, &p, &res, &rep, &err) != MP_OK) {
    fprintf(stderr, "\ninstance %d: optimal_train failed: %s", id, err.msg);
    train_free(b.t);
    return 1;
  }
  train_result *mine = NULL;
  double t_opt = -1, mb_opt = -1;
  if (train_evaluate(b.t, c, p, &mine, &err) == MP_OK) {
    t_opt = mine->period_s;
    mb_opt = mine->minibatch_s;
    fits = mine->feasible;
  }
  train_result_free(mine);
  /* the bound is the relaxation's least period (over the plans that fit, memory first); zb's relaxation
   * holds no W-stashes, so plans that fit it may not fit zb and its bound may be lower than that */
  int bound_ok = o->schedule == TRAIN_ZB ? res.lower_s <= b.relaxed * (1 + 1e-12) : close_to(res.lower_s, b.relaxed);
  if (b.bad_plan || b.bad_relaxed || b.above_period || !bound_ok || t_opt != res.period_s ||
      b.best > res.period_s || mb_opt != res.value || b.best_mb > res.value ||
      res.lower_value > b.best_mb * (1 + 1e-12) || (res.exact && !close_to(res.value, b.best_mb)) ||
      (mem_first && !fits)) {
    fprintf(stderr,
            "\ninstance %d (%d layers, %d cores, %s, %d ports, %s M %d, %s%s): %ld plans, %d bad, %d relaxations "
            "off the reference, %d above their period; lower %.17g relaxed brute %.17g; brute %.17g optimal %.17g "
            "(its plan %.17g, fits %d) exact %d; mini-batch brute %.17g optimal %.17g (its plan %.17g) bound %.17g",
            id, g->n_ops, c->n_cores, c->heterogeneous ? "heterogeneous" : "uniform", c->n_dram,
            train_schedule_name(o->schedule), o->microbatches, train_optimizer_name(o->optimizer),
            o->recompute ? ", recompute" : "", b.plans, b.bad_plan, b.bad_relaxed, b.above_period, res.lower_s,
            b.relaxed, b.best, res.period_s, t_opt, fits, res.exact, b.best_mb, res.value, mb_opt, res.lower_value);
    bad = 1;
  }
  /* Did the stash classes decide anything: does the optimum change if every stage held M stashes? */
  if (o->schedule == TRAIN_1F1B && o->microbatches > 1) {
    train_options all = *o;
    all.schedule = TRAIN_GPIPE;
    optimal_result r2;
    method_report rep2 = {0};
    plan *q = NULL;
    if (optimal_train_solve(g, c, &all, &q, &r2, &rep2, &err) == MP_OK && !close_to(r2.lower_s, res.lower_s))
      t->classes++;
    plan_free(q);
  }
  t->instances++;
  t->hetero += c->heterogeneous;
  t->gpipe += o->schedule == TRAIN_GPIPE;
  t->streaming += !b.any_fits && c->n_dram > 0;
  t->equal += res.value <= b.best_mb * (1 + 1e-12);
  t->exact += res.exact;
  t->worst_gap = fmax(t->worst_gap, res.value / b.best_mb - 1);
  plan_free(p);
  train_free(b.t);
  return bad;
}

/* n random instances from seed: 1-6 layers on 1-9 cores (each up to 2002 plans), a quarter heterogeneous,
 * memory tight half of the time, three chips in five with DRAM ports, GPipe or 1F1B (or, with zb, always
 * zb), 1-4 micro-batches, every optimizer, recompute a third of the time; each through one_instance. */
static void run_instances(uint64_t seed, int n, int zb, tally *t) {
  testgen_seed(seed);
  for (int id = 0; id < n; id++) {
    int n_layers = 1 + testgen_below(6);
    int w = 1 + testgen_below(3), h = 1 + testgen_below(3);
    int het = testgen_below(4) == 0;
    double sram_scale = testgen_below(2) == 0 ? 0.5 : 40.0;
    int ports = testgen_below(5) < 2 ? 0 : 1 + testgen_below(w * h < 2 ? 1 : 2);
    train_options o;
    train_options_default(&o);
    o.schedule = testgen_below(2) ? TRAIN_1F1B : TRAIN_GPIPE;
    if (zb) o.schedule = TRAIN_ZB;
    o.microbatches = 1 + testgen_below(4);
    o.optimizer = (train_optimizer)testgen_below(3);
    o.recompute = testgen_below(3) == 0;
    graph *g = random_graph(n_layers);
    chip *c = testgen_chip(w, h, het, sram_scale, ports, 0);
    t->failures += one_instance(id, g, c, &o, t);
    graph_free(g);
    chip_free(c);
  }
}

/* 300 instances (run_instances).  Every check must hold on every instance.  How often optimal's plan is
 * the brute-force optimum is measured, not proved (the repair is a local search): see the floor below
 * and the figure the test prints. */
static void optimal_train_should_agree_with_brute_force_with_training_memory_on_random_instances(void) {
  tally t = {0};
  run_instances(UINT64_C(0x2545f4914f6cdd1d), 300, 0, &t);
  fprintf(stderr,
          "\n  %d instances (%d heterogeneous, %d GPipe, %d where no plan fits and DRAM streams, %d where 1F1B's "
          "stash classes moved the bound): optimal's plan is the brute-force optimum on %d (%.1f%%), certified "
          "exact on %d; worst gap to the optimum %.3g%% ",
          t.instances, t.hetero, t.gpipe, t.streaming, t.classes, t.equal, 100.0 * t.equal / t.instances, t.exact,
          100 * t.worst_gap);
  CU_ASSERT_EQUAL(t.failures, 0);
  CU_ASSERT_EQUAL(t.instances, 300);
  CU_ASSERT(t.hetero >= 50);
  CU_ASSERT(t.streaming >= 10);
  CU_ASSERT(t.classes >= 10); /* instances where how many stages follow decided the optimum */
  CU_ASSERT(t.equal >= 295);  /* 300 at this seed with the deep search, 288 with the repair alone */
}

/* zb on 100 instances (another seed): optimal solves it on 1F1B's stash classes, no W-stashes and two DRAM
 * passes, a relaxation of zb's model (its stages also hold W-stashes and stream three times), so the
 * bound must stay below every plan's zb figures and the plan must be judged on zb's own mini-batch. */
static void optimal_train_should_agree_with_brute_force_under_zb(void) {
  tally t = {0};
  run_instances(UINT64_C(0x9e3779b97f4a7c15), 100, 1, &t);
  fprintf(stderr, "\n  zb: %d instances (%d where no plan fits and DRAM streams): optimal's plan is the brute-force "
                  "optimum on %d; worst gap %.3g%% ",
          t.instances, t.streaming, t.equal, 100 * t.worst_gap);
  CU_ASSERT_EQUAL(t.failures, 0);
  CU_ASSERT_EQUAL(t.instances, 100);
  CU_ASSERT(t.streaming >= 3);
  CU_ASSERT(t.equal >= 95);
}

/* optimal for training (adam, 1F1B, M = 8) of the bundled graph and chip files into *p and *rep; the
 * chip's core count in *n_cores.  0, or -1 when a file does not load or optimal fails. */
static int run_optimal_train(const char *graph_file, const char *chip_file, plan **p, method_report *rep,
                             int *n_cores) {
  graph *g = NULL;
  chip *c = NULL;
  mp_error err;
  train_options to;
  train_options_default(&to);
  method_options mo;
  method_options_default(&mo);
  mo.train = &to;
  int rc = graph_load(testutil_src(graph_file), &g, &err) == MP_OK &&
                   chip_load(testutil_src(chip_file), &c, &err) == MP_OK &&
                   method_run("optimal", g, c, &mo, p, rep, &err) == MP_OK
               ? 0
               : -1;
  *n_cores = c ? c->n_cores : 0;
  chip_free(c);
  graph_free(g);
  return rc;
}

/* ResNet-50 trained on mesh4x4 (1F1B, M = 8, adam) fits no plan and the deep search runs: the report's
 * notes are the longest optimal writes (795 characters), and must arrive whole, the deep search's
 * sentence and method_run's memory verdict at the end included (a 512-byte buffer cut both). */
static void optimal_train_should_report_its_whole_note(void) {
  plan *p = NULL;
  method_report rep;
  int n_cores;
  CU_ASSERT_EQUAL_FATAL(run_optimal_train("traces/resnet50.json", "platforms/mesh4x4.json", &p, &rep, &n_cores), 0);
  CU_ASSERT(strlen(rep.notes) > 512);
  CU_ASSERT_PTR_NOT_NULL(strstr(rep.notes, "The deep search from it (partitioner/README.md) found"));
  const char *end = "The plan does not fit memory.";
  CU_ASSERT(strlen(rep.notes) > strlen(end) && strcmp(rep.notes + strlen(rep.notes) - strlen(end), end) == 0);
  plan_free(p);
}

/* On more than OPTIMAL_DEEP_TRAIN_MAX_CORES cores the deep search runs when the plan has few stages:
 * tiny_resnet (6 layers) on mesh16x16.  With the core gate alone it does not. */
static void optimal_train_should_search_deep_on_a_big_chip_when_the_plan_is_short(void) {
  plan *p = NULL;
  method_report rep;
  int n_cores;
  CU_ASSERT_EQUAL_FATAL(run_optimal_train("traces/tiny_resnet.json", "platforms/mesh16x16.json", &p, &rep, &n_cores),
                        0);
  CU_ASSERT(n_cores > OPTIMAL_DEEP_TRAIN_MAX_CORES);
  CU_ASSERT(p->n_stages <= OPTIMAL_DEEP_TRAIN_BIG_STAGES);
  CU_ASSERT_PTR_NOT_NULL(strstr(rep.notes, "The deep search from it"));
  plan_free(p);
}

static CU_TestInfo tests[] = {
    {"optimal_train_should_agree_with_brute_force_with_training_memory_on_random_instances",
     optimal_train_should_agree_with_brute_force_with_training_memory_on_random_instances},
    {"optimal_train_should_agree_with_brute_force_under_zb", optimal_train_should_agree_with_brute_force_under_zb},
    {"optimal_train_should_report_its_whole_note", optimal_train_should_report_its_whole_note},
    {"optimal_train_should_search_deep_on_a_big_chip_when_the_plan_is_short",
     optimal_train_should_search_deep_on_a_big_chip_when_the_plan_is_short},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("optimal_train", tests, argc, argv); }
