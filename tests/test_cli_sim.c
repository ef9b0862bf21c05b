/* End-to-end tests of the commands that simulate, as an architect uses them: the real meshpipe binary
 * on the bundled graphs, chips and ONNX models (MESHPIPE_TEST_LABELS: simgrid).  Throughput at
 * batch > 1 is in samples everywhere; a plan made for another graph is refused naming both hashes;
 * every command that takes a graph takes the ONNX options; a replay on a chip with less SRAM charges
 * what simulate charges there; measured op times reach partition, compare, sweep and the model
 * figures of simulate; partition and compare say what binds each stage and the run; --mode train runs
 * from partition to simulate under both schedules, and its wrong options exit 2 naming option and value;
 * a training mini-batch recorded and replayed prints what simulate prints. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fileio.h"
#include "testutil.h"
#include "timeline.h"

/* The last command's output and error text (owned here). */
static char *out, *err;

/* Runs meshpipe with printf-formatted arguments; returns its exit status. */
static int mp(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int mp(const char *fmt, ...) {
  char args[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  free(out);
  free(err);
  out = err = NULL;
  int rc = testutil_meshpipe(args, &out, &err);
  if (rc != 0 && rc != 2) fprintf(stderr, "\n  meshpipe %s -> %d: %s", args, rc, err ? err : "");
  return rc;
}

static double num(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItem(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItem(o, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

static int close_to(double a, double b, double rel) { return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)); }

/* Paths that outlive testutil's rotating buffers. */
static char R18[1024], TINY[1024], R50[1024], C4[1024], C8[1024], C8E[1024];

static void paths(void) {
  snprintf(R18, sizeof R18, "%s", testutil_model("resnet18.onnx"));
  snprintf(TINY, sizeof TINY, "%s", testutil_src("traces/tiny_resnet.json"));
  snprintf(R50, sizeof R50, "%s", testutil_src("traces/resnet50.json"));
  snprintf(C4, sizeof C4, "%s", testutil_src("platforms/mesh4x4.json"));
  snprintf(C8, sizeof C8, "%s", testutil_src("platforms/mesh8x8.json"));
  snprintf(C8E, sizeof C8E, "%s", testutil_src("platforms/mesh8x8_fp16.json"));
}

/* At --batch 8 a micro-batch is 8 samples: every throughput is 8 x micro-batches/s and says so. */
static void throughput_at_batch_8_should_count_samples_everywhere(void) {
  char plan[1024], csv[1024];
  snprintf(plan, sizeof plan, "%s", testutil_temp_path("b8.plan.json"));
  snprintf(csv, sizeof csv, "%s", testutil_temp_path("b8.csv"));
  CU_ASSERT_EQUAL_FATAL(mp("partition -g '%s' --batch 8 -c '%s' -o '%s' --json", R18, C4, plan), 0);
  cJSON *p = cJSON_Parse(out);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  const cJSON *sim = cJSON_GetObjectItem(p, "simulated");
  CU_ASSERT_EQUAL(num(p, "batch"), 8);
  CU_ASSERT(close_to(num(p, "model_samples_per_s"), 8 / num(p, "period_s"), 1e-12));
  CU_ASSERT_EQUAL(num(sim, "batch"), 8);
  CU_ASSERT(close_to(num(sim, "samples_per_s"), 8 / num(sim, "period_s"), 1e-9));
  CU_ASSERT(close_to(num(sim, "microbatches_per_s"), 1 / num(sim, "period_s"), 1e-9));
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(sim, "throughput_per_s"));
  double samples = num(sim, "samples_per_s"), micro = num(sim, "microbatches_per_s");
  cJSON_Delete(p);

  char want[128];
  CU_ASSERT_EQUAL_FATAL(mp("partition -g '%s' --batch 8 -c '%s'", R18, C4), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "optimal on resnet18 (24 layers, batch 8: a micro-batch is 8 samples) over"));
  snprintf(want, sizeof want, "simulated              %.4g samples/s = %.4g micro-batches/s x 8", samples, micro);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
  CU_ASSERT_EQUAL_FATAL(mp("simulate -g '%s' --batch 8 -c '%s' -p '%s'", R18, C4, plan), 0);
  snprintf(want, sizeof want, "throughput   %.6g samples/s = %.6g micro-batches/s x 8 samples", samples, micro);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "micro-batches of 8 samples simulated"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "per micro-batch of 8 samples through the empty pipeline"));

  CU_ASSERT_EQUAL_FATAL(mp("compare -g '%s' --batch 8 -c '%s' --methods optimal,even --json", R18, C4), 0);
  cJSON *c = cJSON_Parse(out);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL(num(c, "batch"), 8);
  const cJSON *m0 = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "methods"), 0);
  CU_ASSERT(close_to(num(m0, "simulated_samples_per_s"), samples, 1e-9));
  CU_ASSERT(close_to(num(m0, "simulated_samples_per_s"), 8 / num(m0, "simulated_period_s"), 1e-9));
  cJSON_Delete(c);
  CU_ASSERT_EQUAL_FATAL(mp("compare -g '%s' --batch 8 -c '%s' --methods optimal", R18, C4), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "batch 8: a micro-batch is 8 samples"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "samples/s"));
  CU_ASSERT_PTR_NULL(strstr(out, "simulated/s"));

  /* sweep: a batch column, and samples_per_s = 8 / the simulated period as partition reported it */
  CU_ASSERT_EQUAL_FATAL(mp("sweep -g '%s' --batch 8 -c '%s' -m optimal -o '%s' -q", R18, C4, csv), 0);
  FILE *f = fopen(csv, "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  char head[1024], row[1024];
  CU_ASSERT_PTR_NOT_NULL(fgets(head, sizeof head, f));
  CU_ASSERT_PTR_NOT_NULL(fgets(row, sizeof row, f));
  fclose(f);
  CU_ASSERT_PTR_NOT_NULL(strstr(head, ",graph,batch,method,feasible,stages,model_period_s,samples_per_s,"));
  char *field[20];
  int n = 0;
  for (char *save = NULL, *t = strtok_r(row, ",", &save); t && n < 20; t = strtok_r(NULL, ",", &save)) field[n++] = t;
  CU_ASSERT_FATAL(n >= 8);
  CU_ASSERT_STRING_EQUAL(field[2], "8");
  CU_ASSERT(close_to(strtod(field[7], NULL), samples, 1e-9));
}

/* A plan made for the batch-8 graph on the batch-1 graph: refused by simulate, record and split with
 * exit 2 and one line naming the plan file and both hashes. */
static void a_plan_for_another_batch_should_be_refused_naming_both_hashes(void) {
  char plan[1024], trace[1024];
  snprintf(plan, sizeof plan, "%s", testutil_temp_path("r18b8.plan.json"));
  snprintf(trace, sizeof trace, "%s", testutil_temp_path("r18.trace"));
  CU_ASSERT_EQUAL_FATAL(mp("partition -g '%s' --batch 8 -c '%s' -o '%s' --no-simulate --json", R18, C4, plan), 0);
  cJSON *p = cJSON_Parse(out);
  char h8[17];
  snprintf(h8, sizeof h8, "%s", str(p, "graph_hash"));
  cJSON_Delete(p);
  CU_ASSERT_EQUAL_FATAL(mp("info '%s' --json", R18), 0);
  p = cJSON_Parse(out);
  char h1[17];
  snprintf(h1, sizeof h1, "%s", str(p, "graph_hash"));
  cJSON_Delete(p);
  CU_ASSERT_STRING_NOT_EQUAL(h1, h8);
  const char *const cmds[] = {"simulate", "record", "split"};
  for (int i = 0; i < 3; i++) {
    char extra[1100] = "";
    if (i == 1) snprintf(extra, sizeof extra, "-o '%s'", trace);
    CU_ASSERT_EQUAL(mp("%s -g '%s' -c '%s' -p '%s' %s", cmds[i], R18, C4, plan, extra), 2);
    char want[4096];
    snprintf(want, sizeof want, "meshpipe: %s: graph.hash: the plan was made for graph 'resnet18' of hash %s, but graph "
             "'resnet18' (%s) has hash %s", plan, h8, R18, h1);
    CU_ASSERT(strstr(err, want) == err);
    int lines = 0;
    for (const char *q = err; *q; q++) lines += *q == '\n';
    CU_ASSERT_EQUAL(lines, 1);
    CU_ASSERT_STRING_EQUAL(out, "");
  }
  CU_ASSERT(!testutil_exists(trace));
  /* the graph it was made for takes it */
  CU_ASSERT_EQUAL(mp("simulate -g '%s' --batch 8 -c '%s' -p '%s' -M 4", R18, C4, plan), 0);
}

/* simulate, record, split and train take --batch, --dtype and --no-fuse for an .onnx graph. */
static void every_command_that_takes_a_graph_should_take_the_onnx_options(void) {
  char plan[1024], trace[1024], pol[1024];
  snprintf(plan, sizeof plan, "%s", testutil_temp_path("opts.plan.json"));
  snprintf(trace, sizeof trace, "%s", testutil_temp_path("opts.trace"));
  snprintf(pol, sizeof pol, "%s", testutil_temp_path("opts.pol"));
  const char *opts = "--batch 2 --dtype fp32 --no-fuse";
  CU_ASSERT_EQUAL_FATAL(mp("partition -g '%s' %s -c '%s' -o '%s' --no-simulate", R18, opts, C4, plan), 0);
  CU_ASSERT_EQUAL(mp("simulate -g '%s' %s -c '%s' -p '%s' -M 4 --json", R18, opts, C4, plan), 0);
  cJSON *s = cJSON_Parse(out);
  CU_ASSERT_EQUAL(num(s, "batch"), 2);
  cJSON_Delete(s);
  CU_ASSERT_EQUAL(mp("record -g '%s' %s -c '%s' -p '%s' -M 1 -o '%s'", R18, opts, C4, plan, trace), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "1 micro-batch to")); /* and not "1 micro-batches" */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "1 micro-batch of 2 samples simulated"));
  CU_ASSERT_EQUAL(mp("replay '%s' -c '%s' --json", trace, C4), 0);
  s = cJSON_Parse(out);
  CU_ASSERT_EQUAL(num(s, "batch"), 2); /* the trace carries the batch */
  cJSON_Delete(s);
  CU_ASSERT_EQUAL(mp("split -g '%s' %s -c '%s' -p '%s'", R18, opts, C4, plan), 0);
  CU_ASSERT_EQUAL(mp("train -g '%s' %s -c '%s' -o '%s' --reward model --episodes 8 -q --json", R18, opts, C4, pol), 0);
  s = cJSON_Parse(out);
  const cJSON *g0 = cJSON_GetArrayItem(cJSON_GetObjectItem(s, "graphs"), 0);
  CU_ASSERT_EQUAL(num(g0, "batch"), 2);
  CU_ASSERT(num(g0, "best_samples_per_s") > 0);
  cJSON_Delete(s);
  /* without the options the plan is for another graph (fp16, fused): refused */
  CU_ASSERT_EQUAL(mp("simulate -g '%s' -c '%s' -p '%s'", R18, C4, plan), 2);
  CU_ASSERT_EQUAL(mp("replay '%s' -c '%s'", trace, C8), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "recorded on a 4x4 chip (16 cores), but mesh8x8 has 64 cores"));
}

/* Record ResNet-50 on the 8x8 chip, replay the trace on the same mesh with 1 MiB of SRAM per core:
 * the figures are those of simulating the plan there (DRAM streams included), to 1e-9. */
static void a_replay_on_a_chip_with_less_sram_should_charge_what_simulate_charges(void) {
  char plan[1024], trace[1024], small[1024];
  snprintf(plan, sizeof plan, "%s", testutil_temp_path("r50.plan.json"));
  snprintf(trace, sizeof trace, "%s", testutil_temp_path("r50.trace"));
  snprintf(small, sizeof small, "%s",
           testutil_write_temp("mesh8x8-1MiB.json",
                               "{\"format\": \"meshpipe-chip\", \"version\": 1, \"name\": \"mesh8x8-1MiB\", \"mesh\": "
                               "{\"width\": 8, \"height\": 8}, \"core\": {\"flops\": 1e12, \"sram_bytes\": 1048576}, "
                               "\"noc\": {\"bandwidth\": 6.4e10, \"latency\": 5e-9}, \"dram\": {\"bandwidth\": 2e11, "
                               "\"ports\": [[0, 3], [7, 4]]}}"));
  CU_ASSERT_EQUAL_FATAL(mp("partition -g '%s' -c '%s' -o '%s' --no-simulate", R50, C8, plan), 0);
  CU_ASSERT_EQUAL_FATAL(mp("record -g '%s' -c '%s' -p '%s' -o '%s' --json", R50, C8, plan, trace), 0);
  cJSON *rec = cJSON_Parse(out);
  CU_ASSERT_EQUAL_FATAL(mp("replay '%s' -c '%s' --json", trace, small), 0);
  cJSON *rep = cJSON_Parse(out);
  CU_ASSERT_EQUAL_FATAL(mp("simulate -g '%s' -c '%s' -p '%s' --json", R50, small, plan), 0);
  cJSON *sim = cJSON_Parse(out);
  CU_ASSERT_FATAL(rec && rep && sim);
  static const char *const keys[] = {"samples_per_s", "period_s", "makespan_s", "latency_s", "model_period_s",
                                     "dram_bytes", "microbatches", "feasible"};
  for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
    const cJSON *a = cJSON_GetObjectItem(rep, keys[k]), *b = cJSON_GetObjectItem(sim, keys[k]);
    double x = cJSON_IsBool(a) ? cJSON_IsTrue(a) : a->valuedouble, y = cJSON_IsBool(b) ? cJSON_IsTrue(b) : b->valuedouble;
    if (!close_to(x, y, 1e-9)) fprintf(stderr, "\n  %s: replay %.17g, simulate %.17g", keys[k], x, y);
    CU_ASSERT(close_to(x, y, 1e-9));
  }
  const cJSON *sa = cJSON_GetObjectItem(rep, "stages"), *sb = cJSON_GetObjectItem(sim, "stages");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(sa), cJSON_GetArraySize(sb));
  for (int i = 0; i < cJSON_GetArraySize(sa); i++) {
    const cJSON *x = cJSON_GetArrayItem(sa, i), *y = cJSON_GetArrayItem(sb, i);
    CU_ASSERT(close_to(num(x, "compute_s"), num(y, "compute_s"), 1e-9));
    CU_ASSERT(close_to(num(x, "dram_s"), num(y, "dram_s"), 1e-9));
    CU_ASSERT_EQUAL(num(x, "dram_bytes"), num(y, "dram_bytes"));
  }
  /* the smaller chip streams more and is slower than the recording */
  CU_ASSERT(num(rep, "dram_bytes") > num(rec, "dram_bytes"));
  CU_ASSERT(num(rep, "samples_per_s") < num(rec, "samples_per_s"));
  CU_ASSERT_EQUAL_FATAL(mp("replay '%s' -c '%s'", trace, small), 0);
  CU_ASSERT_PTR_NULL(strstr(out, "0 B streamed"));
  CU_ASSERT_EQUAL(mp("replay '%s' -c '%s'", trace, C4), 2); /* "an 8x8", not "a 8x8" */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "recorded on an 8x8 chip (64 cores), but mesh4x4 has 16 cores"));
  cJSON_Delete(rec);
  cJSON_Delete(rep);
  cJSON_Delete(sim);
}

/* tiny_resnet's block.conv_a measured at 40 us (header "op,us"): partition, compare and sweep plan with
 * it, simulate's model figures use it, and they agree with each other. */
static void measured_op_times_should_reach_every_search_and_the_model_figures(void) {
  char times[1024], plan[1024], csv[1024];
  snprintf(times, sizeof times, "%s", testutil_write_temp("times.csv", "op,us\nblock.conv_a,40\n"));
  snprintf(plan, sizeof plan, "%s", testutil_temp_path("timed.plan.json"));
  snprintf(csv, sizeof csv, "%s", testutil_temp_path("timed.csv"));
  CU_ASSERT_EQUAL_FATAL(mp("partition -g '%s' -c '%s' --no-simulate --json", TINY, C4), 0);
  cJSON *flop = cJSON_Parse(out);
  CU_ASSERT_EQUAL_FATAL(mp("partition -g '%s' -c '%s' --op-times '%s' -o '%s' --json", TINY, C4, times, plan), 0);
  cJSON *timed = cJSON_Parse(out);
  CU_ASSERT_FATAL(flop && timed);
  CU_ASSERT_EQUAL(num(timed, "op_times_overridden"), 1);
  /* 40 us on one 1 TFLOP/s core: the op's stage does 4e7 flops more or less than before */
  double f0 = 0, f1 = 0;
  const cJSON *s;
  cJSON_ArrayForEach(s, cJSON_GetObjectItem(flop, "stages")) f0 += num(s, "flops");
  cJSON_ArrayForEach(s, cJSON_GetObjectItem(timed, "stages")) f1 += num(s, "flops");
  CU_ASSERT(f1 > f0 + 3e7);
  CU_ASSERT(num(timed, "period_s") > num(flop, "period_s"));
  /* simulate with the times: its model period is partition's (the same graph, plan and chip) */
  CU_ASSERT_EQUAL_FATAL(mp("simulate -g '%s' -c '%s' -p '%s' --op-times '%s' --json", TINY, C4, plan, times), 0);
  cJSON *sim = cJSON_Parse(out);
  CU_ASSERT(close_to(num(sim, "model_period_s"), num(timed, "period_s"), 1e-12));
  CU_ASSERT_EQUAL(num(sim, "op_times_overridden"), 1);
  CU_ASSERT(close_to(num(sim, "period_s"), num(cJSON_GetObjectItem(timed, "simulated"), "period_s"), 1e-9));
  cJSON_Delete(sim);
  /* without the times the same plan is simulated on the flop model: another model period */
  CU_ASSERT_EQUAL_FATAL(mp("simulate -g '%s' -c '%s' -p '%s' --json", TINY, C4, plan), 0);
  sim = cJSON_Parse(out);
  CU_ASSERT(num(sim, "model_period_s") < num(timed, "period_s"));
  cJSON_Delete(sim);
  CU_ASSERT_EQUAL_FATAL(mp("compare -g '%s' -c '%s' --op-times '%s' --methods optimal,even --json", TINY, C4, times), 0);
  cJSON *cmp = cJSON_Parse(out);
  CU_ASSERT(close_to(num(cmp, "optimum_s"), num(timed, "period_s"), 1e-12));
  CU_ASSERT_EQUAL(num(cmp, "op_times_overridden"), 1);
  cJSON_Delete(cmp);
  CU_ASSERT_EQUAL_FATAL(mp("sweep -g '%s' -c '%s' --op-times '%s' -m optimal -o '%s' -q", TINY, C4, times, csv), 0);
  FILE *f = fopen(csv, "r");
  char row[1024] = "";
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_PTR_NOT_NULL(fgets(row, sizeof row, f));
  CU_ASSERT_PTR_NOT_NULL(fgets(row, sizeof row, f));
  fclose(f);
  char *field[20];
  int n = 0;
  for (char *save = NULL, *t = strtok_r(row, ",", &save); t && n < 20; t = strtok_r(NULL, ",", &save)) field[n++] = t;
  CU_ASSERT_FATAL(n >= 7);
  CU_ASSERT(close_to(strtod(field[6], NULL), num(timed, "period_s"), 1e-9)); /* model_period_s */
  /* a times file for another graph is bad input */
  CU_ASSERT_EQUAL(mp("partition -g '%s' -c '%s' --op-times '%s'", R50, C4, times), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "times.csv: line 2: no op 'block.conv_a' in graph 'resnet50'"));
  cJSON_Delete(flop);
  cJSON_Delete(timed);
}

/* record --mode train writes one mini-batch under schedule `sched`; its replay on the recording chip prints
 * what simulate --mode train prints, line for line and in JSON (the replay adds its header line, and trace
 * and map in JSON); training options without --mode train are refused; the timeline shows the passes
 * (under zb the weight-gradient passes too). */
static void carry_training(const char *sched) {
  char plan[1024], trace[1024];
  snprintf(plan, sizeof plan, "%s", testutil_temp_path("tiny.train.plan.json"));
  snprintf(trace, sizeof trace, "%s", testutil_temp_path("tiny.train.trace"));
  CU_ASSERT_EQUAL_FATAL(mp("partition -g '%s' -c '%s' --mode train -o '%s' --no-simulate", TINY, C4, plan), 0);
  CU_ASSERT_EQUAL_FATAL(
      mp("record -g '%s' -c '%s' -p '%s' --mode train --schedule %s -M 4 -o '%s' --json", TINY, C4, plan, sched, trace),
      0);
  cJSON *rec = cJSON_Parse(out);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
  CU_ASSERT_STRING_EQUAL(str(rec, "schedule"), sched);
  CU_ASSERT(num(rec, "trace_actions") > 0);
  cJSON_Delete(rec);
  CU_ASSERT_EQUAL_FATAL(mp("simulate -g '%s' -c '%s' -p '%s' --mode train --schedule %s -M 4", TINY, C4, plan, sched), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, sched));
  char *sim_text = strdup(out);
  CU_ASSERT_EQUAL_FATAL(mp("replay '%s' -c '%s'", trace, C4), 0);
  const char *body = strchr(out, '\n');
  CU_ASSERT_PTR_NOT_NULL_FATAL(body);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "on the chip it was recorded on"));
  CU_ASSERT_STRING_EQUAL(body + 1, sim_text);
  free(sim_text);
  CU_ASSERT_EQUAL_FATAL(
      mp("simulate -g '%s' -c '%s' -p '%s' --mode train --schedule %s -M 4 --json", TINY, C4, plan, sched), 0);
  cJSON *sim = cJSON_Parse(out);
  CU_ASSERT_EQUAL_FATAL(mp("replay '%s' -c '%s' --json", trace, C4), 0);
  cJSON *rep = cJSON_Parse(out);
  CU_ASSERT_FATAL(sim && rep);
  CU_ASSERT_STRING_EQUAL(str(rep, "trace"), trace);
  cJSON_DeleteItemFromObject(rep, "trace");
  cJSON_DeleteItemFromObject(rep, "map");
  char *a = cJSON_PrintUnformatted(sim), *b = cJSON_PrintUnformatted(rep);
  CU_ASSERT_STRING_EQUAL(a, b);
  free(a);
  free(b);
  cJSON_Delete(sim);
  cJSON_Delete(rep);
  CU_ASSERT_EQUAL(mp("record -g '%s' -c '%s' -p '%s' --schedule gpipe -o '%s'", TINY, C4, plan, trace), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "--mode train"));
  /* the same mini-batch as a timeline: a valid trace-event file, the report unchanged */
  char tl[1024];
  snprintf(tl, sizeof tl, "%s", testutil_temp_path("tiny.train.timeline.json"));
  CU_ASSERT_EQUAL_FATAL(
      mp("simulate -g '%s' -c '%s' -p '%s' --mode train --schedule %s -M 4 --timeline '%s'", TINY, C4, plan, sched, tl),
      0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "simulated activities written to"));
  size_t n_events = 0;
  mp_error e;
  CU_ASSERT_EQUAL(timeline_validate_file(tl, &n_events, &e), MP_OK);
  CU_ASSERT(n_events > 100);
  char *tl_text = NULL;
  size_t tl_len = 0;
  CU_ASSERT_EQUAL_FATAL(fileio_read_all(tl, &tl_text, &tl_len, &e), MP_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(tl_text, "conv1 (backward)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(tl_text, "grad t_conv1"));
  CU_ASSERT_EQUAL(strstr(tl_text, "conv1 (weight gradients)") != NULL, strcmp(sched, "zb") == 0);
  free(tl_text);
}

static void record_and_replay_should_carry_a_training_mini_batch(void) {
  carry_training("gpipe");
  carry_training("zb");
}

/* A copy (in the temp folder) of the trace at path as recorded before traces had energy counts: the
 * fields from " macs " on cut from every group line. */
static const char *without_energy_counts(const char *path) {
  static char text[1 << 16];
  FILE *f = fopen(path, "r");
  size_t n = 0;
  char line[4096];
  while (f && fgets(line, sizeof line, f)) {
    char *cut = strncmp(line, "group ", 6) == 0 ? strstr(line, " macs ") : NULL;
    if (cut) strcpy(cut, "\n");
    size_t len = strlen(line);
    if (n + len < sizeof text) memcpy(text + n, line, len + 1), n += len;
  }
  if (f) fclose(f);
  return testutil_write_temp("before-counts.trace", text);
}

/* On a chip with energy figures simulate and compare report joules, and agree on the same plan; on a
 * chip without them neither prints nor writes any. */
static void simulate_and_compare_should_report_energy_only_on_a_chip_with_energy_figures(void) {
  char plan[1024];
  snprintf(plan, sizeof plan, "%s", testutil_temp_path("energy.plan.json"));
  CU_ASSERT_EQUAL_FATAL(mp("partition -q -g '%s' -c '%s' -o '%s'", TINY, C8E, plan), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "samples/J, ") && strstr(out, "TOPS/W (simulated; model "));
  CU_ASSERT_EQUAL_FATAL(mp("simulate -g '%s' -c '%s' -p '%s' --json", TINY, C8E, plan), 0);
  cJSON *sim = cJSON_Parse(out);
  double j = num(sim, "energy_j_per_sample");
  CU_ASSERT(j > 0);
  CU_ASSERT(close_to(num(sim, "power_w"), j * num(sim, "samples_per_s"), 1e-9));
  const cJSON *e = cJSON_GetObjectItem(sim, "energy"), *stages = cJSON_GetObjectItem(sim, "stages");
  double kinds = num(e, "compute_j") + num(e, "sram_j") + num(e, "noc_j") + num(e, "dram_j") + num(e, "static_j");
  CU_ASSERT(close_to(kinds, j, 1e-12));
  double sum = 0;
  for (int i = 0; i < cJSON_GetArraySize(stages); i++) sum += num(cJSON_GetArrayItem(stages, i), "energy_j");
  CU_ASSERT(close_to(sum, j, 1e-12));
  CU_ASSERT_EQUAL_FATAL(mp("simulate -g '%s' -c '%s' -p '%s'", TINY, C8E, plan), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "samples/J"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "TOPS/W effective"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "energy/sample"));
  CU_ASSERT_EQUAL_FATAL(mp("compare -g '%s' -c '%s' --methods optimal,even --json", TINY, C8E), 0);
  cJSON *cmp = cJSON_Parse(out);
  const cJSON *opt = cJSON_GetArrayItem(cJSON_GetObjectItem(cmp, "methods"), 0);
  CU_ASSERT_STRING_EQUAL(str(opt, "method"), "optimal");
  CU_ASSERT(close_to(num(opt, "simulated_energy_j_per_sample"), j, 1e-9)); /* the same plan, the same run */
  CU_ASSERT(close_to(num(opt, "simulated_samples_per_j"), 1 / j, 1e-9));
  CU_ASSERT(num(opt, "simulated_power_w") > 0);
  cJSON_Delete(cmp);
  cJSON_Delete(sim);
  CU_ASSERT_EQUAL_FATAL(mp("compare -g '%s' -c '%s' --methods optimal,even", TINY, C8E), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "samples/J"));
  /* a trace records what the energy is made of: its replay on the same chip spends the same; a trace
   * recorded before it did is replayed without compute and SRAM energy, and says so */
  char trace[1024];
  snprintf(trace, sizeof trace, "%s", testutil_temp_path("energy.trace"));
  CU_ASSERT_EQUAL_FATAL(mp("record -g '%s' -c '%s' -p '%s' -o '%s'", TINY, C8E, plan, trace), 0);
  CU_ASSERT_EQUAL_FATAL(mp("replay '%s' -c '%s' --json", trace, C8E), 0);
  cJSON *rep = cJSON_Parse(out);
  CU_ASSERT(close_to(num(rep, "energy_j_per_sample"), j, 1e-9));
  CU_ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(rep, "energy_counts_recorded")));
  cJSON_Delete(rep);
  char old[1024];
  snprintf(old, sizeof old, "%s", without_energy_counts(testutil_src("traces/tiny_resnet.mesh4x4.trace")));
  CU_ASSERT_EQUAL_FATAL(mp("replay '%s' -c '%s' --map snake:0", old, C8E), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "its energy leaves out compute and SRAM"));
  /* without energy figures: nothing of it */
  CU_ASSERT_EQUAL_FATAL(mp("compare -g '%s' -c '%s' --methods optimal --json", TINY, C4), 0);
  cmp = cJSON_Parse(out);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cmp, "methods"), 0),
                                         "simulated_samples_per_j"));
  cJSON_Delete(cmp);
  CU_ASSERT_EQUAL_FATAL(mp("compare -g '%s' -c '%s' --methods optimal", TINY, C4), 0);
  CU_ASSERT_PTR_NULL(strstr(out, "samples/J"));
  CU_ASSERT_EQUAL_FATAL(mp("partition -q -g '%s' -c '%s'", TINY, C4), 0);
  CU_ASSERT_PTR_NULL(strstr(out, "samples/J"));
}

/* What binds: per stage and per run, in partition's and compare's text and JSON.  VGG-16 on the 4x4 chip
 * fits nowhere: some stages wait for DRAM streams (sram). */
static void partition_and_compare_should_say_what_binds_each_stage_and_the_run(void) {
  char vgg[1024];
  snprintf(vgg, sizeof vgg, "%s", testutil_src("traces/vgg16.json"));
  CU_ASSERT_EQUAL_FATAL(mp("partition -g '%s' -c '%s' -m even --no-simulate --json", vgg, C4), 0);
  cJSON *p = cJSON_Parse(out);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  static const char *const words[] = {"compute", "all-gather", "send", "sram", "noc", "dram"};
  int counts[6] = {0}, n = 0;
  const cJSON *s;
  cJSON_ArrayForEach(s, cJSON_GetObjectItem(p, "stages")) {
    const cJSON *parts = cJSON_GetObjectItem(s, "binds_parts");
    int w = -1;
    for (int k = 0; k < 4; k++)
      if (strcmp(str(s, "binds"), words[k]) == 0) w = k;
    CU_ASSERT(w >= 0);
    if (w >= 0) counts[w]++;
    n++;
    /* the word is the largest part of t_i */
    double work = num(parts, "work_s"), gather = num(parts, "all_gather_s"), dram = num(parts, "dram_s"),
           send = num(parts, "send_s");
    double largest = w == 0 ? work : w == 1 ? gather : w == 2 ? send : dram;
    CU_ASSERT(largest >= work && largest >= gather && (w == 2 || largest >= dram));
    CU_ASSERT(close_to(fmax(work + gather + dram, send), num(s, "t_s"), 1e-9));
  }
  CU_ASSERT(counts[3] > 0); /* sram */
  const cJSON *by = cJSON_GetObjectItem(p, "stages_binding");
  for (int k = 0; k < 4; k++) CU_ASSERT_EQUAL(num(by, words[k]), counts[k]);
  CU_ASSERT(n == num(p, "n_stages"));
  int stage = (int)num(p, "binds_stage");
  CU_ASSERT_STRING_EQUAL(str(p, "binds"), str(cJSON_GetArrayItem(cJSON_GetObjectItem(p, "stages"), stage), "binds"));
  CU_ASSERT(strlen(str(p, "why")) > 10);
  cJSON_Delete(p);
  CU_ASSERT_EQUAL_FATAL(mp("partition -g '%s' -c '%s' -m even --no-simulate", vgg, C4), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "what binds             stage "));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, " sram "));
  CU_ASSERT_EQUAL_FATAL(mp("compare -g '%s' -c '%s' --methods optimal,even --no-simulate --json", vgg, C4), 0);
  cJSON *c = cJSON_Parse(out);
  const cJSON *m;
  cJSON_ArrayForEach(m, cJSON_GetObjectItem(c, "methods")) {
    CU_ASSERT(strlen(str(m, "binds")) > 0);
    CU_ASSERT(cJSON_GetArraySize(cJSON_GetObjectItem(m, "stages")) == num(m, "n_stages"));
    CU_ASSERT(strlen(str(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "stages"), 0), "binds")) > 0);
  }
  cJSON_Delete(c);
  CU_ASSERT_EQUAL_FATAL(mp("compare -g '%s' -c '%s' --methods optimal,even --no-simulate", vgg, C4), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "stages bound by"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, " sram"));
}

/* --mode train end to end: partition with the training optimum writes a plan and simulates one mini-batch;
 * simulate trains it under GPipe and 1F1B, with and without recompute: samples/s is M x batch over the
 * mini-batch, GPipe holds all M stashes on every stage and 1F1B stage i of p min(p - i, M), per stage its
 * forward, backward and idle time add up to at most the mini-batch, the planned SRAM peak is never above
 * the naive one, and recompute stashes no more and works more in the backward. */
static cJSON *train_run(const char *plan, const char *extra) {
  if (mp("simulate -g '%s' -c '%s' -p '%s' --mode train -M 6 %s --json", TINY, C4, plan, extra) != 0) return NULL;
  return cJSON_Parse(out);
}

static void training_should_run_end_to_end_from_partition_to_simulate(void) {
  char plan[1024];
  snprintf(plan, sizeof plan, "%s", testutil_temp_path("train.plan.json"));
  CU_ASSERT_EQUAL_FATAL(mp("partition -g '%s' -c '%s' --mode train -M 6 -o '%s' --json", TINY, C4, plan), 0);
  cJSON *p = cJSON_Parse(out);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_STRING_EQUAL(str(p, "mode"), "train");
  const cJSON *model = cJSON_GetObjectItem(p, "model"), *sim = cJSON_GetObjectItem(p, "simulated");
  CU_ASSERT(num(model, "samples_per_s") > 0 && num(sim, "samples_per_s") > 0);
  CU_ASSERT_EQUAL(num(sim, "microbatches"), 6);
  CU_ASSERT(strstr(str(p, "notes"), "optimal for training") != NULL);
  cJSON_Delete(p);
  static const char *const runs[4] = {"--schedule gpipe", "--schedule 1f1b", "--schedule gpipe --recompute",
                                      "--schedule 1f1b --recompute"};
  double stash[4] = {0}, bwd[4] = {0}, bubble[4];
  for (int k = 0; k < 4; k++) {
    cJSON *r = train_run(plan, runs[k]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    double mb = num(r, "minibatch_s");
    CU_ASSERT(close_to(num(r, "samples_per_s"), 6 * num(r, "batch") / mb, 1e-9));
    bubble[k] = num(r, "bubble");
    CU_ASSERT(bubble[k] >= 0 && bubble[k] < 1);
    const cJSON *stages = cJSON_GetObjectItem(r, "stages"), *s;
    int n = cJSON_GetArraySize(stages), i = 0;
    CU_ASSERT(n >= 1);
    cJSON_ArrayForEach(s, stages) {
      int want = k % 2 == 0 ? 6 : (n - i < 6 ? n - i : 6);
      CU_ASSERT_EQUAL(num(s, "held"), want);
      CU_ASSERT(num(s, "fwd_s") > 0 && num(s, "bwd_s") > 0 && num(s, "idle_s") >= 0);
      CU_ASSERT(num(s, "fwd_s") + num(s, "bwd_s") + num(s, "update_s") <= mb * (1 + 1e-9));
      CU_ASSERT(num(s, "sram_peak_bytes") <= num(s, "sram_naive_bytes"));
      stash[k] += num(s, "stash_bytes");
      bwd[k] += num(s, "bwd_s");
      i++;
    }
    cJSON_Delete(r);
  }
  CU_ASSERT(stash[2] <= stash[0] && stash[3] <= stash[1]);
  CU_ASSERT(bwd[2] > bwd[0] && bwd[3] > bwd[1]);
  CU_ASSERT_EQUAL_FATAL(mp("simulate -g '%s' -c '%s' -p '%s' --mode train --schedule gpipe", TINY, C4, plan), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "samples/s"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "bubble"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "SRAM peak (naive)/core"));
  /* compare and sweep train too: optimal's training period is the least, sweep rows gain two columns */
  CU_ASSERT_EQUAL_FATAL(mp("compare -g '%s' -c '%s' --mode train --methods optimal,even --json", TINY, C4), 0);
  cJSON *cmp = cJSON_Parse(out);
  const cJSON *ms = cJSON_GetObjectItem(cmp, "methods");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(ms), 2);
  const cJSON *m0 = cJSON_GetArrayItem(ms, 0), *m1 = cJSON_GetArrayItem(ms, 1);
  CU_ASSERT(num(m0, "model_period_s") <= num(m1, "model_period_s"));
  CU_ASSERT(num(m0, "simulated_bubble") >= 0 && num(m1, "sram_peak_bytes") > 0);
  CU_ASSERT(close_to(num(m1, "speedup_over_even"), 1, 1e-12));
  double even_sps = num(m1, "simulated_samples_per_s");
  cJSON_Delete(cmp);
  /* rl searches on training rewards and never returns worse than its initial (even) plan, simulated */
  CU_ASSERT_EQUAL_FATAL(mp("partition -g '%s' -c '%s' --mode train -m rl --episodes 2 -q --json", TINY, C4), 0);
  cJSON *rl = cJSON_Parse(out);
  CU_ASSERT(strstr(str(rl, "notes"), "for training (mini-batch time over M)") != NULL);
  CU_ASSERT(num(cJSON_GetObjectItem(rl, "simulated"), "samples_per_s") >= even_sps * (1 - 1e-6));
  cJSON_Delete(rl);
  char csv[1024];
  snprintf(csv, sizeof csv, "%s", testutil_temp_path("train.sweep.csv"));
  remove(csv);
  CU_ASSERT_EQUAL_FATAL(mp("sweep -g '%s' -c '%s' -m optimal,even --mode train -M 4 -o '%s' -q -j 1", TINY, C4, csv), 0);
  char *text = NULL;
  size_t len = 0;
  mp_error e;
  CU_ASSERT_EQUAL_FATAL(fileio_read_all(csv, &text, &len, &e), MP_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, ",cores,bubble,sram_peak_bytes,options,inputs,solve_s\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, ";mode=train;schedule=1f1b;optimizer=adam;train_M=4;recompute=0,"));
  int lines = 0;
  for (const char *q = text; *q; q++) lines += *q == '\n';
  CU_ASSERT_EQUAL(lines, 3);
  free(text);
  /* inference stays the default */
  CU_ASSERT_EQUAL_FATAL(mp("simulate -g '%s' -c '%s' -p '%s' --json", TINY, C4, plan), 0);
  cJSON *inf = cJSON_Parse(out);
  CU_ASSERT(inf && cJSON_GetObjectItem(inf, "mode") == NULL && cJSON_GetObjectItem(inf, "bubble") == NULL);
  cJSON_Delete(inf);
}

/* A wrong training option names the option and its value and exits 2, before anything is loaded. */
static void a_wrong_training_option_should_name_option_and_value_and_exit_2(void) {
  CU_ASSERT_EQUAL(mp("simulate -g '%s' -p x --mode trian", TINY), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "--mode is infer or train, got 'trian'"));
  CU_ASSERT_EQUAL(mp("partition -g '%s' --mode train --schedule zigzag", TINY), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "--schedule is gpipe, 1f1b or zb, got 'zigzag'"));
  CU_ASSERT_EQUAL(mp("simulate -g '%s' -p x --mode train --optimizer lion", TINY), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "--optimizer is sgd, momentum or adam, got 'lion'"));
  CU_ASSERT_EQUAL(mp("partition -g '%s' --recompute", TINY), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "need --mode train"));
}

static CU_TestInfo tests[] = {
    {"throughput_at_batch_8_should_count_samples_everywhere", throughput_at_batch_8_should_count_samples_everywhere},
    {"a_plan_for_another_batch_should_be_refused_naming_both_hashes",
     a_plan_for_another_batch_should_be_refused_naming_both_hashes},
    {"every_command_that_takes_a_graph_should_take_the_onnx_options",
     every_command_that_takes_a_graph_should_take_the_onnx_options},
    {"a_replay_on_a_chip_with_less_sram_should_charge_what_simulate_charges",
     a_replay_on_a_chip_with_less_sram_should_charge_what_simulate_charges},
    {"record_and_replay_should_carry_a_training_mini_batch", record_and_replay_should_carry_a_training_mini_batch},
    {"measured_op_times_should_reach_every_search_and_the_model_figures",
     measured_op_times_should_reach_every_search_and_the_model_figures},
    {"simulate_and_compare_should_report_energy_only_on_a_chip_with_energy_figures",
     simulate_and_compare_should_report_energy_only_on_a_chip_with_energy_figures},
    {"partition_and_compare_should_say_what_binds_each_stage_and_the_run",
     partition_and_compare_should_say_what_binds_each_stage_and_the_run},
    {"training_should_run_end_to_end_from_partition_to_simulate",
     training_should_run_end_to_end_from_partition_to_simulate},
    {"a_wrong_training_option_should_name_option_and_value_and_exit_2",
     a_wrong_training_option_should_name_option_and_value_and_exit_2},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) {
  paths();
  int rc = testutil_run("cli_sim", tests, argc, argv);
  free(out);
  free(err);
  return rc;
}
