/* Tests of the simulator's traces (MESHPIPE_TEST_LABELS: simgrid): a recorded trace replayed on the
 * chip it was recorded on gives exactly the simulate figures (also through the text format and with
 * weights streamed from DRAM), on a chip with half the NoC bandwidth no more throughput, placed on a
 * larger mesh with --map the same figures; the timeline of a run passes the trace-event checker and
 * does not change the figures; measured op times change what they should; SimGrid's Paje output;
 * and the CLI's record/replay with their errors.  Each engine runs in a child process. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "fileio.h"
#include "graph.h"
#include "jsonio.h"
#include "optimes.h"
#include "plan.h"
#include "sim.h"
#include "testutil.h"
#include "timeline.h"
#include "trace.h"

/* Fails the child with a message. */
#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "\n%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
      return 1;                                                                  \
    }                                                                            \
  } while (0)
#define OK(call)                                                                      \
  do {                                                                                \
    mp_error e_;                                                                      \
    err_clear(&e_);                                                                   \
    if ((call) != MP_OK) {                                                            \
      fprintf(stderr, "\n%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, e_.msg); \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

/* A chip like the bundled 4x4 with the given NoC bandwidth and SRAM per core. */
static chip *chip4(double bandwidth, long sram, int w, int h) {
  char text[600];
  snprintf(text, sizeof text,
           "{\"format\": \"meshpipe-chip\", \"version\": 1, \"name\": \"t%dx%d\", \"mesh\": {\"width\": %d, "
           "\"height\": %d}, \"core\": {\"flops\": 1e12, \"sram_bytes\": %ld}, \"noc\": {\"bandwidth\": %g, "
           "\"latency\": 5e-9}, \"dram\": {\"bandwidth\": 2e11, \"ports\": [[0, 0]]}}",
           w, h, w, h, sram, bandwidth);
  cJSON *root = NULL;
  chip *c = NULL;
  mp_error err;
  if (jsonio_parse("chip.json", text, strlen(text), &root, &err) != MP_OK ||
      chip_from_json(root, "chip.json", &c, &err) != MP_OK)
    fprintf(stderr, "\nchip4: %s\n", err.msg);
  cJSON_Delete(root);
  return c;
}

static char *result_text(const sim_result *r) {
  cJSON *o = sim_result_to_json(r);
  char *s = o ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(o);
  return s;
}

typedef struct setup {
  double bandwidth;
  long sram;
  int dram; /* expect weights streamed */
} setup;

/* tiny_resnet on a 4x4 chip in three stages; record, write, read back, replay: the same figures. */
static int replay_equals_simulate(void *arg) {
  const setup *su = arg;
  graph *g = NULL;
  OK(graph_load(testutil_src("traces/tiny_resnet.json"), &g, &e_));
  chip *c = chip4(su->bandwidth, su->sram, 4, 4);
  CHECK(c);
  int arranged[16] = {0};
  arranged[3] = 2;  /* cores 0-3: layers 0-1 */
  arranged[4] = 1;  /* core 4: layer 2 */
  arranged[15] = 3; /* cores 5-15: layers 3-5 */
  plan *p = NULL;
  OK(plan_new(arranged, 16, g->n_ops, &p, &e_));
  sim *s = NULL;
  sim_options o;
  sim_options_init(&o);
  o.microbatches = 4;
  OK(sim_new(c, &o, &s, &e_));
  sim_result a, b;
  OK(sim_evaluate(s, g, p, &a, &e_));
  CHECK(su->dram == (a.dram_bytes > 0));
  trace *t = NULL, *u = NULL;
  OK(sim_record(s, g, p, 4, &t, &e_));
  CHECK(t->n_groups == 3 && t->microbatches == 4);
  char *text = NULL;
  size_t len = 0;
  OK(trace_to_string(t, &text, &len, &e_));
  CHECK(su->dram == (strstr(strstr(text, "\nactions "), " dram ") != NULL));
  OK(trace_parse("rec.trace", text, len, &u, &e_));
  OK(sim_replay(s, u, &b, &e_));
  char *x = result_text(&a), *y = result_text(&b);
  CHECK(x && y);
  if (strcmp(x, y) != 0) fprintf(stderr, "\nsimulate %s\nreplay   %s\n", x, y);
  CHECK(strcmp(x, y) == 0);
  CHECK(a.samples_per_s == b.samples_per_s && a.makespan_s == b.makespan_s);
  free(x);
  free(y);
  free(text);
  sim_result_clear(&a);
  sim_result_clear(&b);
  trace_free(t);
  trace_free(u);
  sim_free(s);
  plan_free(p);
  chip_free(c);
  graph_free(g);
  return 0;
}

static void a_replay_on_the_recorded_chip_should_give_the_simulate_figures(void) {
  setup fits = {6.4e10, 2097152, 0};
  CU_ASSERT_EQUAL(testutil_in_child(replay_equals_simulate, &fits), 0);
}

static void a_replay_should_stream_the_same_weights_from_dram(void) {
  setup spills = {6.4e10, 2048, 1};
  CU_ASSERT_EQUAL(testutil_in_child(replay_equals_simulate, &spills), 0);
}

/* Writes text to a file (for figures a child hands back). */
static int save(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return 0;
  int ok = fputs(text, f) >= 0;
  return fclose(f) == 0 && ok;
}

/* ResNet-50 on the bundled 8x8 chip in 8 even stages: simulate, record to resnet50.trace, and save
 * the simulate figures as JSON. */
static int record_resnet(void *arg) {
  (void)arg;
  graph *g = NULL;
  chip *c = NULL;
  OK(graph_load(testutil_src("traces/resnet50.json"), &g, &e_));
  OK(chip_load(testutil_src("platforms/mesh8x8.json"), &c, &e_));
  int layers[8], cores[8];
  for (int i = 0; i < 8; i++) {
    layers[i] = g->n_ops / 8 + (i < g->n_ops % 8);
    cores[i] = 8;
  }
  plan *p = NULL;
  OK(plan_from_stages(layers, cores, 8, &p, &e_));
  sim *s = NULL;
  sim_result r;
  trace *t = NULL;
  OK(sim_new(c, NULL, &s, &e_));
  OK(sim_evaluate(s, g, p, &r, &e_));
  OK(sim_record(s, g, p, 0, &t, &e_)); /* steady state, as simulated */
  OK(trace_write(t, testutil_temp_path("resnet50.trace"), &e_));
  char *x = result_text(&r);
  CHECK(x && save(testutil_temp_path("resnet50.simulate.json"), x));
  free(x);
  sim_result_clear(&r);
  trace_free(t);
  sim_free(s);
  plan_free(p);
  chip_free(c);
  graph_free(g);
  return 0;
}

/* Replays resnet50.trace on the chip file named by arg and saves the figures. */
static int replay_resnet(void *arg) {
  const char *chip_path = arg;
  chip *c = NULL;
  trace *t = NULL, *m = NULL;
  OK(chip_load(chip_path, &c, &e_));
  OK(trace_load(testutil_temp_path("resnet50.trace"), &t, &e_));
  OK(trace_map(t, c, NULL, &m, &e_));
  sim *s = NULL;
  sim_result r;
  OK(sim_new(c, NULL, &s, &e_));
  OK(sim_replay(s, m, &r, &e_));
  char *x = result_text(&r);
  CHECK(x && save(testutil_temp_path("resnet50.replay.json"), x));
  free(x);
  sim_result_clear(&r);
  sim_free(s);
  trace_free(m);
  trace_free(t);
  chip_free(c);
  return 0;
}

static double throughput_in(const char *file) {
  cJSON *root = NULL;
  mp_error err;
  if (jsonio_load(testutil_temp_path(file), &root, &err) != MP_OK) return -1;
  double v = cJSON_GetObjectItem(root, "samples_per_s")->valuedouble;
  cJSON_Delete(root);
  return v;
}

static void resnet50_should_replay_exactly_and_no_faster_on_half_the_bandwidth(void) {
  CU_ASSERT_EQUAL_FATAL(testutil_in_child(record_resnet, NULL), 0);
  /* The recorded chip: the simulate figures, byte for byte. */
  CU_ASSERT_EQUAL_FATAL(testutil_in_child(replay_resnet, (void *)testutil_src("platforms/mesh8x8.json")), 0);
  char *sim_json = NULL, *replay_json = NULL;
  size_t n;
  mp_error err;
  CU_ASSERT_EQUAL(fileio_read_all(testutil_temp_path("resnet50.simulate.json"), &sim_json, &n, &err), MP_OK);
  CU_ASSERT_EQUAL(fileio_read_all(testutil_temp_path("resnet50.replay.json"), &replay_json, &n, &err), MP_OK);
  CU_ASSERT(sim_json && replay_json && strcmp(sim_json, replay_json) == 0);
  free(sim_json);
  free(replay_json);
  double full = throughput_in("resnet50.replay.json");
  /* Half the NoC bandwidth. */
  const char *half = testutil_write_temp(
      "half.json",
      "{\"format\": \"meshpipe-chip\", \"version\": 1, \"name\": \"mesh8x8-half-noc\", \"mesh\": {\"width\": 8, "
      "\"height\": 8}, \"core\": {\"flops\": 1e12, \"sram_bytes\": 2097152}, \"noc\": {\"bandwidth\": 3.2e10, "
      "\"latency\": 5e-9}, \"dram\": {\"bandwidth\": 2e11, \"ports\": [[0, 3], [7, 4]]}}");
  CU_ASSERT_EQUAL_FATAL(testutil_in_child(replay_resnet, (void *)half), 0);
  double slow = throughput_in("resnet50.replay.json");
  CU_ASSERT(full > 0 && slow > 0);
  CU_ASSERT(slow <= full);
  CU_ASSERT(slow < full); /* this plan sends tensors between stages, so the NoC matters */
}

/* Records tiny_resnet on 4x4 into tiny.trace (for the map and CLI tests). */
static int record_tiny(void *arg) {
  (void)arg;
  graph *g = NULL;
  OK(graph_load(testutil_src("traces/tiny_resnet.json"), &g, &e_));
  chip *c = chip4(6.4e10, 2097152, 4, 4);
  CHECK(c);
  int layers[] = {2, 1, 3}, cores[] = {4, 1, 11};
  plan *p = NULL;
  OK(plan_from_stages(layers, cores, 3, &p, &e_));
  sim *s = NULL;
  trace *t = NULL;
  OK(sim_new(c, NULL, &s, &e_));
  OK(sim_record(s, g, p, 8, &t, &e_));
  OK(trace_write(t, testutil_temp_path("tiny.trace"), &e_));
  trace_free(t);
  sim_free(s);
  plan_free(p);
  chip_free(c);
  graph_free(g);
  return 0;
}

/* Replays tiny.trace on an 8x8 chip at snake offset 16 (rows 2-3), and checks the stages moved. */
static int replay_mapped(void *arg) {
  (void)arg;
  chip *c = chip4(6.4e10, 2097152, 8, 8);
  CHECK(c);
  trace *t = NULL, *m = NULL;
  OK(trace_load(testutil_temp_path("tiny.trace"), &t, &e_));
  mp_error err;
  CHECK(trace_map(t, c, NULL, &m, &err) == MP_INPUT); /* 16 recorded cores, 64 here */
  OK(trace_map(t, c, "snake:16", &m, &e_));
  sim *s = NULL;
  sim_result r;
  OK(sim_new(c, NULL, &s, &e_));
  OK(sim_replay(s, m, &r, &e_));
  CHECK(r.n_stages == 3 && r.n_cores == 64);
  CHECK(r.stages[0].first_core == 16 && r.stages[1].first_core == 20 && r.stages[2].first_core == 21);
  CHECK(r.samples_per_s > 0 && r.cores[0].sram_bytes == 0 && r.cores[16].sram_bytes > 0);
  /* A placement that breaks the groups' id ranges is refused before SimGrid sees it. */
  trace *x = NULL;
  OK(trace_map(t, c, "xy:1,1", &x, &e_));
  sim_result q;
  CHECK(sim_replay(s, x, &q, &err) == MP_INPUT);
  CHECK(strstr(err.msg, "not consecutive") != NULL);
  trace_free(x);
  sim_result_clear(&r);
  sim_free(s);
  trace_free(m);
  trace_free(t);
  chip_free(c);
  return 0;
}

static void a_trace_placed_on_a_larger_mesh_should_replay_there(void) {
  CU_ASSERT_EQUAL_FATAL(testutil_in_child(record_tiny, NULL), 0);
  CU_ASSERT_EQUAL(testutil_in_child(replay_mapped, NULL), 0);
}

/* A timeline of tiny_resnet passes the checker, holds every op execution, and the figures are the
 * ones sim_evaluate gives without it. */
static int timeline_run(void *arg) {
  (void)arg;
  graph *g = NULL;
  OK(graph_load(testutil_src("traces/tiny_resnet.json"), &g, &e_));
  chip *c = chip4(6.4e10, 2048, 4, 4);
  CHECK(c);
  int layers[] = {2, 1, 3}, cores[] = {4, 1, 11};
  plan *p = NULL;
  OK(plan_from_stages(layers, cores, 3, &p, &e_));
  sim *s = NULL;
  OK(sim_new(c, NULL, &s, &e_));
  timeline *tl = NULL;
  OK(timeline_new(c, "tiny", &tl, &e_));
  sim_result a, b;
  OK(sim_evaluate_timeline(s, g, p, 8, tl, &a, &e_));
  OK(sim_evaluate_m(s, g, p, 8, &b, &e_));
  char *x = result_text(&a), *y = result_text(&b);
  CHECK(x && y && strcmp(x, y) == 0);
  free(x);
  free(y);
  char *text = NULL;
  size_t len = 0, n = 0;
  OK(timeline_to_string(tl, &text, &len, &e_));
  OK(timeline_validate("tiny.json", text, len, &n, &e_));
  /* every op's segment on every core of its group, for each micro-batch */
  cJSON *root = cJSON_Parse(text);
  CHECK(root);
  int ops = 0, sends = 0, drams = 0, counters = 0, gathers = 0, series[16] = {0};
  const cJSON *ev;
  cJSON_ArrayForEach(ev, cJSON_GetObjectItem(root, "traceEvents")) {
    const char *ph = cJSON_GetObjectItem(ev, "ph")->valuestring;
    const cJSON *cat = cJSON_GetObjectItem(ev, "cat");
    if (strcmp(ph, "B") == 0 && strcmp(cat->valuestring, "op") == 0) ops++;
    if (strcmp(ph, "s") == 0) sends++;
    if (strcmp(ph, "B") == 0 && strncmp(cJSON_GetObjectItem(ev, "name")->valuestring, "DRAM read", 9) == 0) drams++;
    if (strcmp(ph, "B") == 0 && strcmp(cat->valuestring, "all-gather") == 0) gathers++;
    if (strcmp(ph, "C") == 0) {
      int k = -1;
      counters++;
      if (sscanf(cJSON_GetObjectItem(ev, "name")->valuestring, "SRAM core %d", &k) == 1 && k >= 0 && k < 16)
        series[k]++;
    }
  }
  cJSON_Delete(root);
  /* stage 0 (4 cores) and stage 1 (1 core) run one segment each, stage 2 (11 cores) at least one */
  CHECK(ops >= 8 * (4 + 1 + 11));
  CHECK(sends == 8 * (a.stages[0].n_sends + a.stages[1].n_sends));
  CHECK(a.dram_bytes > 0 && drams > 0);
  /* SRAM occupancy over time: every core's counter changes as micro-batches come and go */
  for (int k = 0; k < 16; k++) CHECK(series[k] > 8);
  CHECK(counters > 16 * 8);
  CHECK(gathers > 0); /* stage 0's 4 cores and stage 2's 11 all-gather their outputs, as slices of their own */
  free(text);
  timeline_free(tl);
  sim_result_clear(&a);
  sim_result_clear(&b);
  sim_free(s);
  plan_free(p);
  chip_free(c);
  graph_free(g);
  return 0;
}

static void a_timeline_should_be_valid_and_leave_the_figures_alone(void) {
  CU_ASSERT_EQUAL(testutil_in_child(timeline_run, NULL), 0);
}

/* conv1 measured at 1 ms: stage 0 (4 cores of 1 TFLOP/s) computes at least 4 x 1 ms / 4 per 4
 * micro-batches; op times for another graph are refused. */
static int op_times_run(void *arg) {
  (void)arg;
  graph *g = NULL, *other = NULL;
  OK(graph_load(testutil_src("traces/tiny_resnet.json"), &g, &e_));
  OK(graph_load(testutil_src("traces/resnet50.json"), &other, &e_));
  chip *c = chip4(6.4e10, 2097152, 4, 4);
  CHECK(c);
  optimes *ot = NULL;
  OK(optimes_parse("t.csv", "conv1,1e-3\n", 11, 1, g, &ot, &e_));
  int layers[] = {2, 1, 3}, cores[] = {4, 1, 11};
  plan *p = NULL, *q = NULL;
  OK(plan_from_stages(layers, cores, 3, &p, &e_));
  int ol[] = {other->n_ops}, oc[] = {16};
  OK(plan_from_stages(ol, oc, 1, &q, &e_));
  sim_options o;
  sim_options_init(&o);
  o.microbatches = 4;
  o.op_times = ot;
  sim *s = NULL;
  OK(sim_new(c, &o, &s, &e_));
  sim_result r;
  OK(sim_evaluate(s, g, p, &r, &e_));
  CHECK(r.op_times_overridden == 1);
  CHECK(r.stages[0].compute_s >= 1e-3 / 4); /* per micro-batch: conv1 measured at 1 ms, over 4 cores */
  CHECK(r.stages[1].compute_s < 1e-4);
  mp_error err;
  sim_result bad;
  CHECK(sim_evaluate(s, other, q, &bad, &err) == MP_INPUT);
  CHECK(strstr(err.msg, "t.csv") != NULL);
  sim_result_clear(&r);
  sim_free(s);
  optimes_free(ot);
  plan_free(p);
  plan_free(q);
  chip_free(c);
  graph_free(g);
  graph_free(other);
  return 0;
}

static void measured_op_times_should_replace_the_flop_model(void) {
  CU_ASSERT_EQUAL(testutil_in_child(op_times_run, NULL), 0);
}

/* SimGrid's own Paje trace, complete once the sim is freed. */
static int paje_run(void *arg) {
  const char *path = arg;
  graph *g = NULL;
  OK(graph_load(testutil_src("traces/tiny_resnet.json"), &g, &e_));
  chip *c = chip4(6.4e10, 2097152, 2, 2);
  CHECK(c);
  int layers[] = {3, 3}, cores[] = {2, 2};
  plan *p = NULL;
  OK(plan_from_stages(layers, cores, 2, &p, &e_));
  sim_options o;
  sim_options_init(&o);
  o.paje_file = path;
  sim *s = NULL;
  sim_result r;
  OK(sim_new(c, &o, &s, &e_));
  OK(sim_evaluate(s, g, p, &r, &e_));
  sim_result_clear(&r);
  sim_free(s);
  plan_free(p);
  chip_free(c);
  graph_free(g);
  return 0;
}

static void paje_tracing_should_pass_through_to_simgrid(void) {
  const char *path = testutil_temp_path("run.paje");
  CU_ASSERT_EQUAL_FATAL(testutil_in_child(paje_run, (void *)path), 0);
  char *text = NULL;
  size_t n = 0;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(fileio_read_all(path, &text, &n, &err), MP_OK);
  CU_ASSERT(strstr(text, "%EventDef") != NULL);
  CU_ASSERT(strstr(text, "c3") != NULL);
  free(text);
}

/* Runs meshpipe with args; on an unexpected exit status prints its stderr. */
static int cli(const char *args, char **out, char **errout, int want) {
  int rc = testutil_meshpipe(args, out, errout);
  if (rc != want) fprintf(stderr, "\nmeshpipe %s: exit %d\n%s\n", args, rc, *errout ? *errout : "");
  return rc;
}

/* The ResNet-50 timeline on the bundled 8x8 chip (optimal plan) passes the checker. */
static void the_resnet50_timeline_should_pass_the_checker(void) {
  char plan_path[1024], tl[1024]; /* testutil's path buffers rotate: keep copies */
  snprintf(plan_path, sizeof plan_path, "%s", testutil_temp_path("r50.plan.json"));
  snprintf(tl, sizeof tl, "%s", testutil_temp_path("r50.timeline.json"));
  char args[8192], *out = NULL, *errout = NULL;
  snprintf(args, sizeof args, "partition -g '%s' -c '%s' -o '%s'", testutil_src("traces/resnet50.json"),
           testutil_src("platforms/mesh8x8.json"), plan_path);
  CU_ASSERT_EQUAL_FATAL(cli(args, &out, &errout, 0), 0);
  free(out);
  free(errout);
  snprintf(args, sizeof args, "simulate -g '%s' -c '%s' -p '%s' --timeline '%s'", testutil_src("traces/resnet50.json"),
           testutil_src("platforms/mesh8x8.json"), plan_path, tl);
  CU_ASSERT_EQUAL_FATAL(cli(args, &out, &errout, 0), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "timeline "));
  free(out);
  free(errout);
  size_t n = 0;
  mp_error err;
  CU_ASSERT_EQUAL(timeline_validate_file(tl, &n, &err), MP_OK);
  CU_ASSERT(n > 1000);
}

/* meshpipe record / replay end to end: the replay's JSON figures are the simulate ones; bad traces,
 * a chip of another size and a bad --map are refused with exit status 2. */
static void record_and_replay_should_work_from_the_command_line(void) {
  char plan_path[1024], tr[1024], g[1024], c4[1024], c8[1024], bad[1024]; /* testutil's buffers rotate */
  snprintf(plan_path, sizeof plan_path, "%s", testutil_temp_path("tiny.plan.json"));
  snprintf(tr, sizeof tr, "%s", testutil_temp_path("cli.trace"));
  snprintf(g, sizeof g, "%s", testutil_src("traces/tiny_resnet.json"));
  snprintf(c4, sizeof c4, "%s", testutil_src("platforms/mesh4x4.json"));
  snprintf(c8, sizeof c8, "%s", testutil_src("platforms/mesh8x8.json"));
  char args[8192], *out = NULL, *errout = NULL, *sim_out = NULL;
  snprintf(args, sizeof args, "partition -g '%s' -c '%s' -o '%s'", g, c4, plan_path);
  CU_ASSERT_EQUAL_FATAL(cli(args, &out, &errout, 0), 0);
  free(out);
  free(errout);
  snprintf(args, sizeof args, "record -g '%s' -c '%s' -p '%s' -o '%s'", g, c4, plan_path, tr);
  CU_ASSERT_EQUAL_FATAL(cli(args, &out, &errout, 0), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "recorded "));
  free(out);
  free(errout);
  snprintf(args, sizeof args, "simulate -g '%s' -c '%s' -p '%s' --json", g, c4, plan_path);
  CU_ASSERT_EQUAL_FATAL(cli(args, &sim_out, &errout, 0), 0);
  free(errout);
  snprintf(args, sizeof args, "replay '%s' -c '%s' --json", tr, c4);
  CU_ASSERT_EQUAL_FATAL(cli(args, &out, &errout, 0), 0);
  cJSON *a = cJSON_Parse(sim_out), *b = cJSON_Parse(out);
  CU_ASSERT_FATAL(a && b);
  cJSON_DeleteItemFromObject(b, "trace");
  cJSON_DeleteItemFromObject(b, "map");
  char *x = cJSON_PrintUnformatted(a), *y = cJSON_PrintUnformatted(b);
  CU_ASSERT(x && y && strcmp(x, y) == 0);
  free(x);
  free(y);
  cJSON_Delete(a);
  cJSON_Delete(b);
  free(out);
  free(errout);
  free(sim_out);
  /* another core count without --map; a bad --map; an unknown action */
  snprintf(args, sizeof args, "replay '%s' -c '%s'", tr, c8);
  CU_ASSERT_EQUAL(cli(args, &out, &errout, 2), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "recorded on a 4x4 chip (16 cores), but mesh8x8 has 64 cores"));
  free(out);
  free(errout);
  snprintf(args, sizeof args, "replay '%s' -c '%s' --map diagonal", tr, c8);
  CU_ASSERT_EQUAL(cli(args, &out, &errout, 2), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "expected snake, snake:OFFSET, xy or xy:X,Y"));
  free(out);
  free(errout);
  snprintf(args, sizeof args, "replay '%s' -c '%s' --map snake:48 --json", tr, c8);
  CU_ASSERT_EQUAL(cli(args, &out, &errout, 0), 0);
  free(out);
  free(errout);
  char *text = NULL;
  size_t len = 0;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(fileio_read_all(tr, &text, &len, &err), MP_OK);
  char *at = strstr(text, " compute ");
  CU_ASSERT_PTR_NOT_NULL_FATAL(at);
  memcpy(at, " compote ", 9);
  snprintf(bad, sizeof bad, "%s", testutil_write_temp("bad.trace", text));
  free(text);
  snprintf(args, sizeof args, "replay '%s' -c '%s'", bad, c4);
  CU_ASSERT_EQUAL(cli(args, &out, &errout, 2), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "bad.trace: line "));
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "unknown action 'compote'"));
  free(out);
  free(errout);
  snprintf(args, sizeof args, "record -g '%s' -c '%s' -p '%s'", g, c4, plan_path);
  CU_ASSERT_EQUAL(cli(args, &out, &errout, 2), 2);
  free(out);
  free(errout);
}

/* simulate --op-times reports the overridden ops; a trace recorded with them replays to the same
 * throughput without the file (the measured work is in the trace). */
static void op_times_should_reach_the_report_and_the_trace(void) {
  char plan_path[1024], tr[1024], g[1024], c4[1024], times[1024]; /* testutil's buffers rotate */
  snprintf(plan_path, sizeof plan_path, "%s", testutil_temp_path("ot.plan.json"));
  snprintf(tr, sizeof tr, "%s", testutil_temp_path("ot.trace"));
  snprintf(g, sizeof g, "%s", testutil_src("traces/tiny_resnet.json"));
  snprintf(c4, sizeof c4, "%s", testutil_src("platforms/mesh4x4.json"));
  snprintf(times, sizeof times, "%s", testutil_write_temp("times.csv", "op,seconds\nblock.conv_a,2e-5\n"));
  char args[8192], *out = NULL, *errout = NULL;
  snprintf(args, sizeof args, "partition -g '%s' -c '%s' -o '%s'", g, c4, plan_path);
  CU_ASSERT_EQUAL_FATAL(cli(args, &out, &errout, 0), 0);
  free(out);
  free(errout);
  snprintf(args, sizeof args, "simulate -g '%s' -c '%s' -p '%s' --op-times '%s'", g, c4, plan_path, times);
  CU_ASSERT_EQUAL_FATAL(cli(args, &out, &errout, 0), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "op times     1 of 6 ops take the measured times of"));
  free(out);
  free(errout);
  snprintf(args, sizeof args, "simulate -g '%s' -c '%s' -p '%s' --op-times '%s' --json", g, c4, plan_path, times);
  CU_ASSERT_EQUAL_FATAL(cli(args, &out, &errout, 0), 0);
  cJSON *a = cJSON_Parse(out);
  free(out);
  free(errout);
  snprintf(args, sizeof args, "record -g '%s' -c '%s' -p '%s' --op-times '%s' -o '%s'", g, c4, plan_path, times, tr);
  CU_ASSERT_EQUAL_FATAL(cli(args, &out, &errout, 0), 0);
  free(out);
  free(errout);
  snprintf(args, sizeof args, "replay '%s' -c '%s' --json", tr, c4);
  CU_ASSERT_EQUAL_FATAL(cli(args, &out, &errout, 0), 0);
  cJSON *b = cJSON_Parse(out);
  CU_ASSERT_FATAL(a && b);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(a, "op_times_overridden")->valueint, 1);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(a, "samples_per_s")->valuedouble,
                  cJSON_GetObjectItem(b, "samples_per_s")->valuedouble);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(a, "makespan_s")->valuedouble, cJSON_GetObjectItem(b, "makespan_s")->valuedouble);
  cJSON_Delete(a);
  cJSON_Delete(b);
  free(out);
  free(errout);
  /* a bad times file is bad input, named with its line */
  snprintf(times, sizeof times, "%s", testutil_write_temp("bad.csv", "nope,1e-6\n"));
  snprintf(args, sizeof args, "simulate -g '%s' -c '%s' -p '%s' --op-times '%s'", g, c4, plan_path, times);
  CU_ASSERT_EQUAL(cli(args, &out, &errout, 2), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "bad.csv: line 1: no op 'nope' in graph 'tiny_resnet'"));
  free(out);
  free(errout);
}

static CU_TestInfo tests[] = {
    {"a_replay_on_the_recorded_chip_should_give_the_simulate_figures",
     a_replay_on_the_recorded_chip_should_give_the_simulate_figures},
    {"a_replay_should_stream_the_same_weights_from_dram", a_replay_should_stream_the_same_weights_from_dram},
    {"resnet50_should_replay_exactly_and_no_faster_on_half_the_bandwidth",
     resnet50_should_replay_exactly_and_no_faster_on_half_the_bandwidth},
    {"a_trace_placed_on_a_larger_mesh_should_replay_there", a_trace_placed_on_a_larger_mesh_should_replay_there},
    {"a_timeline_should_be_valid_and_leave_the_figures_alone", a_timeline_should_be_valid_and_leave_the_figures_alone},
    {"measured_op_times_should_replace_the_flop_model", measured_op_times_should_replace_the_flop_model},
    {"paje_tracing_should_pass_through_to_simgrid", paje_tracing_should_pass_through_to_simgrid},
    {"the_resnet50_timeline_should_pass_the_checker", the_resnet50_timeline_should_pass_the_checker},
    {"record_and_replay_should_work_from_the_command_line", record_and_replay_should_work_from_the_command_line},
    {"op_times_should_reach_the_report_and_the_trace", op_times_should_reach_the_report_and_the_trace},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) {
  testutil_temp_path("."); /* the children share the parent's temporary directory */
  return testutil_run("sim_trace", tests, argc, argv);
}
