/* Out of memory everywhere: every constructor, loader and writer of the library that does not start
 * SimGrid, run with its first, second, third ... allocation refused (tests/nomem.h) until it
 * succeeds.  Each refusal must give MP_NOMEM with a message, leave the output as it was (a NULL
 * pointer, no file), and free everything the call had allocated; the run that refuses nothing must
 * succeed and leave nothing behind either.  sim_new and sim_evaluate are in test_nomem_sim.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "chip.h"
#include "fileio.h"
#include "graph.h"
#include "jsonio.h"
#include "nomem.h"
#include "onnx.pb-c.h"
#include "onnx_import.h"
#include "plan.h"
#include "sim.h"
#include "split.h"
#include "sweep.h"
#include "sweep_pool.h"
#include "testutil.h"

/* ---- what the calls work on --------------------------------------------------------------------- */

#define GRAPH_FILE "traces/tiny_resnet.json"           /* six layers with a skip connection */
#define CHIP_FILE "platforms/mesh4x4.json"             /* 16 cores, two DRAM ports */
#define TRACE_FILE "traces/tiny_resnet.mesh4x4.trace" /* the graph's plan below, recorded on the chip */
static const int PLAN[16] = {1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 3};

typedef struct fixture {
  graph *g;
  chip *c;
  plan *p;
  cJSON *graph_doc, *chip_doc;
} fixture;

static void fixture_free(fixture *f) {
  plan_free(f->p);
  chip_free(f->c);
  graph_free(f->g);
  cJSON_Delete(f->graph_doc);
  cJSON_Delete(f->chip_doc);
  memset(f, 0, sizeof *f);
}

/* Loads the graph, chip and plan above (nothing armed); 0 and a message on failure. */
static int fixture_load(fixture *f) {
  memset(f, 0, sizeof *f);
  mp_error err;
  if (jsonio_load(testutil_src(GRAPH_FILE), &f->graph_doc, &err) != MP_OK ||
      jsonio_load(testutil_src(CHIP_FILE), &f->chip_doc, &err) != MP_OK ||
      graph_from_json(f->graph_doc, GRAPH_FILE, &f->g, &err) != MP_OK ||
      chip_from_json(f->chip_doc, CHIP_FILE, &f->c, &err) != MP_OK ||
      plan_new(PLAN, f->c->n_cores, f->g->n_ops, &f->p, &err) != MP_OK) {
    printf("\n    fixture: %s", err.msg);
    fixture_free(f);
    return 0;
  }
  return 1;
}

/* What a constructor's output starts as: a failed call must leave it so, or set it to NULL. */
static char poison_byte;
#define POISON ((void *)&poison_byte)
#define LEFT_ALONE(out) ((void *)(out) == NULL || (void *)(out) == POISON)

/* A writer's target: absent before every attempt; a failed write must leave it absent. */
static const char *fresh_target(const char *name) {
  const char *path = testutil_temp_path(name);
  unlink(path);
  return path;
}

/* Sweeps t over every allocation its call makes, first refusing each one and all after it, then each
 * one alone, and asserts the rules of nomem_sweep; a sweep that refuses nothing would prove nothing,
 * so it must refuse something.  At most may_absorb refusals may let the call succeed anyway: only a
 * memo, which can do without memory, may absorb one; every_allocation allows none. */
static void sweep_twice(nomem_target t, long may_absorb) {
  for (t.once = 0; t.once <= 1; t.once++) {
    nomem_result r;
    nomem_sweep(&t, &r);
    CU_ASSERT(r.attempts > 0);
    CU_ASSERT_EQUAL(r.violations, 0);
    CU_ASSERT(r.absorbed <= may_absorb);
  }
}

/* The sweeps of a call that succeeds (setup may be NULL) ... */
static void every_allocation(const char *name, mp_status (*setup)(void *, mp_error *),
                             mp_status (*call)(void *, int *, mp_error *), void *ctx) {
  sweep_twice((nomem_target){.name = name, .setup = setup, .call = call, .ctx = ctx, .expected = MP_NOMEM}, 0);
}

/* Calls that return an object or NULL (to_json, clone): NULL is their out-of-memory status. */
static mp_status null_is_nomem(const void *made, mp_error *err) { return made ? MP_OK : err_nomem(err); }

/* ---- model/: JSON files, graph, ONNX import, chip, plan, split, cost, op times ------------------- */

static mp_status jsonio_load_call(void *ctx, int *untouched, mp_error *err) {
  (void)ctx;
  cJSON *doc = POISON;
  mp_status st = jsonio_load(testutil_src(CHIP_FILE), &doc, err);
  *untouched = LEFT_ALONE(doc);
  if (st == MP_OK) cJSON_Delete(doc);
  return st;
}

static mp_status jsonio_save_call(void *ctx, int *untouched, mp_error *err) {
  const char *path = fresh_target("saved.json");
  mp_status st = jsonio_save(path, ((fixture *)ctx)->chip_doc, err);
  *untouched = !testutil_exists(path);
  return st;
}

static void jsonio_load_and_save_should_fail_cleanly_at_every_allocation(void) {
  fixture f;
  CU_ASSERT_FATAL(fixture_load(&f));
  every_allocation("jsonio_load", NULL, jsonio_load_call, NULL);
  every_allocation("jsonio_save", NULL, jsonio_save_call, &f);
  fixture_free(&f);
}


static mp_status graph_load_call(void *ctx, int *untouched, mp_error *err) {
  (void)ctx;
  graph *g = POISON;
  mp_status st = graph_load(testutil_src(GRAPH_FILE), &g, err);
  *untouched = LEFT_ALONE(g);
  if (st == MP_OK) graph_free(g);
  return st;
}

static mp_status graph_from_json_call(void *ctx, int *untouched, mp_error *err) {
  fixture *f = ctx;
  graph *g = POISON;
  mp_status st = graph_from_json(f->graph_doc, GRAPH_FILE, &g, err);
  *untouched = LEFT_ALONE(g);
  if (st == MP_OK) graph_free(g);
  return st;
}

static mp_status graph_write_call(void *ctx, int *untouched, mp_error *err) {
  fixture *f = ctx;
  const char *path = fresh_target("graph.json");
  mp_status st = graph_write(f->g, path, err);
  *untouched = !testutil_exists(path);
  return st;
}

static mp_status graph_to_json_call(void *ctx, int *untouched, mp_error *err) {
  cJSON *doc = graph_to_json(((fixture *)ctx)->g);
  *untouched = 1;
  cJSON_Delete(doc);
  return null_is_nomem(doc, err);
}

static void graph_load_should_fail_cleanly_at_every_allocation(void) {
  fixture f;
  CU_ASSERT_FATAL(fixture_load(&f));
  every_allocation("graph_load", NULL, graph_load_call, &f);
  every_allocation("graph_from_json", NULL, graph_from_json_call, &f);
  fixture_free(&f);
}

static void graph_to_json_should_fail_cleanly_at_every_allocation(void) {
  fixture f;
  CU_ASSERT_FATAL(fixture_load(&f));
  every_allocation("graph_to_json", NULL, graph_to_json_call, &f);
  every_allocation("graph_write", NULL, graph_write_call, &f);
  fixture_free(&f);
}

static mp_status onnx_import_call(void *ctx, int *untouched, mp_error *err) {
  (void)ctx;
  graph *g = POISON;
  onnx_report rep;
  mp_status st = onnx_import(testutil_model("alexnet.onnx"), NULL, &g, &rep, err);
  *untouched = LEFT_ALONE(g) && (st == MP_OK || (rep.n_unknown == 0 && rep.unknown == NULL));
  if (st == MP_OK) {
    graph_free(g);
    onnx_report_free(&rep);
  }
  return st;
}

/* Unfused, so the per-node layers and their names take other paths than fusion's. */
static mp_status onnx_import_json_call(void *ctx, int *untouched, mp_error *err) {
  (void)ctx;
  cJSON *doc = POISON;
  onnx_options o = {"fp32", 2, 1};
  mp_status st = onnx_import_json(testutil_model("alexnet.onnx"), &o, &doc, NULL, err);
  *untouched = LEFT_ALONE(doc);
  if (st == MP_OK) cJSON_Delete(doc);
  return st;
}

/* A model with two nodes of a type the cost table does not know, which the report lists:
 * X [1,16] -> FancyOp f1 -> a [1,16] -> FancyOp f2 -> c [1,8] -> Relu -> y.  Returns its path. */
static const char *write_unknown_op_model(void) {
  Onnx__TensorShapeProto__Dimension dim[3] = {ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT,
                                              ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT,
                                              ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT};
  const int64_t size[3] = {1, 16, 8};
  for (int i = 0; i < 3; i++) {
    dim[i].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    dim[i].dim_value = size[i];
  }
  Onnx__TensorShapeProto__Dimension *dims16[2] = {&dim[0], &dim[1]}, *dims8[2] = {&dim[0], &dim[2]};
  Onnx__TensorShapeProto shape[2] = {ONNX__TENSOR_SHAPE_PROTO__INIT, ONNX__TENSOR_SHAPE_PROTO__INIT};
  Onnx__TypeProto__Tensor tensor[2] = {ONNX__TYPE_PROTO__TENSOR__INIT, ONNX__TYPE_PROTO__TENSOR__INIT};
  Onnx__TypeProto type[2] = {ONNX__TYPE_PROTO__INIT, ONNX__TYPE_PROTO__INIT};
  for (int i = 0; i < 2; i++) {
    shape[i].n_dim = 2;
    shape[i].dim = i == 0 ? dims16 : dims8;
    tensor[i].has_elem_type = 1;
    tensor[i].elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    tensor[i].shape = &shape[i];
    type[i].value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    type[i].tensor_type = &tensor[i];
  }
  Onnx__ValueInfoProto value[3] = {ONNX__VALUE_INFO_PROTO__INIT, ONNX__VALUE_INFO_PROTO__INIT,
                                   ONNX__VALUE_INFO_PROTO__INIT};
  char *value_name[3] = {"X", "a", "c"};
  for (int i = 0; i < 3; i++) {
    value[i].name = value_name[i];
    value[i].type = &type[i == 2];
  }
  char *type_of[3] = {"FancyOp", "FancyOp", "Relu"}, *name_of[3] = {"f1", "f2", "relu"};
  char *edge[4] = {"X", "a", "c", "y"};
  Onnx__NodeProto node[3] = {ONNX__NODE_PROTO__INIT, ONNX__NODE_PROTO__INIT, ONNX__NODE_PROTO__INIT};
  Onnx__NodeProto *nodes[3];
  for (int i = 0; i < 3; i++) {
    node[i].op_type = type_of[i];
    node[i].name = name_of[i];
    node[i].n_input = node[i].n_output = 1;
    node[i].input = &edge[i];
    node[i].output = &edge[i + 1];
    nodes[i] = &node[i];
  }
  Onnx__ValueInfoProto *inputs[1] = {&value[0]}, *infos[2] = {&value[1], &value[2]};
  Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
  g.name = "hand";
  g.n_node = 3;
  g.node = nodes;
  g.n_input = 1;
  g.input = inputs;
  g.n_value_info = 2;
  g.value_info = infos;
  Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT, *opsets[1] = {&opset};
  opset.domain = "";
  opset.has_version = 1;
  opset.version = 13;
  Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
  m.has_ir_version = 1;
  m.ir_version = 8;
  m.n_opset_import = 1;
  m.opset_import = opsets;
  m.graph = &g;
  uint8_t buf[1024];
  size_t len = onnx__model_proto__get_packed_size(&m);
  const char *path = testutil_temp_path("unknown_ops.onnx");
  mp_error err;
  if (len > sizeof buf || onnx__model_proto__pack(&m, buf) != len || fileio_write_atomic(path, buf, len, &err) != MP_OK)
    return NULL;
  return path;
}

static mp_status onnx_unknown_call(void *ctx, int *untouched, mp_error *err) {
  graph *g = POISON;
  onnx_report rep;
  mp_status st = onnx_import(ctx, NULL, &g, &rep, err);
  *untouched = LEFT_ALONE(g) && (st == MP_OK || (rep.n_unknown == 0 && rep.unknown == NULL));
  if (st != MP_OK) return st;
  char line[256];
  if (rep.n_unknown != 1 || !onnx_report_warning(&rep, line, sizeof line))
    st = err_set(err, MP_RUN, "the report has %d unknown types", rep.n_unknown);
  graph_free(g);
  onnx_report_free(&rep);
  return st;
}

static void onnx_import_should_fail_cleanly_at_every_allocation(void) {
  every_allocation("onnx_import", NULL, onnx_import_call, NULL);
  every_allocation("onnx_import_json", NULL, onnx_import_json_call, NULL);
  const char *unknown = write_unknown_op_model();
  CU_ASSERT_PTR_NOT_NULL_FATAL(unknown);
  every_allocation("onnx_import (unknown operators)", NULL, onnx_unknown_call, (void *)unknown);
}

static mp_status plan_new_call(void *ctx, int *untouched, mp_error *err) {
  fixture *f = ctx;
  plan *p = POISON;
  mp_status st = plan_new(PLAN, f->c->n_cores, f->g->n_ops, &p, err);
  *untouched = LEFT_ALONE(p);
  if (st == MP_OK) plan_free(p);
  return st;
}

static mp_status plan_from_stages_call(void *ctx, int *untouched, mp_error *err) {
  (void)ctx;
  plan *p = POISON;
  mp_status st = plan_from_stages((const int[]){1, 1, 1, 3}, (const int[]){1, 7, 7, 1}, 4, &p, err);
  *untouched = LEFT_ALONE(p);
  if (st == MP_OK) plan_free(p);
  return st;
}

static mp_status plan_write_call(void *ctx, int *untouched, mp_error *err) {
  fixture *f = ctx;
  const char *path = fresh_target("plan.json");
  mp_status st = plan_write(f->p, f->g, f->c, path, err);
  *untouched = !testutil_exists(path);
  return st;
}

/* Reads the file plan_write_call's successful run left. */
static mp_status plan_load_call(void *ctx, int *untouched, mp_error *err) {
  fixture *f = ctx;
  plan *p = POISON;
  mp_status st = plan_load(testutil_temp_path("saved_plan.json"), f->g, f->c, &p, err);
  *untouched = LEFT_ALONE(p);
  if (st == MP_OK) plan_free(p);
  return st;
}

static void plan_constructors_should_fail_cleanly_at_every_allocation(void) {
  fixture f;
  CU_ASSERT_FATAL(fixture_load(&f));
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(plan_write(f.p, f.g, f.c, testutil_temp_path("saved_plan.json"), &err), MP_OK);
  every_allocation("plan_new", NULL, plan_new_call, &f);
  every_allocation("plan_from_stages", NULL, plan_from_stages_call, &f);
  every_allocation("plan_write", NULL, plan_write_call, &f);
  every_allocation("plan_load", NULL, plan_load_call, &f);
  fixture_free(&f);
}

static mp_status split_new_call(void *ctx, int *untouched, mp_error *err) {
  fixture *f = ctx;
  split *s = POISON;
  mp_status st = split_new(f->g, f->p, &s, err);
  *untouched = LEFT_ALONE(s);
  if (st == MP_OK) split_free(s);
  return st;
}

static void split_new_should_fail_cleanly_at_every_allocation(void) {
  fixture f;
  CU_ASSERT_FATAL(fixture_load(&f));
  every_allocation("split_new", NULL, split_new_call, &f);
  fixture_free(&f);
}

static mp_status split_to_json_call(void *ctx, int *untouched, mp_error *err) {
  fixture *f = ctx;
  split *s = NULL;
  *untouched = 1;
  mp_status st = split_new(f->g, f->p, &s, err);
  if (st != MP_OK) return st;
  cJSON *doc = split_to_json(s, f->g, f->p, f->c);
  split_free(s);
  cJSON_Delete(doc);
  return null_is_nomem(doc, err);
}

static void split_to_json_should_fail_cleanly_at_every_allocation(void) {
  fixture f;
  CU_ASSERT_FATAL(fixture_load(&f));
  every_allocation("split_new + split_to_json", NULL, split_to_json_call, &f);
  fixture_free(&f);
}

/* ---- sim/ without the engine: traces and timelines -------------------------------------------- */

/* A simulation's result made by hand (the simulator itself is test_nomem_sim.c's): two stages, four
 * cores, one link. */
static mp_status sim_result_to_json_call(void *ctx, int *untouched, mp_error *err) {
  (void)ctx;
  sim_stage_result stages[2] = {{.first_layer = 0, .n_layers = 2, .first_core = 0, .n_cores = 1, .compute_s = 1},
                                {.first_layer = 2, .n_layers = 4, .first_core = 1, .n_cores = 3, .compute_s = 2}};
  sim_core_result cores[4] = {{1, 2, 1}, {1, 2, 1}, {1, 2, 1}, {3, 2, 0}};
  sim_link_result links[1] = {{"x0y0>x1y0", 4096, 0.5}};
  sim_result r = {.microbatches = 8, .throughput_per_s = 10, .period_s = 0.1, .makespan_s = 1, .latency_s = 0.3,
                  .op_times_overridden = 1, .n_stages = 2, .stages = stages, .n_cores = 4, .cores = cores,
                  .n_links = 1, .links = links};
  cJSON *doc = sim_result_to_json(&r);
  *untouched = 1;
  cJSON_Delete(doc);
  return null_is_nomem(doc, err);
}

static void sim_result_to_json_should_fail_cleanly_at_every_allocation(void) {
  every_allocation("sim_result_to_json", NULL, sim_result_to_json_call, NULL);
}

/* ---- harness/: sweeps and the bench suite, without simulating ---------------------------------- */

static mp_status sweep_axis_call(void *ctx, int *untouched, mp_error *err) {
  (void)ctx;
  sweep_axis a;
  memset(&a, 0xff, sizeof a);
  mp_status st = sweep_axis_parse("noc.bandwidth=1e10,3.2e10,64G", &a, err);
  *untouched = st == MP_OK || (a.key == NULL && a.values == NULL && a.n_values == 0);
  if (st == MP_OK) sweep_axis_clear(&a);
  return st;
}

static mp_status sweep_chip_variant_call(void *ctx, int *untouched, mp_error *err) {
  fixture *f = ctx;
  /* a new member, members changed in place, a string member that grows */
  const char *keys[] = {"mesh", "noc.bandwidth", "core.sram_bytes", "core.transfer_factor", "name"};
  const char *values[] = {"3x5", "1e10", "2Mi", "1.5", "a_variant_with_a_longer_name"};
  chip *c = POISON;
  mp_status st = sweep_chip_variant(f->chip_doc, CHIP_FILE, keys, values, 5, &c, err);
  *untouched = LEFT_ALONE(c);
  if (st == MP_OK) chip_free(c);
  return st;
}

/* sweep_new takes its graphs, also when it fails: the call loads one for it. */
static mp_status sweep_new_call(void *ctx, int *untouched, mp_error *err) {
  fixture *f = ctx;
  *untouched = 1;
  graph *g = NULL;
  mp_status st = graph_from_json(f->graph_doc, GRAPH_FILE, &g, err);
  if (st != MP_OK) return st;
  sweep_axis axes[2];
  int n_axes = 0;
  const char *vary[] = {"mesh=2x2,3x3", "noc.bandwidth=1e10,2e10"};
  for (; n_axes < 2 && st == MP_OK; n_axes++) st = sweep_axis_parse(vary[n_axes], &axes[n_axes], err);
  if (st != MP_OK) n_axes--;
  const char *methods[] = {"even", "balanced"};
  sweep *s = POISON;
  if (st == MP_OK) {
    st = sweep_new(f->chip_doc, CHIP_FILE, axes, n_axes, &g, 1, methods, 2, NULL, NULL, &s, err);
    *untouched = LEFT_ALONE(s);
    if (st == MP_OK) sweep_free(s);
  } else {
    graph_free(g);
  }
  for (int i = 0; i < n_axes; i++) sweep_axis_clear(&axes[i]);
  return st;
}

/* The worker inherits the armed wrappers and disarms them: the parent's side is under test. */
static mp_status pool_job(void *ctx, int item, char *line, size_t cap, mp_error *err) {
  (void)ctx;
  (void)err;
  nomem_disarm();
  snprintf(line, cap, "item %d\n", item);
  return MP_OK;
}

/* What the pool handed back: lines, and failures, which (the workers having disarmed) can only be this
 * process's lack of memory while it read a worker's answer. */
typedef struct pool_count {
  int lines, nomem, other;
} pool_count;

static mp_status pool_done(void *ctx, int item, const char *line, const mp_error *failure, mp_error *err) {
  pool_count *pc = ctx;
  char want[32];
  snprintf(want, sizeof want, "item %d\n", item);
  (void)err;
  if (line && strcmp(line, want) == 0)
    pc->lines++;
  else if (!line && failure->status == MP_NOMEM && failure->msg[0])
    pc->nomem++;
  else
    pc->other++;
  return MP_OK;
}

/* Every item comes back once, with its line or, when memory ran out here, as a failure of its own. */
static mp_status sweep_pool_call(void *ctx, int *untouched, mp_error *err) {
  (void)ctx;
  int items[] = {0, 1, 2};
  pool_count pc = {0, 0, 0};
  *untouched = 1;
  mp_status st = sweep_pool_run(items, 3, 2, pool_job, pool_done, NULL, 0, &pc, err);
  if (st != MP_OK) return st;
  if (pc.lines + pc.nomem != 3 || pc.other)
    return err_set(err, MP_RUN, "sweep_pool_run handed back %d lines, %d out-of-memory failures and %d others",
                   pc.lines, pc.nomem, pc.other);
  return pc.nomem ? err_nomem(err) : MP_OK;
}

static mp_status sweep_csv_open_call(void *ctx, int *untouched, mp_error *err) {
  sweep *s = ctx;
  unsigned char done[64];
  int fd = -1, n_done = 0;
  *untouched = 1;
  mp_status st = sweep_csv_open(s, testutil_temp_path("resumed.csv"), &fd, done, &n_done, err);
  if (fd >= 0) close(fd);
  return st;
}

static void sweep_constructors_should_fail_cleanly_at_every_allocation(void) {
  fixture f;
  CU_ASSERT_FATAL(fixture_load(&f));
  every_allocation("sweep_axis_parse", NULL, sweep_axis_call, NULL);
  every_allocation("sweep_chip_variant", NULL, sweep_chip_variant_call, &f);
  every_allocation("sweep_new", NULL, sweep_new_call, &f);
  every_allocation("sweep_pool_run", NULL, sweep_pool_call, NULL);
  /* a results file to resume: the header and one row */
  graph *g = NULL;
  sweep *s = NULL;
  mp_error err;
  const char *methods[] = {"even"};
  CU_ASSERT_EQUAL_FATAL(graph_from_json(f.graph_doc, GRAPH_FILE, &g, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(sweep_new(f.chip_doc, CHIP_FILE, NULL, 0, &g, 1, methods, 1, NULL, NULL, &s, &err), MP_OK);
  char header[SWEEP_LINE_MAX], row[SWEEP_LINE_MAX];
  sweep_row r = {.feasible = 1, .n_stages = 1, .model_period_s = 1, .throughput_per_s = 1, .cores = 16};
  CU_ASSERT(sweep_csv_header(s, header, sizeof header) > 0);
  CU_ASSERT(sweep_csv_row(s, 0, &r, row, sizeof row) > 0);
  strcat(header, row);
  testutil_write_temp("resumed.csv", header);
  every_allocation("sweep_csv_open", NULL, sweep_csv_open_call, s);
  sweep_free(s);
  fixture_free(&f);
}

/* ---- the injection itself ---------------------------------------------------------------------- */

/* The wrappers see the library's allocations and cJSON's, refuse exactly from the armed one on (or
 * that one alone), as malloc fails (NULL, errno ENOMEM), and the live set follows frees and reallocs. */
static void the_wrappers_should_count_refuse_and_track_every_allocation(void) {
  uint64_t mark = nomem_mark();
  char *a = malloc(8), *b = strdup("x");
  cJSON *j = cJSON_CreateObject();
  CU_ASSERT_EQUAL(nomem_live_since(mark), 3);
  a = realloc(a, 4096);
  CU_ASSERT_EQUAL(nomem_live_since(mark), 3);
  free(b);
  cJSON_Delete(j);
  CU_ASSERT_EQUAL(nomem_live_since(mark), 1);
  nomem_arm(1);
  errno = 0;
  char *c = malloc(1), *d = calloc(1, 1), *e = strdup("y");
  cJSON *k = cJSON_CreateArray();
  long refused = nomem_disarm();
  CU_ASSERT_EQUAL(errno, ENOMEM);
  CU_ASSERT_PTR_NOT_NULL(c);
  CU_ASSERT_PTR_NULL(d);
  CU_ASSERT_PTR_NULL(e);
  CU_ASSERT_PTR_NULL(k);
  CU_ASSERT_EQUAL(refused, 3);
  nomem_arm_once(1);
  char *f = malloc(1), *g = realloc(c, 64), *h = malloc(1);
  CU_ASSERT_EQUAL(nomem_disarm(), 1);
  CU_ASSERT_PTR_NOT_NULL(f);
  CU_ASSERT_PTR_NULL(g); /* c stays, and stays live */
  CU_ASSERT_PTR_NOT_NULL(h);
  CU_ASSERT_EQUAL(nomem_live_since(mark), 4);
  free(h);
  free(f);
  if (g)
    free(g);
  else
    free(c);
  free(a);
  CU_ASSERT_EQUAL(nomem_live_since(mark), 0);
}

int main(int argc, char **argv) {
  nomem_init();
  CU_TestInfo tests[] = {
      {"the_wrappers_should_count_refuse_and_track_every_allocation",
       the_wrappers_should_count_refuse_and_track_every_allocation},
      {"jsonio_load_and_save_should_fail_cleanly_at_every_allocation",
       jsonio_load_and_save_should_fail_cleanly_at_every_allocation},
      {"graph_load_should_fail_cleanly_at_every_allocation", graph_load_should_fail_cleanly_at_every_allocation},
      {"graph_to_json_should_fail_cleanly_at_every_allocation", graph_to_json_should_fail_cleanly_at_every_allocation},
      {"onnx_import_should_fail_cleanly_at_every_allocation", onnx_import_should_fail_cleanly_at_every_allocation},
      {"plan_constructors_should_fail_cleanly_at_every_allocation",
       plan_constructors_should_fail_cleanly_at_every_allocation},
      {"split_new_should_fail_cleanly_at_every_allocation", split_new_should_fail_cleanly_at_every_allocation},
      {"split_to_json_should_fail_cleanly_at_every_allocation", split_to_json_should_fail_cleanly_at_every_allocation},
      {"sim_result_to_json_should_fail_cleanly_at_every_allocation",
       sim_result_to_json_should_fail_cleanly_at_every_allocation},
      {"sweep_constructors_should_fail_cleanly_at_every_allocation",
       sweep_constructors_should_fail_cleanly_at_every_allocation},
      CU_TEST_INFO_NULL,
  };
  int rc = testutil_run("nomem", tests, argc, argv);
  printf("%ld code addresses received a refused allocation\n", nomem_save_sites());
  return rc;
}
