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

#include "bench.h"
#include "chip.h"
#include "cost.h"
#include "fileio.h"
#include "graph.h"
#include "jsonio.h"
#include "method.h"
#include "nomem.h"
#include "onnx.pb-c.h"
#include "onnx_import.h"
#include "optimes.h"
#include "plan.h"
#include "proc.h"
#include "rl_ckpt.h"
#include "rl_env.h"
#include "rl_method.h"
#include "rl_policy.h"
#include "rl_reward.h"
#include "rl_search.h"
#include "rl_train.h"
#include "sim.h"
#include "split.h"
#include "strbuf.h"
#include "sweep.h"
#include "sweep_pool.h"
#include "testutil.h"
#include "timeline.h"
#include "trace.h"

/* ---- what the calls work on --------------------------------------------------------------------- */

#define GRAPH_FILE "traces/tiny_resnet.json"           /* six layers with a skip connection */
#define CHIP_FILE "platforms/mesh4x4.json"             /* 16 cores, two DRAM ports */
#define TRACE_FILE "traces/tiny_resnet.mesh4x4.trace" /* the graph's plan below, recorded on the chip */
static const int PLAN[16] = {0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 2, 1};

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

/* ... and of one that fails on a bad input with status final (its message takes memory too). */
static void every_allocation_of_a_bad_input(const char *name, mp_status (*call)(void *, int *, mp_error *),
                                            void *ctx, mp_status final) {
  sweep_twice((nomem_target){.name = name, .call = call, .ctx = ctx, .expected = MP_NOMEM, .final = final}, 0);
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

/* A graph whose two ops read each other's outputs: the message names the cycle, which takes memory. */
static mp_status graph_cycle_call(void *ctx, int *untouched, mp_error *err) {
  (void)ctx;
  graph *g = POISON;
  mp_status st = graph_load(testutil_temp_path("cycle.json"), &g, err);
  *untouched = LEFT_ALONE(g);
  if (st == MP_OK) graph_free(g);
  return st;
}

static void graph_load_should_fail_cleanly_at_every_allocation_of_a_cyclic_graph(void) {
  testutil_write_temp("cycle.json",
                      "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"loop\","
                      "\"inputs\":[{\"name\":\"in\",\"bytes\":4}],\"ops\":["
                      "{\"name\":\"a\",\"type\":\"X\",\"inputs\":[\"in\",\"y\"],\"outputs\":[{\"name\":\"x\",\"bytes\":4}],"
                      "\"macs\":0,\"flops\":1,\"weight_bytes\":0},"
                      "{\"name\":\"b\",\"type\":\"X\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"y\",\"bytes\":4}],"
                      "\"macs\":0,\"flops\":1,\"weight_bytes\":0}]}");
  every_allocation_of_a_bad_input("graph_load (a cycle)", graph_cycle_call, NULL, MP_INPUT);
}

/* Whole files past the first 64 kB buffer. */
static mp_status fileio_read_all_call(void *ctx, int *untouched, mp_error *err) {
  char *text = POISON;
  size_t len = 0;
  mp_status st = fileio_read_all(ctx, &text, &len, err);
  *untouched = LEFT_ALONE(text);
  if (st == MP_OK) free(text);
  if (st == MP_OK && len != 200000) st = err_set(err, MP_RUN, "read %zu bytes", len);
  return st;
}

static void fileio_read_all_should_fail_cleanly_at_every_allocation(void) {
  static char big[200001];
  memset(big, 'x', sizeof big - 1);
  every_allocation("fileio_read_all (200 kB)", NULL, fileio_read_all_call,
                   (void *)testutil_write_temp("big.txt", big));
}

/* The totals do without memory: all but the peak, which needs a scratch array. */
static void graph_totals_should_keep_every_total_but_the_peak_without_memory(void) {
  fixture f;
  CU_ASSERT_FATAL(fixture_load(&f));
  graph_totals full, poor;
  graph_get_totals(f.g, &full);
  uint64_t mark = nomem_mark();
  nomem_arm(0);
  graph_get_totals(f.g, &poor);
  CU_ASSERT_EQUAL(nomem_disarm(), 1);
  CU_ASSERT_EQUAL(nomem_live_since(mark), 0);
  CU_ASSERT_EQUAL(poor.flops, full.flops);
  CU_ASSERT_EQUAL(poor.weight_bytes, full.weight_bytes);
  CU_ASSERT_EQUAL(poor.tensors, full.tensors);
  CU_ASSERT(full.peak_activation_bytes > 0);
  CU_ASSERT_EQUAL(poor.peak_activation_bytes, 0);
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

/* A chip whose cores differ (overrides) for the paths heterogeneous chips take. */
static const char *HETERO_CHIP =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"hetero\",\"mesh\":{\"width\":3,\"height\":2},"
    "\"core\":{\"flops\":1e12,\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":3.2e10,\"latency\":4e-9},"
    "\"dram\":{\"bandwidth\":1e11,\"ports\":[[0,0]]},"
    "\"overrides\":[{\"core\":2,\"flops\":2e12,\"sram_bytes\":65536,\"transfer_factor\":3}]}";

static mp_status chip_load_call(void *ctx, int *untouched, mp_error *err) {
  (void)ctx;
  chip *c = POISON;
  mp_status st = chip_load(testutil_src(CHIP_FILE), &c, err);
  *untouched = LEFT_ALONE(c);
  if (st == MP_OK) chip_free(c);
  return st;
}

static mp_status chip_from_json_call(void *ctx, int *untouched, mp_error *err) {
  chip *c = POISON;
  mp_status st = chip_from_json(ctx, "hetero.json", &c, err);
  *untouched = LEFT_ALONE(c);
  if (st == MP_OK) chip_free(c);
  return st;
}

static mp_status chip_to_json_call(void *ctx, int *untouched, mp_error *err) {
  cJSON *doc = chip_to_json(((fixture *)ctx)->c);
  *untouched = 1;
  cJSON_Delete(doc);
  return null_is_nomem(doc, err);
}

static void chip_load_should_fail_cleanly_at_every_allocation(void) {
  fixture f;
  CU_ASSERT_FATAL(fixture_load(&f));
  cJSON *hetero = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(jsonio_parse("hetero.json", HETERO_CHIP, strlen(HETERO_CHIP), &hetero, &err), MP_OK);
  every_allocation("chip_load", NULL, chip_load_call, NULL);
  every_allocation("chip_from_json (cores that differ)", NULL, chip_from_json_call, hetero);
  every_allocation("chip_to_json", NULL, chip_to_json_call, &f);
  cJSON_Delete(hetero);
  fixture_free(&f);
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
  cJSON *doc = split_to_json(s, f->g, f->p, f->c, 1);
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

static mp_status cost_model_new_call(void *ctx, int *untouched, mp_error *err) {
  fixture *f = ctx;
  cost_model *m = POISON;
  mp_status st = cost_model_new(f->g, f->c, &m, err);
  *untouched = LEFT_ALONE(m);
  if (st == MP_OK) cost_model_free(m);
  return st;
}

static mp_status cost_evaluate_call(void *ctx, int *untouched, mp_error *err) {
  fixture *f = ctx;
  cost_result *r = POISON;
  mp_status st = cost_evaluate(f->g, f->c, f->p, &r, err);
  *untouched = LEFT_ALONE(r);
  if (st != MP_OK) return st;
  *untouched = 1;
  cJSON *doc = cost_result_to_json(r, f->c);
  cost_result_free(r);
  cJSON_Delete(doc);
  return null_is_nomem(doc, err);
}

static mp_status cost_bound_to_json_call(void *ctx, int *untouched, mp_error *err) {
  cJSON *doc = cost_bound_to_json(ctx);
  *untouched = 1;
  cJSON_Delete(doc);
  return null_is_nomem(doc, err);
}

static void cost_model_should_fail_cleanly_at_every_allocation(void) {
  fixture f;
  CU_ASSERT_FATAL(fixture_load(&f));
  cost_bound b;
  cost_lower_bound(f.g, f.c, &b);
  every_allocation("cost_model_new", NULL, cost_model_new_call, &f);
  every_allocation("cost_evaluate + cost_result_to_json", NULL, cost_evaluate_call, &f);
  every_allocation("cost_bound_to_json", NULL, cost_bound_to_json_call, &b);
  fixture_free(&f);
}

/* The same on the chip with energy figures: the result's JSON then carries the energy summary. */
static void cost_result_with_energy_should_fail_cleanly_at_every_allocation(void) {
  fixture f;
  CU_ASSERT_FATAL(fixture_load(&f));
  cJSON *e = cJSON_AddObjectToObject(f.chip_doc, "energy");
  CU_ASSERT_FATAL(e && cJSON_AddNumberToObject(e, "mac_pj", 0.4) &&
                  cJSON_AddNumberToObject(e, "static_w_per_core", 0.05));
  chip *c = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(chip_from_json(f.chip_doc, CHIP_FILE, &c, &err), MP_OK);
  CU_ASSERT_FATAL(c->has_energy);
  chip_free(f.c);
  f.c = c;
  every_allocation("cost_evaluate + cost_result_to_json with energy", NULL, cost_evaluate_call, &f);
  fixture_free(&f);
}

/* The lower bound does without memory: the flops bound is the same, the per-layer bound the weaker
 * one of every core's speed without the all-gather (it needs a sorted array of the core speeds). */
static void cost_lower_bound_should_fall_back_to_a_weaker_bound_without_memory(void) {
  fixture f;
  CU_ASSERT_FATAL(fixture_load(&f));
  cost_bound full, poor;
  cost_lower_bound(f.g, f.c, &full);
  uint64_t mark = nomem_mark();
  nomem_arm(0);
  cost_lower_bound(f.g, f.c, &poor);
  CU_ASSERT_EQUAL(nomem_disarm(), 1);
  CU_ASSERT_EQUAL(nomem_live_since(mark), 0);
  CU_ASSERT_DOUBLE_EQUAL(poor.flops_s, full.flops_s, 0);
  CU_ASSERT(poor.layer_s > 0 && poor.layer_s <= full.layer_s);
  CU_ASSERT(poor.bound_s <= full.bound_s);
  fixture_free(&f);
}

typedef struct optimes_case {
  fixture *f;
  const char *path;
} optimes_case;

static mp_status optimes_load_call(void *ctx, int *untouched, mp_error *err) {
  optimes_case *oc = ctx;
  optimes *t = POISON;
  mp_status st = optimes_load(oc->path, oc->f->g, &t, err);
  *untouched = LEFT_ALONE(t);
  if (st == MP_OK) optimes_free(t);
  return st;
}

static void optimes_load_should_fail_cleanly_at_every_allocation(void) {
  fixture f;
  CU_ASSERT_FATAL(fixture_load(&f));
  optimes_case csv = {&f, testutil_write_temp("times.csv", "op,seconds\nconv1,2.5e-6\n\"fc\",1e-7\n")};
  optimes_case json = {&f, testutil_write_temp("times.json", "{\"conv1\": 3e-6, \"block.add\": 0}")};
  every_allocation("optimes_load (CSV)", NULL, optimes_load_call, &csv);
  every_allocation("optimes_load (JSON)", NULL, optimes_load_call, &json);
  fixture_free(&f);
}

/* ---- sim/ without the engine: traces and timelines -------------------------------------------- */

/* ctx: the trace file to load (NULL: TRACE_FILE). */
static mp_status trace_load_call(void *ctx, int *untouched, mp_error *err) {
  trace *t = POISON;
  mp_status st = trace_load(testutil_src(ctx ? (const char *)ctx : TRACE_FILE), &t, err);
  *untouched = LEFT_ALONE(t);
  if (st == MP_OK) trace_free(t);
  return st;
}

typedef struct trace_case {
  fixture *f;
  trace *t;   /* TRACE_FILE, loaded once */
  chip *big;  /* a 5x5 mesh for trace_map */
} trace_case;

static mp_status trace_map_call(void *ctx, int *untouched, mp_error *err) {
  trace_case *tc = ctx;
  trace *m = POISON, *n = POISON;
  mp_status st = trace_map(tc->t, tc->big, "snake:4", &m, err);
  *untouched = LEFT_ALONE(m);
  if (st == MP_OK) {
    st = trace_map(tc->t, tc->big, "xy:1,1", &n, err);
    *untouched = LEFT_ALONE(n);
    trace_free(m);
    if (st == MP_OK) trace_free(n);
  }
  return st;
}

static mp_status trace_to_string_call(void *ctx, int *untouched, mp_error *err) {
  trace_case *tc = ctx;
  char *text = POISON;
  mp_status st = trace_to_string(tc->t, &text, NULL, err);
  *untouched = LEFT_ALONE(text);
  if (st == MP_OK) free(text);
  return st;
}

static mp_status trace_write_call(void *ctx, int *untouched, mp_error *err) {
  trace_case *tc = ctx;
  const char *path = fresh_target("written.trace");
  mp_status st = trace_write(tc->t, path, err);
  *untouched = !testutil_exists(path);
  return st;
}

static mp_status trace_check_call(void *ctx, int *untouched, mp_error *err) {
  trace_case *tc = ctx;
  *untouched = 1;
  return trace_check(tc->t, tc->f->c->n_cores, err);
}

/* A trace built action by action: two groups, a compute with a dependency, a send and its recv.
 * *out (may be NULL: the trace is freed) receives it. */
static mp_status trace_build(trace **out, int *untouched, mp_error *err) {
  trace *t = POISON;
  const int plan2[] = {1, 1};
  mp_status st = trace_new("0.1.0", "g", 1, 2, plan2, 2, 2, "c", 3, 2, 1, 1, &t, err);
  *untouched = LEFT_ALONE(t);
  if (st != MP_OK) return st;
  *untouched = 1; /* from here on the trace is the call's, whatever fails */
  trace_group fig = {.first_layer = 0, .n_layers = 1, .flops = 10};
  int c0 = 0, c1 = 1, g0, g1, dep = 0;
  trace_action compute = {.kind = TRACE_COMPUTE, .core = 0, .peer = -1, .peer_group = -1, .flops = 5};
  trace_action send = {.kind = TRACE_SEND, .core = 0, .peer = 1, .peer_group = 1, .bytes = 8};
  trace_action recv = {.kind = TRACE_RECV, .core = 1, .peer = 0, .peer_group = 0};
  if ((st = trace_add_group(t, &c0, 1, &fig, &g0, err)) == MP_OK &&
      (st = trace_add_group(t, &c1, 1, &fig, &g1, err)) == MP_OK &&
      (st = trace_add_action(t, g0, &compute, "a", NULL, 0, err)) == MP_OK &&
      (st = trace_add_action(t, g0, &compute, "b", &dep, 1, err)) == MP_OK &&
      (st = trace_add_action(t, g0, &send, "x", NULL, 0, err)) == MP_OK)
    st = trace_add_action(t, g1, &recv, "x", NULL, 0, err);
  if (out && st == MP_OK)
    *out = t;
  else
    trace_free(t);
  return st;
}

static mp_status trace_build_call(void *ctx, int *untouched, mp_error *err) {
  (void)ctx;
  return trace_build(NULL, untouched, err);
}

/* The text of trace_build's trace: computes with dependency lists. */
static mp_status trace_parse_call(void *ctx, int *untouched, mp_error *err) {
  trace *t = POISON;
  mp_status st = trace_parse("built.trace", ctx, strlen(ctx), &t, err);
  *untouched = LEFT_ALONE(t);
  if (st == MP_OK) trace_free(t);
  return st;
}

static void trace_constructors_and_writers_should_fail_cleanly_at_every_allocation(void) {
  fixture f;
  CU_ASSERT_FATAL(fixture_load(&f));
  trace_case tc = {&f, NULL, NULL};
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(trace_load(testutil_src(TRACE_FILE), &tc.t, &err), MP_OK);
  const char *big = "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"m5\",\"mesh\":{\"width\":5,\"height\":5},"
                    "\"core\":{\"flops\":1e12,\"sram_bytes\":1572864},\"noc\":{\"bandwidth\":3.2e10,\"latency\":4e-9},"
                    "\"dram\":{\"bandwidth\":1e11,\"ports\":[[0,1],[4,3]]}}";
  cJSON *doc = NULL;
  CU_ASSERT_EQUAL_FATAL(jsonio_parse("m5.json", big, strlen(big), &doc, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(chip_from_json(doc, "m5.json", &tc.big, &err), MP_OK);
  cJSON_Delete(doc);
  every_allocation("trace_load", NULL, trace_load_call, NULL);
  every_allocation("trace_load (a training trace)", NULL, trace_load_call,
                   (void *)"tests/fuzz/seeds/trace/two-groups-train.trace");
  every_allocation("trace_new + trace_add_group + trace_add_action", NULL, trace_build_call, NULL);
  trace *built = NULL;
  char *text = NULL;
  int untouched;
  CU_ASSERT_EQUAL_FATAL(trace_build(&built, &untouched, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(trace_to_string(built, &text, NULL, &err), MP_OK);
  every_allocation("trace_parse", NULL, trace_parse_call, text);
  free(text);
  trace_free(built);
  every_allocation("trace_check", NULL, trace_check_call, &tc);
  every_allocation("trace_map", NULL, trace_map_call, &tc);
  every_allocation("trace_to_string", NULL, trace_to_string_call, &tc);
  every_allocation("trace_write", NULL, trace_write_call, &tc);
  trace_free(tc.t);
  chip_free(tc.big);
  fixture_free(&f);
}

/* A timeline of the fixture's chip with one event of each kind, on overlapping slices (lanes). */
static mp_status timeline_fill(const chip *c, timeline **out, mp_error *err) {
  mp_status st = timeline_new(c, "nomem", out, err);
  if (st != MP_OK) return st;
  timeline_event ev[] = {
      {.kind = TIMELINE_EXEC, .start_s = 0, .end_s = 2e-6, .name = "conv1", .microbatch = 0, .first_core = 0,
       .n_cores = 2, .flops = 1e6, .dram_port = -1},
      {.kind = TIMELINE_EXEC, .start_s = 1e-6, .end_s = 3e-6, .name = "conv2", .microbatch = 1, .first_core = 1,
       .n_cores = 2, .flops = 1e6, .dram_port = -1},
      {.kind = TIMELINE_TRANSFER, .start_s = 2e-6, .end_s = 4e-6, .name = "t", .microbatch = 0, .src_core = 0,
       .dst_core = 5, .dram_port = -1, .src_group = 0, .dst_group = 1, .is_send = 1, .bytes = 4096},
      {.kind = TIMELINE_TRANSFER, .start_s = 0, .end_s = 1e-6, .name = "weights", .microbatch = 0, .dst_core = 3,
       .dram_port = 1, .src_group = -1, .dst_group = 0, .bytes = 1024},
      {.kind = TIMELINE_SRAM, .start_s = 0, .microbatch = -1, .first_core = 0, .n_cores = 1, .dram_port = -1,
       .bytes = 65536},
  };
  for (size_t i = 0; i < sizeof ev / sizeof *ev && st == MP_OK; i++) st = timeline_add(*out, &ev[i], err);
  if (st != MP_OK) {
    timeline_free(*out);
    *out = NULL;
  }
  return st;
}

static mp_status timeline_build_call(void *ctx, int *untouched, mp_error *err) {
  timeline *t = POISON;
  mp_status st = timeline_fill(((fixture *)ctx)->c, &t, err);
  *untouched = LEFT_ALONE(t);
  if (st == MP_OK) timeline_free(t);
  return st;
}

typedef struct timeline_case {
  timeline *t; /* timeline_fill's */
  char *text;  /* its JSON */
  size_t len;
} timeline_case;

static mp_status timeline_to_string_call(void *ctx, int *untouched, mp_error *err) {
  timeline_case *tc = ctx;
  char *text = POISON;
  mp_status st = timeline_to_string(tc->t, &text, NULL, err);
  *untouched = LEFT_ALONE(text);
  if (st == MP_OK) free(text);
  return st;
}

static mp_status timeline_write_call(void *ctx, int *untouched, mp_error *err) {
  timeline_case *tc = ctx;
  const char *path = fresh_target("timeline.json");
  mp_status st = timeline_write(tc->t, path, err);
  *untouched = !testutil_exists(path);
  return st;
}

static mp_status timeline_validate_call(void *ctx, int *untouched, mp_error *err) {
  timeline_case *tc = ctx;
  size_t n = 12345;
  mp_status st = timeline_validate("timeline.json", tc->text, tc->len, &n, err);
  *untouched = st == MP_OK || n == 12345;
  return st;
}

static mp_status timeline_validate_file_call(void *ctx, int *untouched, mp_error *err) {
  (void)ctx;
  size_t n = 12345;
  mp_status st = timeline_validate_file(testutil_temp_path("saved_timeline.json"), &n, err);
  *untouched = st == MP_OK || n == 12345;
  return st;
}

static void timeline_constructors_and_writers_should_fail_cleanly_at_every_allocation(void) {
  fixture f;
  CU_ASSERT_FATAL(fixture_load(&f));
  timeline_case tc = {NULL, NULL, 0};
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(timeline_fill(f.c, &tc.t, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(timeline_to_string(tc.t, &tc.text, &tc.len, &err), MP_OK);
  every_allocation("timeline_new + timeline_add", NULL, timeline_build_call, &f);
  every_allocation("timeline_to_string", NULL, timeline_to_string_call, &tc);
  every_allocation("timeline_write", NULL, timeline_write_call, &tc);
  every_allocation("timeline_validate", NULL, timeline_validate_call, &tc);
  CU_ASSERT_EQUAL_FATAL(timeline_write(tc.t, testutil_temp_path("saved_timeline.json"), &err), MP_OK);
  every_allocation("timeline_validate_file", NULL, timeline_validate_file_call, &tc);
  free(tc.text);
  timeline_free(tc.t);
  fixture_free(&f);
}

/* A simulation's result made by hand (the simulator itself is test_nomem_sim.c's): two stages, four
 * cores, one link. */
static mp_status sim_result_to_json_call(void *ctx, int *untouched, mp_error *err) {
  (void)ctx;
  sim_stage_result stages[2] = {{.first_layer = 0, .n_layers = 2, .first_core = 0, .n_cores = 1, .compute_s = 1},
                                {.first_layer = 2, .n_layers = 4, .first_core = 1, .n_cores = 3, .compute_s = 2}};
  sim_core_result cores[4] = {{1, 2, 1}, {1, 2, 1}, {1, 2, 1}, {3, 2, 0}};
  sim_link_result links[1] = {{"x0y0>x1y0", 4096, 0.5}};
  sim_result r = {.microbatches = 8, .samples_per_s = 10, .period_s = 0.1, .makespan_s = 1, .latency_s = 0.3,
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

/* ---- model/proc: work in a child, answered through a pipe ------------------------------------- */

/* 200 kB of answer: the parent's buffers grow several times.  The child inherits the armed wrappers
 * and disarms them: the parent's side is under test.  (A child that cannot allocate its answer's
 * header exits without one, which the parent reports as MP_RUN.) */
static mp_status big_answer(void *ctx, strbuf *answer, mp_error *err) {
  (void)ctx;
  (void)err;
  nomem_disarm();
  static const char block[1000];
  for (int i = 0; i < 200; i++) strbuf_append(answer, block, sizeof block);
  return MP_OK;
}

static mp_status proc_run_child_call(void *ctx, int *untouched, mp_error *err) {
  (void)ctx;
  strbuf answer = {0};
  mp_status st = proc_run_child(big_answer, NULL, &answer, err);
  *untouched = answer.len == 0;
  if (st == MP_OK && answer.len != 200000) st = err_set(err, MP_RUN, "answer of %zu bytes", answer.len);
  strbuf_clear(&answer);
  return st;
}

static void proc_run_child_should_fail_cleanly_at_every_allocation(void) {
  every_allocation("proc_run_child", NULL, proc_run_child_call, NULL);
}

/* ---- partitioner/: the decision process, the policy, the trainer, the methods ----------------- */

static mp_status rl_env_call(void *ctx, int *untouched, mp_error *err) {
  rl_env *e = POISON;
  mp_status st = rl_env_from_graph(((fixture *)ctx)->g, 16, &e, err);
  *untouched = LEFT_ALONE(e);
  if (st == MP_OK) rl_env_free(e);
  return st;
}

static void rl_env_should_fail_cleanly_at_every_allocation(void) {
  fixture f;
  CU_ASSERT_FATAL(fixture_load(&f));
  every_allocation("rl_env_from_graph", NULL, rl_env_call, &f);
  fixture_free(&f);
}

typedef struct policy_case {
  rl_policy *p;  /* a small policy with some Adam state */
  strbuf image;  /* its file image */
  const char *path;
} policy_case;

static mp_status rl_policy_new_call(void *ctx, int *untouched, mp_error *err) {
  (void)ctx;
  rng r;
  rng_seed(&r, 7);
  rl_policy *p = POISON;
  mp_status st = rl_policy_new(RL_PAIR_FEATURES, RL_PAIR_ACTIONS, 2, 8, 1e-3, &r, &p, err);
  *untouched = LEFT_ALONE(p);
  if (st == MP_OK) rl_policy_free(p);
  return st;
}

static mp_status rl_policy_clone_call(void *ctx, int *untouched, mp_error *err) {
  rl_policy *copy = rl_policy_clone(((policy_case *)ctx)->p);
  *untouched = 1;
  rl_policy_free(copy);
  return null_is_nomem(copy, err);
}

static mp_status rl_policy_bytes_call(void *ctx, int *untouched, mp_error *err) {
  policy_case *pc = ctx;
  strbuf image = {0};
  mp_status st = rl_policy_to_bytes(pc->p, 1, &image, err);
  *untouched = st == MP_OK || image.oom; /* an appender's failure leaves its buffer marked (strbuf.h) */
  strbuf_clear(&image);
  if (st != MP_OK) return st;
  rl_policy *back = POISON;
  st = rl_policy_from_bytes((const unsigned char *)pc->image.s, pc->image.len, "image", &back, NULL, err);
  *untouched = LEFT_ALONE(back);
  if (st == MP_OK) rl_policy_free(back);
  return st;
}

static mp_status rl_policy_save_call(void *ctx, int *untouched, mp_error *err) {
  policy_case *pc = ctx;
  const char *path = fresh_target("written.policy");
  mp_status st = rl_policy_save(pc->p, 1, path, err);
  *untouched = !testutil_exists(path);
  return st;
}

static mp_status rl_policy_load_call(void *ctx, int *untouched, mp_error *err) {
  rl_policy *p = POISON;
  mp_status st = rl_policy_load(((policy_case *)ctx)->path, &p, err);
  *untouched = LEFT_ALONE(p);
  if (st == MP_OK) rl_policy_free(p);
  return st;
}

/* The loss and gradient of a batch of two steps of three rows, with a workspace grown from empty. */
static mp_status rl_policy_loss_grad_call(void *ctx, int *untouched, mp_error *err) {
  rl_policy *p = ((policy_case *)ctx)->p;
  enum { T = 2, ROWS = 3 };
  double X[T * ROWS * RL_PAIR_FEATURES], adv[T] = {1.0, -0.5}, loss, entropy;
  unsigned char masks[T * ROWS * RL_PAIR_ACTIONS];
  int act[T] = {1, 6};
  for (size_t i = 0; i < sizeof X / sizeof *X; i++) X[i] = (double)(i % 7) / 7.0 - 0.4;
  memset(masks, 1, sizeof masks);
  double *grad = calloc(p->n_params, sizeof *grad);
  rl_policy_ws ws = {0};
  mp_status st = grad ? rl_policy_loss_grad(p, T, ROWS, X, masks, act, adv, 0.01, &ws, &loss, &entropy, grad, err)
                      : err_nomem(err);
  *untouched = 1;
  rl_policy_ws_free(&ws);
  free(grad);
  return st;
}

/* Probabilities of a three-row state with a workspace grown from empty: -1 is out of memory. */
static mp_status rl_policy_probs_call(void *ctx, int *untouched, mp_error *err) {
  rl_policy *p = ((policy_case *)ctx)->p;
  double x[3 * RL_PAIR_FEATURES], probs[3 * RL_PAIR_ACTIONS];
  unsigned char mask[3 * RL_PAIR_ACTIONS];
  for (size_t i = 0; i < sizeof x / sizeof *x; i++) x[i] = (double)(i % 5) / 5.0;
  memset(mask, 1, sizeof mask);
  rl_policy_ws ws = {0};
  int allowed = rl_policy_probs(p, &ws, x, 3, mask, probs);
  rl_policy_ws_free(&ws);
  *untouched = 1;
  if (allowed < 0) return err_nomem(err);
  return allowed == 3 * RL_PAIR_ACTIONS ? MP_OK : err_set(err, MP_RUN, "%d actions allowed", allowed);
}

static void rl_policy_should_fail_cleanly_at_every_allocation(void) {
  policy_case pc = {NULL, {0}, testutil_temp_path("nomem.policy")};
  rng r;
  rng_seed(&r, 3);
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(rl_policy_new(RL_PAIR_FEATURES, RL_PAIR_ACTIONS, 2, 8, 1e-3, &r, &pc.p, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_policy_to_bytes(pc.p, 1, &pc.image, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_policy_save(pc.p, 1, pc.path, &err), MP_OK);
  every_allocation("rl_policy_new", NULL, rl_policy_new_call, &pc);
  every_allocation("rl_policy_clone", NULL, rl_policy_clone_call, &pc);
  every_allocation("rl_policy_to_bytes + rl_policy_from_bytes", NULL, rl_policy_bytes_call, &pc);
  every_allocation("rl_policy_save", NULL, rl_policy_save_call, &pc);
  every_allocation("rl_policy_load", NULL, rl_policy_load_call, &pc);
  every_allocation("rl_policy_loss_grad", NULL, rl_policy_loss_grad_call, &pc);
  every_allocation("rl_policy_probs", NULL, rl_policy_probs_call, &pc);
  strbuf_clear(&pc.image);
  rl_policy_free(pc.p);
}

/* The trainer on the fixture's graph and chip with the analytical model's reward.  setup builds what
 * the call needs that is not under test (env, model, reward, and for the steps a trainer); the call
 * frees the trainer it made or was given. */
typedef struct trainer_case {
  fixture *f;
  rl_env *env;
  cost_model *model;
  rl_reward reward;
  rl_instance inst;
  rl_train_config cfg;
  rl_trainer *t;      /* setup's, for the steps */
  rl_policy *policy;  /* a policy to start from */
  const char *checkpoint;
  mp_status (*step)(rl_trainer *t, mp_error *err); /* the step under test */
} trainer_case;

static mp_status trainer_case_init(trainer_case *tc, fixture *f) {
  memset(tc, 0, sizeof *tc);
  tc->f = f;
  mp_error err;
  if (rl_env_from_graph(f->g, f->c->n_cores, &tc->env, &err) != MP_OK ||
      cost_model_new(f->g, f->c, &tc->model, &err) != MP_OK ||
      rl_reward_init_model(&tc->reward, tc->model, f->c->n_cores, f->g->n_ops, PLAN, NULL, &err) != MP_OK)
    return MP_RUN;
  tc->inst = (rl_instance){tc->env, PLAN, rl_reward_eval, &tc->reward, f->g->hash ^ f->c->hash};
  rl_method_config(&tc->cfg, f->c->n_cores, 5);
  tc->cfg.episodes = 8;
  tc->cfg.batch = 4;
  tc->cfg.max_steps = 3;
  tc->cfg.samples = 2;
  tc->checkpoint = testutil_temp_path("nomem.checkpoint");
  rng r;
  rng_seed(&r, 11);
  return rl_policy_new(RL_PAIR_FEATURES, RL_PAIR_ACTIONS, 1, 4, 1e-3, &r, &tc->policy, &err);
}

static void trainer_case_free(trainer_case *tc) {
  rl_reward_clear(&tc->reward);
  rl_policy_free(tc->policy);
  cost_model_free(tc->model);
  rl_env_free(tc->env);
}

static mp_status trainer_new_call(void *ctx, int *untouched, mp_error *err) {
  trainer_case *tc = ctx;
  rl_trainer *t = POISON;
  mp_status st = rl_trainer_new(&tc->cfg, &tc->inst, 1, NULL, &t, err);
  *untouched = LEFT_ALONE(t);
  if (st == MP_OK) rl_trainer_free(t);
  return st;
}

/* From a given policy (copied), one of another shape than the configuration's. */
static mp_status trainer_new_with_policy_call(void *ctx, int *untouched, mp_error *err) {
  trainer_case *tc = ctx;
  rl_trainer *t = POISON;
  mp_status st = rl_trainer_new(&tc->cfg, &tc->inst, 1, tc->policy, &t, err);
  *untouched = LEFT_ALONE(t);
  if (st == MP_OK) rl_trainer_free(t);
  return st;
}

static mp_status trainer_resume_call(void *ctx, int *untouched, mp_error *err) {
  trainer_case *tc = ctx;
  rl_trainer *t = POISON;
  mp_status st = rl_ckpt_resume(&tc->cfg, &tc->inst, 1, tc->checkpoint, &t, NULL, err);
  *untouched = LEFT_ALONE(t);
  if (st == MP_OK) rl_trainer_free(t);
  return st;
}

static mp_status trainer_setup(void *ctx, mp_error *err) {
  trainer_case *tc = ctx;
  return rl_trainer_new(&tc->cfg, &tc->inst, 1, NULL, &tc->t, err);
}

/* One step on setup's trainer, which it then frees: what the step allocated must go with it. */
static mp_status trainer_step_call(void *ctx, int *untouched, mp_error *err) {
  trainer_case *tc = ctx;
  mp_status st = tc->step(tc->t, err);
  *untouched = 1;
  rl_trainer_free(tc->t);
  tc->t = NULL;
  return st;
}

static mp_status step_iterate(rl_trainer *t, mp_error *err) { return rl_trainer_iterate(t, err); }
static mp_status step_greedy(rl_trainer *t, mp_error *err) { return rl_trainer_greedy(t, 0, 4, err); }
static mp_status step_polish(rl_trainer *t, mp_error *err) { return rl_search_polish(t, 0, 2, err); }
static mp_status step_polish_pairs(rl_trainer *t, mp_error *err) { return rl_search_polish_pairs(t, 0, 1, err); }
static mp_status step_kick(rl_trainer *t, mp_error *err) { return rl_search_kick(t, 0, 3, 4, err); }
static mp_status step_regroup(rl_trainer *t, mp_error *err) { return rl_search_regroup(t, 0, 2, err); }

/* The reward keeps its scratch from its init on: scoring a plan (an offer) allocates nothing, and the
 * init is what can fail. */
static mp_status reward_init_call(void *ctx, int *untouched, mp_error *err) {
  trainer_case *tc = ctx;
  rl_reward r;
  memset(&r, 0xff, sizeof r);
  mp_status st = rl_reward_init_model(&r, tc->model, tc->f->c->n_cores, tc->f->g->n_ops, PLAN, NULL, err);
  *untouched = st == MP_OK || (r.stages == NULL && r.buf == NULL);
  rl_reward_clear(&r);
  return st;
}

static mp_status step_save(rl_trainer *t, mp_error *err) {
  const char *path = fresh_target("written.checkpoint");
  mp_status st = rl_ckpt_save(t, 0, path, err);
  if (st != MP_OK && testutil_exists(path)) return err_set(err, MP_RUN, "a failed save left %s behind", path);
  return st;
}

static void rl_trainer_should_fail_cleanly_at_every_allocation(void) {
  fixture f;
  CU_ASSERT_FATAL(fixture_load(&f));
  trainer_case tc;
  CU_ASSERT_EQUAL_FATAL(trainer_case_init(&tc, &f), MP_OK);
  rl_trainer *t = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&tc.cfg, &tc.inst, 1, NULL, &t, &err), MP_OK);
  CU_ASSERT_EQUAL(rl_trainer_iterate(t, &err), MP_OK);
  CU_ASSERT_EQUAL(rl_ckpt_save(t, 0, tc.checkpoint, &err), MP_OK);
  rl_trainer_free(t);
  every_allocation("rl_trainer_new", NULL, trainer_new_call, &tc);
  every_allocation("rl_trainer_new (from a policy)", NULL, trainer_new_with_policy_call, &tc);
  every_allocation("rl_ckpt_resume", NULL, trainer_resume_call, &tc);
  every_allocation("rl_reward_init_model", NULL, reward_init_call, &tc);
  static const struct {
    const char *name;
    mp_status (*step)(rl_trainer *, mp_error *);
  } steps[] = {
      {"rl_trainer_iterate", step_iterate},  {"rl_trainer_greedy", step_greedy},
      {"rl_search_polish", step_polish},     {"rl_search_polish_pairs", step_polish_pairs},
      {"rl_search_kick", step_kick},         {"rl_search_regroup", step_regroup},
      {"rl_ckpt_save", step_save},
  };
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
    tc.step = steps[i].step;
    every_allocation(steps[i].name, trainer_setup, trainer_step_call, &tc);
  }
  trainer_case_free(&tc);
  fixture_free(&f);
}

typedef struct method_case {
  const graph *g;
  const chip *c;
  const char *name;
} method_case;

static mp_status method_run_call(void *ctx, int *untouched, mp_error *err) {
  method_case *mc = ctx;
  method_options o;
  method_options_default(&o);
  plan *p = POISON;
  method_report rep;
  mp_status st = method_run(mc->name, mc->g, mc->c, &o, &p, &rep, err);
  *untouched = LEFT_ALONE(p);
  if (st == MP_OK) plan_free(p);
  return st;
}

/* The cost model keeps the gathering segments of the stage ranges it has costed in a memo that does
 * without memory (cost.c: a count it cannot keep is answered, just not kept).  Its two arrays may be
 * refused without a failure, once per model: method_run checks every plan in a model; optimal also
 * runs the four fast methods for its starts and costs the starts in a model of its own. */
#define MEMO_ALLOCATIONS 2

static long cost_models_of(const char *method) { return strcmp(method, "optimal") == 0 ? 1 + 4 + 1 : 1; }

/* A chip of 8 cores whose SRAM holds no layer of the graph: every method still returns a plan. */
static const char *SMALL_CHIP =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"small\",\"mesh\":{\"width\":4,\"height\":2},"
    "\"core\":{\"flops\":1e12,\"sram_bytes\":1024},\"noc\":{\"bandwidth\":3.2e10,\"latency\":4e-9}}";

static void every_method_but_the_learning_ones_should_fail_cleanly_at_every_allocation(void) {
  fixture f;
  CU_ASSERT_FATAL(fixture_load(&f));
  chip *other[2] = {NULL, NULL};
  const char *text[2] = {HETERO_CHIP, SMALL_CHIP};
  for (int k = 0; k < 2; k++) {
    cJSON *doc = NULL;
    mp_error err;
    CU_ASSERT_EQUAL_FATAL(jsonio_parse("chip.json", text[k], strlen(text[k]), &doc, &err), MP_OK);
    CU_ASSERT_EQUAL(chip_from_json(doc, "chip.json", &other[k], &err), MP_OK);
    cJSON_Delete(doc);
  }
  CU_ASSERT_FATAL(other[0] && other[1]);
  const chip *chips[3] = {f.c, other[0], other[1]};
  int swept = 0;
  for (int i = 0; i < method_count(); i++) {
    if (method_at(i)->learning) continue;
    for (int k = 0; k < 3; k++) {
      method_case mc = {f.g, chips[k], method_at(i)->name};
      char name[96];
      snprintf(name, sizeof name, "method_run %s on %s", mc.name, chips[k]->name);
      sweep_twice((nomem_target){.name = name, .call = method_run_call, .ctx = &mc, .expected = MP_NOMEM},
                  MEMO_ALLOCATIONS * cost_models_of(mc.name));
    }
    swept++;
  }
  CU_ASSERT(swept >= 5);
  chip_free(other[0]);
  chip_free(other[1]);
  fixture_free(&f);
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
  sweep_row r = {.feasible = 1, .n_stages = 1, .model_period_s = 1, .samples_per_s = 1, .cores = 16};
  CU_ASSERT(sweep_csv_header(s, header, sizeof header) > 0);
  CU_ASSERT(sweep_csv_row(s, 0, &r, row, sizeof row) > 0);
  strcat(header, row);
  testutil_write_temp("resumed.csv", header);
  every_allocation("sweep_csv_open", NULL, sweep_csv_open_call, s);
  sweep_free(s);
  fixture_free(&f);
}

static bench_entry bench_case(const char *method, double throughput) {
  bench_entry e;
  memset(&e, 0, sizeof e);
  snprintf(e.graph, sizeof e.graph, "tiny_resnet");
  snprintf(e.chip, sizeof e.chip, "mesh4x4");
  snprintf(e.method, sizeof e.method, "%s", method);
  snprintf(e.key, sizeof e.key, "tiny_resnet|mesh4x4|%s", method);
  e.feasible = 1;
  e.stages = 4;
  e.samples_per_s = throughput;
  e.model_period_s = 1 / throughput;
  e.latency_s = 4 / throughput;
  e.solve_s = 0.5;
  e.evals_per_s = 100;
  e.plan_hash = 0x0123456789abcdefULL;
  return e;
}

typedef struct bench_case_ctx {
  bench_report old, now;
  const char *path;
} bench_case_ctx;

static mp_status bench_suite_call(void *ctx, int *untouched, mp_error *err) {
  (void)ctx;
  bench_item *items = POISON;
  int n = -7;
  mp_status st = bench_suite(1, &items, &n, err);
  *untouched = LEFT_ALONE(items);
  if (st == MP_OK) free(items);
  return st;
}

static mp_status bench_add_call(void *ctx, int *untouched, mp_error *err) {
  (void)ctx;
  bench_report r;
  memset(&r, 0, sizeof r);
  bench_entry a = bench_case("even", 10), b = bench_case("optimal", 20);
  mp_status st = bench_add(&r, &a, err);
  if (st == MP_OK) st = bench_add(&r, &b, err);
  *untouched = st == MP_OK || r.n <= 1;
  bench_report_clear(&r);
  return st;
}

static mp_status bench_to_json_call(void *ctx, int *untouched, mp_error *err) {
  cJSON *doc = bench_to_json(&((bench_case_ctx *)ctx)->now);
  *untouched = 1;
  cJSON_Delete(doc);
  return null_is_nomem(doc, err);
}

static mp_status bench_save_call(void *ctx, int *untouched, mp_error *err) {
  const char *path = fresh_target("written_bench.json");
  mp_status st = bench_save(&((bench_case_ctx *)ctx)->now, path, err);
  *untouched = !testutil_exists(path);
  return st;
}

static mp_status bench_load_call(void *ctx, int *untouched, mp_error *err) {
  bench_report r;
  memset(&r, 0xff, sizeof r);
  mp_status st = bench_load(((bench_case_ctx *)ctx)->path, &r, err);
  *untouched = st == MP_OK || (r.n == 0 && r.entries == NULL);
  if (st == MP_OK) bench_report_clear(&r);
  return st;
}

static mp_status bench_diff_call(void *ctx, int *untouched, mp_error *err) {
  bench_case_ctx *bc = ctx;
  bench_diff d;
  memset(&d, 0xff, sizeof d);
  mp_status st = bench_diff_new(&bc->old, &bc->now, NULL, &d, err);
  *untouched = st == MP_OK || (d.n == 0 && d.rows == NULL);
  if (st == MP_OK) bench_diff_clear(&d);
  return st;
}

static void bench_constructors_should_fail_cleanly_at_every_allocation(void) {
  bench_case_ctx bc;
  memset(&bc, 0, sizeof bc);
  bc.path = testutil_temp_path("saved_bench.json");
  mp_error err;
  bench_machine_probe(&bc.now.machine);
  bc.old.machine = bc.now.machine;
  snprintf(bc.now.version, sizeof bc.now.version, "0.1.0");
  snprintf(bc.now.date, sizeof bc.now.date, "2026-11-22T00:00:00Z");
  bc.now.quick = bc.old.quick = 1;
  bench_entry now[] = {bench_case("even", 10), bench_case("optimal", 20), bench_case("greedy", 15)};
  bench_entry old[] = {bench_case("even", 11), bench_case("optimal", 20), bench_case("balanced", 12)};
  for (int i = 0; i < 3; i++) {
    CU_ASSERT_EQUAL_FATAL(bench_add(&bc.now, &now[i], &err), MP_OK);
    CU_ASSERT_EQUAL_FATAL(bench_add(&bc.old, &old[i], &err), MP_OK);
  }
  bench_fill_gaps(&bc.now);
  CU_ASSERT_EQUAL_FATAL(bench_save(&bc.now, bc.path, &err), MP_OK);
  every_allocation("bench_suite", NULL, bench_suite_call, &bc);
  every_allocation("bench_add", NULL, bench_add_call, &bc);
  every_allocation("bench_to_json", NULL, bench_to_json_call, &bc);
  every_allocation("bench_save", NULL, bench_save_call, &bc);
  every_allocation("bench_load", NULL, bench_load_call, &bc);
  every_allocation("bench_diff_new", NULL, bench_diff_call, &bc);
  bench_report_clear(&bc.now);
  bench_report_clear(&bc.old);
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
      {"fileio_read_all_should_fail_cleanly_at_every_allocation",
       fileio_read_all_should_fail_cleanly_at_every_allocation},
      {"graph_load_should_fail_cleanly_at_every_allocation", graph_load_should_fail_cleanly_at_every_allocation},
      {"graph_load_should_fail_cleanly_at_every_allocation_of_a_cyclic_graph",
       graph_load_should_fail_cleanly_at_every_allocation_of_a_cyclic_graph},
      {"graph_to_json_should_fail_cleanly_at_every_allocation", graph_to_json_should_fail_cleanly_at_every_allocation},
      {"graph_totals_should_keep_every_total_but_the_peak_without_memory",
       graph_totals_should_keep_every_total_but_the_peak_without_memory},
      {"onnx_import_should_fail_cleanly_at_every_allocation", onnx_import_should_fail_cleanly_at_every_allocation},
      {"chip_load_should_fail_cleanly_at_every_allocation", chip_load_should_fail_cleanly_at_every_allocation},
      {"plan_constructors_should_fail_cleanly_at_every_allocation",
       plan_constructors_should_fail_cleanly_at_every_allocation},
      {"split_new_should_fail_cleanly_at_every_allocation", split_new_should_fail_cleanly_at_every_allocation},
      {"split_to_json_should_fail_cleanly_at_every_allocation", split_to_json_should_fail_cleanly_at_every_allocation},
      {"cost_model_should_fail_cleanly_at_every_allocation", cost_model_should_fail_cleanly_at_every_allocation},
      {"cost_result_with_energy_should_fail_cleanly_at_every_allocation",
       cost_result_with_energy_should_fail_cleanly_at_every_allocation},
      {"cost_lower_bound_should_fall_back_to_a_weaker_bound_without_memory",
       cost_lower_bound_should_fall_back_to_a_weaker_bound_without_memory},
      {"optimes_load_should_fail_cleanly_at_every_allocation", optimes_load_should_fail_cleanly_at_every_allocation},
      {"trace_constructors_and_writers_should_fail_cleanly_at_every_allocation",
       trace_constructors_and_writers_should_fail_cleanly_at_every_allocation},
      {"timeline_constructors_and_writers_should_fail_cleanly_at_every_allocation",
       timeline_constructors_and_writers_should_fail_cleanly_at_every_allocation},
      {"sim_result_to_json_should_fail_cleanly_at_every_allocation",
       sim_result_to_json_should_fail_cleanly_at_every_allocation},
      {"proc_run_child_should_fail_cleanly_at_every_allocation",
       proc_run_child_should_fail_cleanly_at_every_allocation},
      {"rl_env_should_fail_cleanly_at_every_allocation", rl_env_should_fail_cleanly_at_every_allocation},
      {"rl_policy_should_fail_cleanly_at_every_allocation", rl_policy_should_fail_cleanly_at_every_allocation},
      {"rl_trainer_should_fail_cleanly_at_every_allocation", rl_trainer_should_fail_cleanly_at_every_allocation},
      {"every_method_but_the_learning_ones_should_fail_cleanly_at_every_allocation",
       every_method_but_the_learning_ones_should_fail_cleanly_at_every_allocation},
      {"sweep_constructors_should_fail_cleanly_at_every_allocation",
       sweep_constructors_should_fail_cleanly_at_every_allocation},
      {"bench_constructors_should_fail_cleanly_at_every_allocation",
       bench_constructors_should_fail_cleanly_at_every_allocation},
      CU_TEST_INFO_NULL,
  };
  int rc = testutil_run("nomem", tests, argc, argv);
  printf("%ld code addresses received a refused allocation\n", nomem_save_sites());
  return rc;
}
