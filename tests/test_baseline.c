/* Tests of baseline.c (even, balanced), of the method table (method.c) and of the commands that
 * expose them (meshpipe partition / compare): hand-worked splits, the balanced split against a brute
 * force over every contiguous split, core shares, unknown names, the commands' output and errors.
 * The commands run the simulator (in their own processes): MESHPIPE_TEST_LABELS: simgrid */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "graph.h"
#include "jsonio.h"
#include "method.h"
#include "method_int.h"
#include "plan.h"
#include "testutil.h"

/* A chain of n layers with the given flops (bytes small), on a w x 1 chip. */
static graph *chain(int n, const unsigned long long *flops) {
  char text[8192];
  int len = snprintf(text, sizeof text, "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"c\",\"inputs\":[],\"ops\":[");
  for (int j = 0; j < n; j++) {
    char in[32] = "";
    if (j) snprintf(in, sizeof in, "\"t%d\"", j - 1);
    len += snprintf(text + len, sizeof text - (size_t)len,
                    "%s{\"name\":\"l%d\",\"type\":\"X\",\"inputs\":[%s],\"outputs\":[{\"name\":\"t%d\",\"bytes\":8}],"
                    "\"macs\":0,\"flops\":%llu,\"weight_bytes\":0}",
                    j ? "," : "", j, in, j, flops[j]);
  }
  snprintf(text + len, sizeof text - (size_t)len, "]}");
  return testutil_graph_text(text);
}

static chip *row(int w) {
  char text[512];
  snprintf(text, sizeof text,
           "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"r\",\"mesh\":{\"width\":%d,\"height\":1},"
           "\"core\":{\"flops\":1e9,\"sram_bytes\":1000000},\"noc\":{\"bandwidth\":1e9,\"latency\":0}}",
           w);
  return testutil_chip_text(text);
}

static plan *run(const char *method, const graph *g, const chip *c) {
  method_options o;
  method_options_default(&o);
  method_report rep;
  plan *p = NULL;
  mp_error err;
  return method_run(method, g, c, &o, &p, &rep, &err) == MP_OK ? p : NULL;
}

static int arranged_is(const plan *p, const int *want) {
  for (int i = 0; i < p->n_cores; i++)
    if (p->arranged[i] != want[i]) return 0;
  return 1;
}

/* 5 layers on 2 cores: 3 + 2.  2 layers on 5 cores: one layer per stage on 3 + 2 cores. */
static void even_should_split_layers_and_cores_equally(void) {
  unsigned long long f[5] = {1, 1, 1, 1, 1};
  graph *g5 = chain(5, f), *g2 = chain(2, f);
  chip *c2 = row(2), *c5 = row(5);
  CU_ASSERT_FATAL(g5 && g2 && c2 && c5);
  plan *p = run("even", g5, c2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT(arranged_is(p, (int[]){3, 2}));
  plan_free(p);
  p = run("even", g2, c5);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT(arranged_is(p, (int[]){0, 0, 1, 0, 1}));
  plan_free(p);
  graph_free(g5);
  graph_free(g2);
  chip_free(c2);
  chip_free(c5);
}

/* Flops 1, 1, 1, 1, 4 on 2 cores: the best two blocks are the first four (4) and the last (4). */
static void balanced_should_balance_flops_over_contiguous_blocks(void) {
  unsigned long long f[5] = {1000, 1000, 1000, 1000, 4000};
  graph *g = chain(5, f);
  chip *c = row(2);
  CU_ASSERT_FATAL(g && c);
  plan *p = run("balanced", g, c);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT(arranged_is(p, (int[]){4, 1}));
  plan_free(p);
  graph_free(g);
  chip_free(c);
}

/* 2 layers of 1 and 3 Mflop on 6 cores: two stages, 6 cores shared 1:3 after one each: 2 + 4. */
static void balanced_should_share_cores_by_flops_when_cores_outnumber_layers(void) {
  unsigned long long f[2] = {1000000, 3000000};
  graph *g = chain(2, f);
  chip *c = row(6);
  CU_ASSERT_FATAL(g && c);
  plan *p = run("balanced", g, c);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(p->n_stages, 2);
  CU_ASSERT_EQUAL(p->stages[0].n_cores, 2);
  CU_ASSERT_EQUAL(p->stages[1].n_cores, 4);
  plan_free(p);
  graph_free(g);
  chip_free(c);
}

/* The least largest block over every split into k blocks, by enumerating cut sets. */
static unsigned long long brute_balance(int n, const unsigned long long *f, int k) {
  unsigned long long best = ~0ULL;
  for (unsigned mask = 0; mask < (1u << (n - 1)); mask++) {
    if (__builtin_popcount(mask) != k - 1) continue;
    unsigned long long cur = 0, worst = 0;
    for (int j = 0; j < n; j++) {
      cur += f[j];
      if (j == n - 1 || (mask >> j & 1)) {
        if (cur > worst) worst = cur;
        cur = 0;
      }
    }
    if (worst < best) best = worst;
  }
  return best;
}

static void balanced_should_equal_brute_force_on_random_chains(void) {
  unsigned seed = 7;
  for (int trial = 0; trial < 200; trial++) {
    int n = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 10;
    int w = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 5;
    unsigned long long f[10];
    for (int j = 0; j < n; j++) f[j] = 1 + ((seed = seed * 1103515245u + 12345u) >> 16) % 50;
    graph *g = chain(n, f);
    chip *c = row(w);
    CU_ASSERT_FATAL(g && c);
    plan *p = run("balanced", g, c);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    int k = n < w ? n : w;
    CU_ASSERT_EQUAL(p->n_stages, k);
    unsigned long long worst = 0;
    for (int s = 0; s < p->n_stages; s++) {
      unsigned long long sum = 0;
      for (int j = p->stages[s].first_layer; j < p->stages[s].first_layer + p->stages[s].n_layers; j++) sum += f[j];
      if (sum > worst) worst = sum;
    }
    CU_ASSERT_EQUAL(worst, brute_balance(n, f, k));
    plan_free(p);
    graph_free(g);
    chip_free(c);
  }
}

static void share_cores_should_give_largest_remainders_and_one_core_at_least(void) {
  int out[3];
  method_share_cores((double[]){1, 3}, 2, 6, out); /* 4 spare: 1 and 3 */
  CU_ASSERT_EQUAL(out[0], 2);
  CU_ASSERT_EQUAL(out[1], 4);
  method_share_cores((double[]){0, 0, 0}, 3, 5, out); /* no weight: equal, remainder to the first */
  CU_ASSERT_EQUAL(out[0] + out[1] + out[2], 5);
  CU_ASSERT_EQUAL(out[0], 2);
  CU_ASSERT_EQUAL(out[1], 2);
  CU_ASSERT_EQUAL(out[2], 1);
  method_share_cores((double[]){1, 1, 1}, 3, 10, out); /* 7 spare: 2.33 each, one extra to the first */
  CU_ASSERT_EQUAL(out[0], 4);
  CU_ASSERT_EQUAL(out[1], 3);
  CU_ASSERT_EQUAL(out[2], 3);
  method_share_cores((double[]){1e-9, 1e9}, 2, 2, out); /* no spare: one each */
  CU_ASSERT_EQUAL(out[0], 1);
  CU_ASSERT_EQUAL(out[1], 1);
}

static void method_run_should_refuse_an_unknown_name_listing_the_known(void) {
  unsigned long long f[1] = {1};
  graph *g = chain(1, f);
  chip *c = row(1);
  CU_ASSERT_FATAL(g && c);
  method_options o;
  method_options_default(&o);
  method_report rep;
  plan *p = NULL;
  mp_error err;
  CU_ASSERT_EQUAL(method_run("magic", g, c, &o, &p, &rep, &err), MP_USAGE);
  CU_ASSERT_PTR_NULL(p);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no method 'magic'"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "optimal, seed-split, greedy, even, balanced"));
  CU_ASSERT_PTR_NULL(method_find("magic"));
  CU_ASSERT_PTR_NULL(method_at(method_count()));
  CU_ASSERT_STRING_EQUAL(method_at(0)->name, "optimal");
  graph_free(g);
  chip_free(c);
}

/* Every method yields a valid plan covering every layer and core, the same one twice, with a note. */
static void every_method_should_return_a_canonical_deterministic_plan(void) {
  unsigned long long f[7] = {5, 1, 8, 2, 2, 9, 3};
  graph *g = chain(7, f);
  chip *c = row(4);
  CU_ASSERT_FATAL(g && c);
  for (int i = 0; i < method_count(); i++) {
    if (!strcmp(method_at(i)->name, "rl")) continue; /* trains on the simulator; tested in test_rl_train */
    method_options o;
    method_options_default(&o);
    method_report r1, r2;
    plan *p = NULL, *q = NULL;
    mp_error err;
    CU_ASSERT_EQUAL_FATAL(method_run(method_at(i)->name, g, c, &o, &p, &r1, &err), MP_OK);
    CU_ASSERT_EQUAL_FATAL(method_run(method_at(i)->name, g, c, &o, &q, &r2, &err), MP_OK);
    CU_ASSERT_EQUAL(plan_validate(p->arranged, p->n_cores, g->n_ops, "p", &err), MP_OK);
    CU_ASSERT(plan_equal(p, q));
    CU_ASSERT(strlen(r1.notes) > 0);
    CU_ASSERT(r1.solve_s >= 0);
    CU_ASSERT_EQUAL(r1.feasible, 1);
    plan_free(p);
    plan_free(q);
  }
  graph_free(g);
  chip_free(c);
}


/* Runs meshpipe with args; returns the exit status, output in *out / *errout (owned). */
static int mp(const char *args, char **out, char **errout) { return testutil_meshpipe(args, out, errout); }

static void partition_should_print_the_json_report_and_write_a_loadable_plan(void) {
  char args[2048], *out = NULL, *errout = NULL;
  const char *plan_path = testutil_temp_path("plan.json");
  snprintf(args, sizeof args, "partition -g '%s' -c '%s' -m optimal --json -o '%s'", testutil_src("traces/tiny_resnet.json"),
           testutil_src("platforms/mesh4x4.json"), plan_path);
  CU_ASSERT_EQUAL(mp(args, &out, &errout), 0);
  cJSON *root = cJSON_Parse(out);
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  const char *keys[] = {"method", "arranged_core", "period_s", "binding", "bottleneck_s", "link_bound_s",
                        "busiest_link", "lower_bound_s", "feasible", "solve_s", "stages", "notes"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(root, keys[i]));
  CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(root, "arranged_core")), 16);
  double period = cJSON_GetNumberValue(cJSON_GetObjectItem(root, "period_s"));
  double bound = cJSON_GetNumberValue(cJSON_GetObjectItem(root, "lower_bound_s"));
  CU_ASSERT(bound > 0 && bound <= period);
  CU_ASSERT(cJSON_IsString(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "stages"), 0), "limiter")));
  cJSON *sim = cJSON_GetObjectItem(root, "simulated");
  CU_ASSERT(cJSON_IsObject(sim));
  CU_ASSERT(cJSON_GetNumberValue(cJSON_GetObjectItem(sim, "samples_per_s")) > 0);
  cJSON_Delete(root);
  graph *g = NULL;
  chip *c = NULL;
  plan *p = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(graph_load(testutil_src("traces/tiny_resnet.json"), &g, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(chip_load(testutil_src("platforms/mesh4x4.json"), &c, &err), MP_OK);
  CU_ASSERT_EQUAL(plan_load(plan_path, g, c, &p, &err), MP_OK);
  plan_free(p);
  chip_free(c);
  graph_free(g);
  free(out);
  free(errout);
}

static void partition_text_should_show_stages_bottleneck_and_bound(void) {
  char args[2048], *out = NULL, *errout = NULL;
  snprintf(args, sizeof args, "partition -g '%s' -c '%s' -m balanced --no-simulate", testutil_src("traces/tiny_resnet.json"),
           testutil_src("platforms/mesh4x4.json"));
  CU_ASSERT_EQUAL(mp(args, &out, &errout), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "balanced on tiny_resnet"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "<- slowest"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "model period"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "what binds"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "lower bound"));
  CU_ASSERT_PTR_NULL(strstr(out, "simulated")); /* --no-simulate */
  free(out);
  free(errout);
}

static void partition_should_refuse_bad_usage_with_status_2(void) {
  static const struct {
    const char *args, *message;
  } cases[] = {
      {"partition -c x.json", "needs a graph"},
      {"partition -g g.json -m magic", "no method 'magic' (known: optimal, seed-split"},
      {"partition -g g.json --tau -1", "--tau must be at least 0"},
      {"partition -g g.json --max-step x", "--max-step expects"},
      {"partition -g g.json --bogus", "unknown option '--bogus'"},
      {"partition -g", "option '-g' needs a value"},
      {"partition -g g.json extra", "unexpected argument 'extra'"},
      {"compare -c x.json", "needs a graph"},
      {"compare -g g.json --methods even,magic", "no method 'magic'"},
      {"compare -g g.json --methods ''", "--methods is empty"},
      {"compare -g g.json --seed -3", "--seed"},
      {"compare -g g.json -M 0", "--microbatches must be"},
      {"partition -g g.json --microbatches x", "--microbatches expects"},
      {"partition -g g.json --batch 0", "--batch must be between 1"},
      {"compare -g g.json --batch x", "--batch expects"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *out = NULL, *errout = NULL;
    int rc = mp(cases[i].args, &out, &errout);
    CU_ASSERT_EQUAL(rc, 2);
    if (!errout || !strstr(errout, cases[i].message)) {
      fprintf(stderr, "\n'%s' said: %s", cases[i].args, errout ? errout : "(nothing)");
      CU_FAIL("message");
    }
    free(out);
    free(errout);
  }
}

static void partition_should_report_a_missing_graph_and_an_unwritable_plan(void) {
  char args[2048], *out = NULL, *errout = NULL;
  CU_ASSERT_EQUAL(mp("partition -g /nonexistent/g.json", &out, &errout), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "/nonexistent/g.json"));
  free(out);
  free(errout);
  snprintf(args, sizeof args, "partition -g '%s' -c '%s' -o /nonexistent/dir/plan.json",
           testutil_src("traces/tiny_resnet.json"), testutil_src("platforms/mesh4x4.json"));
  CU_ASSERT_EQUAL(mp(args, &out, &errout), 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "/nonexistent/dir/plan.json"));
  CU_ASSERT_FALSE(testutil_exists("/nonexistent/dir/plan.json"));
  free(out);
  free(errout);
  snprintf(args, sizeof args, "compare -g '%s' -c /nonexistent/chip.json", testutil_src("traces/tiny_resnet.json"));
  CU_ASSERT_EQUAL(mp(args, &out, &errout), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "/nonexistent/chip.json"));
  free(out);
  free(errout);
}

/* An ONNX model straight from the bundled test models, with the import options passed through. */
static void partition_should_import_an_onnx_model_with_the_import_options(void) {
  const char *model = testutil_model("resnet18.onnx");
  char args[2048], *out = NULL, *errout = NULL;
  snprintf(args, sizeof args, "partition -g '%s' -c '%s' --no-fuse --batch 2 --dtype fp32 --no-simulate --json", model,
           testutil_src("platforms/mesh4x4.json"));
  CU_ASSERT_EQUAL(mp(args, &out, &errout), 0);
  cJSON *fused = NULL, *root = cJSON_Parse(out);
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  free(out);
  free(errout);
  snprintf(args, sizeof args, "partition -g '%s' -c '%s' --no-simulate --json", model, testutil_src("platforms/mesh4x4.json"));
  CU_ASSERT_EQUAL(mp(args, &out, &errout), 0);
  fused = cJSON_Parse(out);
  CU_ASSERT_PTR_NOT_NULL_FATAL(fused);
  /* Unfused there are more layers, so the graphs differ; batch 2 doubles the flops, so the lower bound
   * (total flops over total speed on this chip) doubles exactly; fp32 needs more memory per core. */
  CU_ASSERT_STRING_NOT_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(root, "graph_hash")),
                             cJSON_GetStringValue(cJSON_GetObjectItem(fused, "graph_hash")));
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(root, "lower_bound_s")) /
                             cJSON_GetNumberValue(cJSON_GetObjectItem(fused, "lower_bound_s")),
                         2.0, 1e-9);
  CU_ASSERT(cJSON_GetNumberValue(cJSON_GetObjectItem(root, "mem_ratio")) >
            cJSON_GetNumberValue(cJSON_GetObjectItem(fused, "mem_ratio")));
  cJSON_Delete(root);
  cJSON_Delete(fused);
  free(out);
  free(errout);
}

/* compare --json: one row per listed method; optimal's gap is 0; no fast method's plan has a shorter model
 * period (they are among optimal's starts), and rl's plan simulates at least as fast as optimal's (it is
 * offered to rl). */
static void compare_should_list_every_method_with_its_gap_to_the_optimum(void) {
  char args[2048], *out = NULL, *errout = NULL;
  snprintf(args, sizeof args, "compare -g '%s' -c '%s' --json --methods all", testutil_src("traces/tiny_resnet.json"),
           testutil_src("platforms/mesh4x4.json"));
  CU_ASSERT_EQUAL(mp(args, &out, &errout), 0);
  cJSON *root = cJSON_Parse(out);
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  cJSON *methods = cJSON_GetObjectItem(root, "methods");
  CU_ASSERT_EQUAL(cJSON_GetArraySize(methods), method_count());
  double optimum = cJSON_GetNumberValue(cJSON_GetObjectItem(root, "optimum_s")), optimal_thr = 0;
  for (int i = 0; i < cJSON_GetArraySize(methods); i++) {
    cJSON *m = cJSON_GetArrayItem(methods, i);
    if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(m, "method")), "optimal") == 0)
      optimal_thr = cJSON_GetNumberValue(cJSON_GetObjectItem(m, "simulated_samples_per_s"));
  }
  CU_ASSERT_FATAL(optimal_thr > 0);
  for (int i = 0; i < cJSON_GetArraySize(methods); i++) {
    cJSON *m = cJSON_GetArrayItem(methods, i);
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(m, "method"));
    double b = cJSON_GetNumberValue(cJSON_GetObjectItem(m, "model_period_s"));
    if (strcmp(name, "optimal") == 0)
      CU_ASSERT_DOUBLE_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(m, "gap_to_optimum_pct")), 0, 1e-9);
    if (strcmp(name, "rl") == 0) {
      CU_ASSERT(cJSON_GetNumberValue(cJSON_GetObjectItem(m, "simulated_samples_per_s")) >= optimal_thr * (1 - 1e-6));
    } else {
      CU_ASSERT(b >= optimum * (1 - 1e-12));
    }
    CU_ASSERT(cJSON_GetNumberValue(cJSON_GetObjectItem(m, "simulated_samples_per_s")) > 0);
    if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(m, "method")), "even") == 0)
      CU_ASSERT_DOUBLE_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(m, "speedup_over_even")), 1, 1e-12);
  }
  cJSON_Delete(root);
  free(out);
  free(errout);
}

/* Without --methods, compare runs every method but the learning ones (minutes of training each). */
static void compare_should_leave_learning_methods_out_by_default(void) {
  char args[2048], *out = NULL, *errout = NULL;
  snprintf(args, sizeof args, "compare -g '%s' -c '%s' --json --no-simulate", testutil_src("traces/tiny_resnet.json"),
           testutil_src("platforms/mesh4x4.json"));
  CU_ASSERT_EQUAL(mp(args, &out, &errout), 0);
  cJSON *root = cJSON_Parse(out);
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  cJSON *methods = cJSON_GetObjectItem(root, "methods");
  int learning = 0, listed = 0;
  for (int i = 0; i < method_count(); i++) learning += method_at(i)->learning;
  CU_ASSERT(learning >= 1);
  for (int i = 0; i < cJSON_GetArraySize(methods); i++) {
    const method_info *m = method_find(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(methods, i), "method")));
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_FALSE(m->learning);
    listed++;
  }
  CU_ASSERT_EQUAL(listed, method_count() - learning);
  cJSON_Delete(root);
  free(out);
  free(errout);
}

static CU_TestInfo tests[] = {
    {"even_should_split_layers_and_cores_equally", even_should_split_layers_and_cores_equally},
    {"balanced_should_balance_flops_over_contiguous_blocks", balanced_should_balance_flops_over_contiguous_blocks},
    {"balanced_should_share_cores_by_flops_when_cores_outnumber_layers",
     balanced_should_share_cores_by_flops_when_cores_outnumber_layers},
    {"balanced_should_equal_brute_force_on_random_chains", balanced_should_equal_brute_force_on_random_chains},
    {"share_cores_should_give_largest_remainders_and_one_core_at_least",
     share_cores_should_give_largest_remainders_and_one_core_at_least},
    {"method_run_should_refuse_an_unknown_name_listing_the_known", method_run_should_refuse_an_unknown_name_listing_the_known},
    {"every_method_should_return_a_canonical_deterministic_plan", every_method_should_return_a_canonical_deterministic_plan},
    {"partition_should_print_the_json_report_and_write_a_loadable_plan",
     partition_should_print_the_json_report_and_write_a_loadable_plan},
    {"partition_text_should_show_stages_bottleneck_and_bound", partition_text_should_show_stages_bottleneck_and_bound},
    {"partition_should_refuse_bad_usage_with_status_2", partition_should_refuse_bad_usage_with_status_2},
    {"partition_should_report_a_missing_graph_and_an_unwritable_plan",
     partition_should_report_a_missing_graph_and_an_unwritable_plan},
    {"partition_should_import_an_onnx_model_with_the_import_options",
     partition_should_import_an_onnx_model_with_the_import_options},
    {"compare_should_leave_learning_methods_out_by_default", compare_should_leave_learning_methods_out_by_default},
    {"compare_should_list_every_method_with_its_gap_to_the_optimum",
     compare_should_list_every_method_with_its_gap_to_the_optimum},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("baseline", tests, argc, argv); }
