/* Tests of the regression bench: the suite, BENCH.json round trip and strict reading, gaps to the
 * optimum, the baseline comparison rules, and 'meshpipe bench' failing on a worsened baseline.
 * MESHPIPE_TEST_LABELS: simgrid */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "fileio.h"
#include "jsonio.h"
#include "method.h"
#include "testutil.h"

static bench_entry entry(const char *graph_name, const char *chip_name, const char *method, double thr,
                         double bottleneck, double solve, double evals) {
  bench_entry e;
  memset(&e, 0, sizeof e);
  snprintf(e.graph, sizeof e.graph, "%s", graph_name);
  snprintf(e.chip, sizeof e.chip, "%s", chip_name);
  snprintf(e.method, sizeof e.method, "%s", method);
  snprintf(e.key, sizeof e.key, "%s|%s|%s", graph_name, chip_name, method);
  e.feasible = 1;
  e.stages = 4;
  e.samples_per_s = thr;
  e.model_period_s = bottleneck;
  e.latency_s = 4 * bottleneck;
  e.gap = NAN;
  e.solve_s = solve;
  e.evals_per_s = evals;
  e.plan_hash = 0x0123456789abcdefULL;
  return e;
}

static void report_init(bench_report *r, const char *cpu) {
  memset(r, 0, sizeof *r);
  snprintf(r->version, sizeof r->version, "0.1.0");
  snprintf(r->date, sizeof r->date, "2026-11-22T00:00:00Z");
  snprintf(r->machine.cpu, sizeof r->machine.cpu, "%s", cpu);
  r->machine.cpus = 2;
  snprintf(r->machine.os, sizeof r->machine.os, "Linux 6 x86_64");
  r->quick = 1;
}

static void suite_should_be_every_model_chip_and_method_with_quick_a_prefix_subset(void) {
  bench_item *full = NULL, *quick = NULL;
  int n_full = 0, n_quick = 0;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(bench_suite(0, &full, &n_full, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(bench_suite(1, &quick, &n_quick, &err), MP_OK);
  int m = method_count();
  CU_ASSERT_EQUAL(n_full, 4 * 3 * (m + 4)); /* every method, then 4 trained cases */
  CU_ASSERT_EQUAL(n_quick, 4 * 2 * (m + 4));
  for (int i = 0; i < 4 * 3 * m; i++) CU_ASSERT_PTR_NULL(full[i].mode);
  CU_ASSERT_STRING_EQUAL(full[4 * 3 * m].mode, "train-1f1b");
  CU_ASSERT_STRING_EQUAL(full[4 * 3 * m].method, "optimal");
  CU_ASSERT_STRING_EQUAL(full[4 * 3 * m + 3].mode, "train-gpipe");
  CU_ASSERT_STRING_EQUAL(full[0].graph_file, "traces/resnet50.json");
  CU_ASSERT_STRING_EQUAL(full[0].chip_file, "platforms/mesh4x4.json");
  CU_ASSERT_STRING_EQUAL(full[m].chip_file, "platforms/mesh8x8.json");
  CU_ASSERT_STRING_EQUAL(full[2 * m].chip_file, "platforms/mesh16x16.json");
  for (int i = 0; i < m; i++) CU_ASSERT_STRING_EQUAL(full[i].method, method_at(i)->name);
  /* Every quick case is in the full suite, and every file is bundled. */
  for (int q = 0; q < n_quick; q++) {
    int found = 0;
    for (int f = 0; f < n_full; f++)
      found += strcmp(quick[q].graph_file, full[f].graph_file) == 0 && strcmp(quick[q].chip_file, full[f].chip_file) == 0 &&
               strcmp(quick[q].method, full[f].method) == 0 &&
               strcmp(quick[q].mode ? quick[q].mode : "", full[f].mode ? full[f].mode : "") == 0;
    CU_ASSERT_EQUAL(found, 1);
  }
  for (int f = 0; f < n_full; f++) {
    CU_ASSERT(testutil_exists(testutil_src(full[f].graph_file)));
    CU_ASSERT(testutil_exists(testutil_src(full[f].chip_file)));
  }
  free(full);
  free(quick);
}

/* The file name without directory and ".json": "traces/vgg16.json" -> "vgg16". */
static void stem(const char *path, char *out, size_t cap) {
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  snprintf(out, cap, "%.*s", (int)(strlen(base) - 5), base);
}

static void the_committed_baseline_should_load_and_hold_only_quick_suite_cases(void) {
  bench_report r;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(bench_load(testutil_src("bench/baseline.json"), &r, &err), MP_OK);
  CU_ASSERT_EQUAL(r.quick, 1);
  CU_ASSERT_STRING_EQUAL(r.filter, "");
  bench_item *items = NULL;
  int n = 0;
  CU_ASSERT_EQUAL_FATAL(bench_suite(1, &items, &n, &err), MP_OK);
  CU_ASSERT(r.n > 0);
  for (int i = 0; i < r.n; i++) {
    int found = 0;
    for (int k = 0; k < n && !found; k++) {
      char g[64], c[64];
      stem(items[k].graph_file, g, sizeof g);
      stem(items[k].chip_file, c, sizeof c);
      found = strcmp(r.entries[i].graph, g) == 0 && strcmp(r.entries[i].chip, c) == 0 &&
              strcmp(r.entries[i].method, items[k].method) == 0 &&
              strcmp(r.entries[i].mode, items[k].mode ? items[k].mode : "") == 0;
    }
    if (!found) printf("\n  %s is not a case of the quick suite: regenerate bench/baseline.json\n", r.entries[i].key);
    CU_ASSERT(found);
  }
  free(items);
  bench_report_clear(&r);
}

static void gaps_should_be_relative_to_the_optimal_bottleneck_of_the_same_graph_and_chip(void) {
  bench_report r;
  report_init(&r, "cpu");
  mp_error err;
  bench_entry e[] = {entry("g", "c4", "even", 1, 0.3, 0.1, 10), entry("g", "c4", "optimal", 1, 0.2, 0.1, 10),
                     entry("g", "c8", "even", 1, 0.5, 0.1, 10), entry("h", "c4", "even", 1, 0.25, 0.1, 10),
                     entry("h", "c4", "optimal", 1, 0.25, 0.1, 10)};
  for (int i = 0; i < 5; i++) CU_ASSERT_EQUAL(bench_add(&r, &e[i], &err), MP_OK);
  bench_fill_gaps(&r);
  CU_ASSERT_DOUBLE_EQUAL(r.entries[0].gap, 0.5, 1e-15);
  CU_ASSERT_EQUAL(r.entries[1].gap, 0.0);
  CU_ASSERT(isnan(r.entries[2].gap)); /* no optimal entry on c8 */
  CU_ASSERT_EQUAL(r.entries[3].gap, 0.0);
  bench_report_clear(&r);
  CU_ASSERT_EQUAL(r.n, 0);
  bench_report_clear(NULL);
}

/* A trained entry keeps its mode through a save and load, its key names the mode, and its gap is against
 * the trained optimum of the same graph and chip, not the inference one; a wrong mode is refused. */
static bench_entry trained(const char *method, const char *mode, double thr, double period) {
  bench_entry e = entry("vgg16", "mesh4x4", method, thr, period, 0.01, 10);
  snprintf(e.mode, sizeof e.mode, "%s", mode);
  snprintf(e.key, sizeof e.key, "vgg16|mesh4x4|%s|%s", mode, method);
  return e;
}

static void trained_entries_should_round_trip_and_gap_against_the_trained_optimum(void) {
  bench_report r, back;
  report_init(&r, "cpu");
  mp_error err;
  bench_entry e[] = {entry("vgg16", "mesh4x4", "optimal", 100, 0.1, 0.01, 10), trained("optimal", "train-1f1b", 40, 0.4),
                     trained("even", "train-1f1b", 20, 0.6), trained("optimal", "train-gpipe", 30, 0.5)};
  for (int i = 0; i < 4; i++) CU_ASSERT_EQUAL(bench_add(&r, &e[i], &err), MP_OK);
  bench_fill_gaps(&r);
  CU_ASSERT_EQUAL(r.entries[1].gap, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(r.entries[2].gap, 0.5, 1e-15); /* 0.6 / 0.4, not 0.6 / 0.1 */
  CU_ASSERT_EQUAL(r.entries[3].gap, 0.0);
  const char *path = testutil_temp_path("trained.json");
  CU_ASSERT_EQUAL_FATAL(bench_save(&r, path, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(bench_load(path, &back, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(back.n, 4);
  CU_ASSERT_STRING_EQUAL(back.entries[0].mode, "");
  CU_ASSERT_STRING_EQUAL(back.entries[2].mode, "train-1f1b");
  CU_ASSERT_STRING_EQUAL(back.entries[2].key, "vgg16|mesh4x4|train-1f1b|even");
  CU_ASSERT_STRING_EQUAL(back.entries[3].mode, "train-gpipe");
  bench_report_clear(&back);
  char *text = NULL;
  size_t len;
  CU_ASSERT_EQUAL_FATAL(fileio_read_all(path, &text, &len, &err), MP_OK);
  char *at = strstr(text, "\"train-gpipe\",");
  CU_ASSERT_PTR_NOT_NULL_FATAL(at);
  memcpy(at + 1, "train-zzzzz", 11);
  CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, text, len, &err), MP_OK);
  CU_ASSERT_EQUAL(bench_load(path, &back, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "is not train-1f1b or train-gpipe"));
  free(text);
  bench_report_clear(&r);
}

static void bench_json_should_load_back_what_it_saved(void) {
  bench_report r, back;
  report_init(&r, "Some CPU @ 2.0GHz");
  snprintf(r.filter, sizeof r.filter, "vgg16");
  mp_error err;
  bench_entry a = entry("vgg16", "mesh4x4", "optimal", 123.456789012345, 1.0 / 7, 0.0123, 456.5);
  bench_entry b = entry("vgg16", "mesh4x4", "even", 99.5, 0.2, 0.001, 1000);
  b.feasible = 0;
  CU_ASSERT_EQUAL(bench_add(&r, &a, &err), MP_OK);
  CU_ASSERT_EQUAL(bench_add(&r, &b, &err), MP_OK);
  bench_fill_gaps(&r);
  const char *path = testutil_temp_path("roundtrip.json");
  CU_ASSERT_EQUAL_FATAL(bench_save(&r, path, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(bench_load(path, &back, &err), MP_OK);
  CU_ASSERT_STRING_EQUAL(back.machine.cpu, "Some CPU @ 2.0GHz");
  CU_ASSERT_EQUAL(back.machine.cpus, 2);
  CU_ASSERT_EQUAL(back.quick, 1);
  CU_ASSERT_STRING_EQUAL(back.filter, "vgg16");
  CU_ASSERT_EQUAL_FATAL(back.n, 2);
  for (int i = 0; i < 2; i++) {
    const bench_entry *x = &r.entries[i], *y = &back.entries[i];
    CU_ASSERT_STRING_EQUAL(x->key, y->key);
    CU_ASSERT_EQUAL(x->feasible, y->feasible);
    CU_ASSERT_EQUAL(x->samples_per_s, y->samples_per_s);
    CU_ASSERT_EQUAL(x->model_period_s, y->model_period_s);
    CU_ASSERT_EQUAL(x->solve_s, y->solve_s);
    CU_ASSERT_EQUAL(x->evals_per_s, y->evals_per_s);
    CU_ASSERT_EQUAL(x->plan_hash, y->plan_hash);
    CU_ASSERT_EQUAL(x->gap, y->gap);
  }
  bench_report_clear(&back);
  /* Without an optimal entry the gap is null and reads back as unknown. */
  r.entries[0] = b;
  r.n = 1;
  bench_fill_gaps(&r);
  CU_ASSERT_EQUAL_FATAL(bench_save(&r, path, &err), MP_OK);
  char *text = NULL;
  size_t len;
  CU_ASSERT_EQUAL_FATAL(fileio_read_all(path, &text, &len, &err), MP_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"gap_to_optimum\":\tnull"));
  free(text);
  CU_ASSERT_EQUAL_FATAL(bench_load(path, &back, &err), MP_OK);
  CU_ASSERT(isnan(back.entries[0].gap));
  bench_report_clear(&back);
  bench_report_clear(&r);
}

/* Copies template into out with every 'H' replaced by head and every 'C' by one_case (the templates
 * use no other capital H or C). */
static void expand(const char *template, const char *head, const char *one_case, char *out, size_t cap) {
  size_t used = 0;
  out[0] = '\0';
  for (const char *t = template; *t && used + 1 < cap; t++) {
    const char *part = *t == 'H' ? head : *t == 'C' ? one_case : NULL;
    if (part)
      used += (size_t)snprintf(out + used, cap - used, "%s", part);
    else
      out[used++] = *t, out[used] = '\0';
  }
}

static void bench_load_should_reject_bad_files_naming_the_place(void) {
  static const char head[] = "{\"format\":\"meshpipe-bench\",\"version\":1,\"meshpipe\":\"0.1.0\",\"date\":\"d\","
                             "\"quick\":true,\"filter\":\"\",\"machine\":{\"cpu\":\"c\",\"cpus\":2,\"os\":\"o\"},";
  static const char good_case[] = "{\"key\":\"g|c|even\",\"graph\":\"g\",\"chip\":\"c\",\"method\":\"even\","
                                  "\"feasible\":true,\"stages\":2,\"samples_per_s\":1,\"model_period_s\":1,"
                                  "\"latency_s\":1,\"gap_to_optimum\":null,\"solve_s\":0,\"sim_evals_per_s\":5,"
                                  "\"plan_hash\":\"0123456789abcdef\"}";
  static const struct {
    const char *text, *message;
  } bad[] = {
      {"{\"format\":\"meshpipe-graph\",\"version\":1}", "format: expected \"meshpipe-bench\""},
      {"{\"format\":\"meshpipe-bench\",\"version\":2}", "version: version 2 is not supported"},
      {"H\"cases\":[C],\"extra\":1}", "extra"},
      {"H\"cases\":{}}", "cases"},
      {"H\"cases\":[C,C]}", "cases[1]: case \"g|c|even\" is also cases[0]"},
      {"H\"cases\":[1]}", "cases[0]: must be an object"},
      {"H\"cases\":[{\"key\":\"g|c|even\"}]}", "cases[0]"},
      {"{\"format\":\"meshpipe-bench\",\"version\":1,\"meshpipe\":\"0.1.0\",\"date\":\"d\",\"quick\":1,\"filter\":\"\","
       "\"machine\":{\"cpu\":\"c\",\"cpus\":2,\"os\":\"o\"},\"cases\":[]}",
       "quick must be true or false"},
      {"{\"format\":\"meshpipe-bench\",\"version\":1,\"meshpipe\":\"0.1.0\",\"date\":\"d\",\"quick\":true,"
       "\"filter\":\"\",\"machine\":{\"cpu\":\"c\",\"cpus\":0,\"os\":\"o\"},\"cases\":[]}",
       "machine.cpus"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char text[4096];
    expand(bad[i].text, head, good_case, text, sizeof text);
    const char *path = testutil_write_temp("bad_bench.json", text);
    bench_report r;
    mp_error err;
    err_clear(&err);
    CU_ASSERT_EQUAL(bench_load(path, &r, &err), MP_INPUT);
    if (!strstr(err.msg, bad[i].message)) printf("\n  case %zu -> '%s'\n", i, err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].message));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bad_bench.json"));
    CU_ASSERT_EQUAL(r.n, 0);
  }
  /* Field by field: each broken value of the good case is refused. */
  static const struct {
    const char *from, *to, *message;
  } edits[] = {
      {"\"key\":\"g|c|even\"", "\"key\":\"g|c|optimal\"", "is not graph|chip|[mode|]method"},
      {"\"plan_hash\":\"0123456789abcdef\"", "\"plan_hash\":\"xyz\"", "plan_hash must be 16 hex digits"},
      {"\"solve_s\":0", "\"solve_s\":-1", "solve_s"},
      {"\"samples_per_s\":1", "\"samples_per_s\":0", "samples_per_s"},
      {"\"stages\":2", "\"stages\":0", "stages"},
      {"\"feasible\":true", "\"feasible\":1", "feasible must be true or false"},
      {"\"gap_to_optimum\":null", "\"gap_to_optimum\":\"x\"", "gap_to_optimum"},
      {"\"method\":\"even\"", "\"method\":\"even\",\"colour\":1", "colour"},
  };
  for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
    char c[1024], text[4096];
    const char *at = strstr(good_case, edits[i].from);
    snprintf(c, sizeof c, "%.*s%s%s", (int)(at - good_case), good_case, edits[i].to, at + strlen(edits[i].from));
    snprintf(text, sizeof text, "%s\"cases\":[%s]}", head, c);
    const char *path = testutil_write_temp("bad_case.json", text);
    bench_report r;
    mp_error err;
    CU_ASSERT_EQUAL(bench_load(path, &r, &err), MP_INPUT);
    if (!strstr(err.msg, edits[i].message)) printf("\n  edit %zu -> '%s'\n", i, err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, edits[i].message));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cases[0]"));
  }
  char text[4096];
  snprintf(text, sizeof text, "%s\"cases\":[%s]}", head, good_case);
  bench_report r;
  mp_error err;
  CU_ASSERT_EQUAL(bench_load(testutil_write_temp("good.json", text), &r, &err), MP_OK);
  CU_ASSERT_EQUAL(r.n, 1);
  bench_report_clear(&r);
  CU_ASSERT_EQUAL(bench_load(testutil_temp_path("missing.json"), &r, &err), MP_INPUT);
}

/* The diff of one case: baseline against now, on the same machine or not.  *failures and speed_why
 * (160 bytes) receive the diff's. */
static char speed_why[160];
static bench_diff_row diff_one(bench_entry old_e, bench_entry now_e, int same_machine, int *failures) {
  bench_report old, now;
  report_init(&old, "cpu A");
  report_init(&now, same_machine ? "cpu A" : "cpu B");
  mp_error err;
  bench_add(&old, &old_e, &err);
  bench_add(&now, &now_e, &err);
  bench_diff d;
  bench_diff_row row;
  memset(&row, 0, sizeof row);
  speed_why[0] = '\0';
  if (bench_diff_new(&old, &now, NULL, &d, &err) == MP_OK && d.n == 1) {
    row = d.rows[0];
    row.old = row.now = NULL; /* they die with the reports */
    *failures = d.failures;
    snprintf(speed_why, sizeof speed_why, "%s", d.speed_why);
  }
  bench_diff_clear(&d);
  bench_report_clear(&old);
  bench_report_clear(&now);
  return row;
}

static void diff_should_fail_on_quality_drops_over_half_a_percent(void) {
  int f = -1;
  bench_entry base = entry("g", "c", "even", 1000, 0.1, 0.1, 100);
  bench_diff_row r = diff_one(base, base, 1, &f);
  CU_ASSERT_EQUAL(r.verdict, BENCH_SAME);
  CU_ASSERT_EQUAL(f, 0);
  r = diff_one(base, entry("g", "c", "even", 995.5, 0.1, 0.1, 100), 1, &f); /* -0.45% */
  CU_ASSERT_EQUAL(r.verdict, BENCH_SAME);
  CU_ASSERT_EQUAL(f, 0);
  r = diff_one(base, entry("g", "c", "even", 994, 0.1, 0.1, 100), 0, &f); /* -0.6%, any machine */
  CU_ASSERT_EQUAL(r.verdict, BENCH_WORSE);
  CU_ASSERT_EQUAL(f, 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(r.why, "throughput -0.60%"));
  r = diff_one(base, entry("g", "c", "even", 1010, 0.1, 0.1, 100), 1, &f);
  CU_ASSERT_EQUAL(r.verdict, BENCH_BETTER);
  CU_ASSERT_EQUAL(f, 0);
  bench_entry lost = base;
  lost.feasible = 0;
  r = diff_one(base, lost, 0, &f);
  CU_ASSERT_EQUAL(r.verdict, BENCH_WORSE);
  CU_ASSERT_PTR_NOT_NULL(strstr(r.why, "no longer fits memory"));
  CU_ASSERT_EQUAL(f, 1);
}

static void diff_should_fail_on_speed_drops_over_25_percent_only_on_the_same_machine(void) {
  int f = -1;
  bench_entry base = entry("g", "c", "even", 1000, 0.1, 0.1, 100);
  bench_diff_row r = diff_one(base, entry("g", "c", "even", 1000, 0.1, 0.13, 100), 1, &f); /* speed -23% */
  CU_ASSERT_EQUAL(f, 0);
  CU_ASSERT_DOUBLE_EQUAL(r.solve, 0.1 / 0.13 - 1, 1e-12);
  r = diff_one(base, entry("g", "c", "even", 1000, 0.1, 0.14, 100), 1, &f); /* speed -28.6% */
  CU_ASSERT_EQUAL(f, 1);
  CU_ASSERT_EQUAL(r.fails, 0); /* speed fails the suite, not the case */
  CU_ASSERT_STRING_EQUAL(speed_why, "solve speed -28.6% over 1 cases");
  r = diff_one(base, entry("g", "c", "even", 1000, 0.1, 0.1, 74), 1, &f);
  CU_ASSERT_EQUAL(f, 1);
  CU_ASSERT_STRING_EQUAL(speed_why, "sim evaluations/s -26.0% over 1 cases");
  r = diff_one(base, entry("g", "c", "even", 1000, 0.1, 0.2, 50), 1, &f);
  CU_ASSERT_EQUAL(f, 2);
  r = diff_one(base, entry("g", "c", "even", 1000, 0.1, 0.1, 76), 1, &f);
  CU_ASSERT_EQUAL(f, 0);
  /* On another kind of machine speed is not compared at all. */
  r = diff_one(base, entry("g", "c", "even", 1000, 0.1, 10, 1), 0, &f);
  CU_ASSERT_EQUAL(f, 0);
  CU_ASSERT(isnan(r.solve) && isnan(r.evals));
  /* Solve times under 0.02 s on both sides are timer noise. */
  bench_entry fast = entry("g", "c", "even", 1000, 0.1, 0.001, 100);
  r = diff_one(fast, entry("g", "c", "even", 1000, 0.1, 0.019, 100), 1, &f);
  CU_ASSERT_EQUAL(f, 0);
  CU_ASSERT(isnan(r.solve));
  r = diff_one(fast, entry("g", "c", "even", 1000, 0.1, 0.03, 100), 1, &f);
  CU_ASSERT_EQUAL(f, 1);
}

static void diff_should_judge_speed_on_the_geometric_mean_over_the_suite(void) {
  bench_report old, now;
  report_init(&old, "cpu");
  report_init(&now, "cpu");
  mp_error err;
  /* Evaluations/s: one case halves, three gain 10%: mean ratio (0.5 * 1.1^3)^(1/4) = 0.8577, -14%. */
  static const char *const methods[] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; i++) {
    bench_entry o = entry("g", "c", methods[i], 1, 1, 0.001, 100);
    bench_entry e = entry("g", "c", methods[i], 1, 1, 0.001, i == 0 ? 50 : 110);
    bench_add(&old, &o, &err);
    bench_add(&now, &e, &err);
  }
  bench_diff d;
  CU_ASSERT_EQUAL_FATAL(bench_diff_new(&old, &now, NULL, &d, &err), MP_OK);
  CU_ASSERT_EQUAL(d.n_evals, 4);
  CU_ASSERT_DOUBLE_EQUAL(d.evals, pow(0.5 * 1.1 * 1.1 * 1.1, 0.25) - 1, 1e-12);
  CU_ASSERT_EQUAL(d.n_solve, 0);
  CU_ASSERT(isnan(d.solve));
  CU_ASSERT_EQUAL(d.failures, 0);
  bench_diff_clear(&d);
  /* All four at 70%: the suite's speed dropped by 30%. */
  for (int i = 0; i < 4; i++) now.entries[i].evals_per_s = 70;
  CU_ASSERT_EQUAL_FATAL(bench_diff_new(&old, &now, NULL, &d, &err), MP_OK);
  CU_ASSERT_EQUAL(d.failures, 1);
  CU_ASSERT_STRING_EQUAL(d.speed_why, "sim evaluations/s -30.0% over 4 cases");
  bench_diff_clear(&d);
  bench_report_clear(&old);
  bench_report_clear(&now);
}

static void diff_should_count_missing_cases_only_between_runs_of_the_same_suite(void) {
  bench_report old, now;
  report_init(&old, "cpu");
  report_init(&now, "cpu");
  mp_error err;
  bench_entry a = entry("g", "c", "even", 1, 1, 0.1, 1), b = entry("g", "c", "optimal", 1, 1, 0.1, 1),
              c = entry("g", "c", "greedy", 1, 1, 0.1, 1);
  bench_add(&old, &a, &err);
  bench_add(&old, &b, &err);
  bench_add(&now, &a, &err);
  bench_add(&now, &c, &err);
  bench_diff d;
  CU_ASSERT_EQUAL_FATAL(bench_diff_new(&old, &now, NULL, &d, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(d.n, 3);
  CU_ASSERT_EQUAL(d.rows[0].verdict, BENCH_SAME);
  CU_ASSERT_EQUAL(d.rows[1].verdict, BENCH_NEW);
  CU_ASSERT_EQUAL(d.rows[1].fails, 0);
  CU_ASSERT_EQUAL(d.rows[2].verdict, BENCH_MISSING);
  CU_ASSERT_PTR_EQUAL(d.rows[2].old, &old.entries[1]);
  CU_ASSERT_EQUAL(d.rows[2].fails, 1);
  CU_ASSERT_EQUAL(d.failures, 1);
  bench_diff_clear(&d);
  snprintf(now.filter, sizeof now.filter, "even");
  CU_ASSERT_EQUAL_FATAL(bench_diff_new(&old, &now, NULL, &d, &err), MP_OK);
  CU_ASSERT_EQUAL(d.failures, 0);
  CU_ASSERT_EQUAL(d.missing_fail, 0);
  bench_diff_clear(&d);
  bench_report_clear(&old);
  bench_report_clear(&now);
}

/* ---- meshpipe bench, end to end --------------------------------------------------------------- */

#define ONE_CASE "bench --quick -q --filter 'vgg16|mesh4x4|even' "

/* Rewrites a saved BENCH.json: every throughput times factor, and the machine's CPU renamed. */
static void rewrite_baseline(const char *from, const char *to, double factor, const char *cpu) {
  cJSON *root = NULL;
  mp_error err;
  if (jsonio_load(from, &root, &err) != MP_OK) return;
  cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "cases")) {
    cJSON *t = cJSON_GetObjectItem(c, "samples_per_s");
    cJSON_SetNumberValue(t, t->valuedouble * factor);
  }
  if (cpu) cJSON_SetValuestring(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "machine"), "cpu"), cpu);
  jsonio_save(to, root, &err);
  cJSON_Delete(root);
}

static void bench_command_should_fail_against_a_worsened_baseline(void) {
  char first[1024], worse[1024], other[1024], again[1024]; /* copies: testutil's paths rotate over 8 buffers */
  snprintf(first, sizeof first, "%s", testutil_temp_path("BENCH.json"));
  snprintf(worse, sizeof worse, "%s", testutil_temp_path("better_old.json"));
  snprintf(other, sizeof other, "%s", testutil_temp_path("other_machine.json"));
  snprintf(again, sizeof again, "%s", testutil_temp_path("again.json"));
  char args[4200], *out, *err;
  snprintf(args, sizeof args, ONE_CASE "-o '%s'", first);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, &out, &err), 0);
  free(out);
  free(err);
  bench_report r;
  mp_error e;
  CU_ASSERT_EQUAL_FATAL(bench_load(first, &r, &e), MP_OK);
  CU_ASSERT_EQUAL_FATAL(r.n, 1);
  CU_ASSERT_STRING_EQUAL(r.entries[0].key, "vgg16|mesh4x4|even");
  CU_ASSERT(r.entries[0].samples_per_s > 0);
  CU_ASSERT(r.entries[0].evals_per_s > 0);
  CU_ASSERT(isnan(r.entries[0].gap)); /* optimal is filtered out */
  CU_ASSERT_STRING_EQUAL(r.filter, "vgg16|mesh4x4|even");
  bench_report_clear(&r);

  /* The same figures from another machine: quality is equal, speed is not compared. */
  rewrite_baseline(first, other, 1.0, "another CPU");
  snprintf(args, sizeof args, ONE_CASE "-o '%s' --baseline '%s'", again, other);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "not compared: another kind of machine"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "+0.00%"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "0 regressions"));
  free(out);
  free(err);

  /* A baseline whose plan was 1% better: this run is a regression. */
  rewrite_baseline(first, worse, 1.01, "another CPU");
  snprintf(args, sizeof args, ONE_CASE "-o '%s' --baseline '%s'", again, worse);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &err), 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "REGRESSION (throughput -0.99%)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "1 regression\n"));
  free(out);
  free(err);
}

static void bench_command_should_reject_bad_usage_before_running(void) {
  static const struct {
    const char *args, *message;
  } bad[] = {
      {"bench --filter no-such-case", "--filter 'no-such-case' matches no case"},
      {"bench --baseline traces/tiny_resnet.json", "not a bench file"},
      {"bench --baseline no/such.json", "no/such.json"},
      {"bench extra", "unexpected argument 'extra'"},
      {"bench --bogus", "unknown option '--bogus'"},
      {"bench -j 0", "--jobs must be between"},
  };
  char never[1024];
  snprintf(never, sizeof never, "%s", testutil_temp_path("never.json"));
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char args[2048], *out, *err;
    snprintf(args, sizeof args, "%s -o '%s'", bad[i].args, never);
    CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &err), 2);
    if (!strstr(err, bad[i].message)) printf("\n  %s -> %s\n", bad[i].args, err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].message));
    CU_ASSERT_FALSE(testutil_exists(never));
    free(out);
    free(err);
  }
  char *out, *err;
  CU_ASSERT_EQUAL(testutil_meshpipe("bench --fidelity --resume", &out, &err), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "--resume needs --json FILE"));
  free(out);
  free(err);
  CU_ASSERT_EQUAL(testutil_meshpipe("bench --help", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "usage: meshpipe bench"));
  free(out);
  free(err);
}

int main(int argc, char **argv) {
  CU_TestInfo tests[] = {
      {"suite_should_be_every_model_chip_and_method_with_quick_a_prefix_subset",
       suite_should_be_every_model_chip_and_method_with_quick_a_prefix_subset},
      {"the_committed_baseline_should_load_and_hold_only_quick_suite_cases",
       the_committed_baseline_should_load_and_hold_only_quick_suite_cases},
      {"gaps_should_be_relative_to_the_optimal_bottleneck_of_the_same_graph_and_chip",
       gaps_should_be_relative_to_the_optimal_bottleneck_of_the_same_graph_and_chip},
      {"bench_json_should_load_back_what_it_saved", bench_json_should_load_back_what_it_saved},
      {"trained_entries_should_round_trip_and_gap_against_the_trained_optimum",
       trained_entries_should_round_trip_and_gap_against_the_trained_optimum},
      {"bench_load_should_reject_bad_files_naming_the_place", bench_load_should_reject_bad_files_naming_the_place},
      {"diff_should_fail_on_quality_drops_over_half_a_percent", diff_should_fail_on_quality_drops_over_half_a_percent},
      {"diff_should_fail_on_speed_drops_over_25_percent_only_on_the_same_machine",
       diff_should_fail_on_speed_drops_over_25_percent_only_on_the_same_machine},
      {"diff_should_judge_speed_on_the_geometric_mean_over_the_suite",
       diff_should_judge_speed_on_the_geometric_mean_over_the_suite},
      {"diff_should_count_missing_cases_only_between_runs_of_the_same_suite",
       diff_should_count_missing_cases_only_between_runs_of_the_same_suite},
      {"bench_command_should_fail_against_a_worsened_baseline", bench_command_should_fail_against_a_worsened_baseline},
      {"bench_command_should_reject_bad_usage_before_running", bench_command_should_reject_bad_usage_before_running},
      CU_TEST_INFO_NULL,
  };
  return testutil_run("bench", tests, argc, argv);
}
