/* Tests of cost.c: a hand-costed three-layer graph with a skip connection on a uniform and on a
 * heterogeneous chip, the lower bounds, the JSON output, and the refusal of a plan of another size. */
#include <math.h>
#include <string.h>

#include "chip.h"
#include "cost.h"
#include "graph.h"
#include "jsonio.h"
#include "plan.h"
#include "testutil.h"

/* in (100 B) -> a -> x (1000 B) -> b -> y (500 B); c reads x and y (x skips b) -> z (10 B, output).
 * flops a 4e9, b 2e9, c 1e9; weights a 100 B, b 200 B, c 0. */
static const char *GRAPH_TEXT =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"skip\",\"inputs\":[{\"name\":\"in\",\"bytes\":100}],\"ops\":["
    "{\"name\":\"a\",\"type\":\"X\",\"inputs\":[\"in\"],\"outputs\":[{\"name\":\"x\",\"bytes\":1000}],\"macs\":0,"
    "\"flops\":4000000000,\"weight_bytes\":100},"
    "{\"name\":\"b\",\"type\":\"X\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"y\",\"bytes\":500}],\"macs\":0,"
    "\"flops\":2000000000,\"weight_bytes\":200},"
    "{\"name\":\"c\",\"type\":\"X\",\"inputs\":[\"x\",\"y\"],\"outputs\":[{\"name\":\"z\",\"bytes\":10}],\"macs\":0,"
    "\"flops\":1000000000,\"weight_bytes\":0}]}";

/* Two cores of 1 Gflop/s and 10000 B; links of 1000 B/s. */
static const char *CHIP2_TEXT =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"two\",\"mesh\":{\"width\":2,\"height\":1},"
    "\"core\":{\"flops\":1e9,\"sram_bytes\":10000},\"noc\":{\"bandwidth\":1000,\"latency\":0}}";

/* Three cores; core 2 is twice as fast, has 500 B and a transfer factor of 3. */
static const char *CHIP3_TEXT =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"three\",\"mesh\":{\"width\":3,\"height\":1},"
    "\"core\":{\"flops\":1e9,\"sram_bytes\":10000},\"noc\":{\"bandwidth\":1000,\"latency\":0},"
    "\"overrides\":[{\"core\":2,\"flops\":2e9,\"sram_bytes\":500,\"transfer_factor\":3}]}";

static graph *load_graph(const char *text) {
  cJSON *root = NULL;
  mp_error err;
  graph *g = NULL;
  if (jsonio_parse("g", text, strlen(text), &root, &err) == MP_OK) graph_from_json(root, "g.json", &g, &err);
  cJSON_Delete(root);
  return g;
}

static chip *load_chip(const char *text) {
  cJSON *root = NULL;
  mp_error err;
  chip *c = NULL;
  if (jsonio_parse("c", text, strlen(text), &root, &err) == MP_OK) chip_from_json(root, "c.json", &c, &err);
  cJSON_Delete(root);
  return c;
}

static cost_result *evaluate(const graph *g, const chip *c, const int *arranged) {
  plan *p = NULL;
  cost_result *r = NULL;
  mp_error err;
  if (plan_new(arranged, c->n_cores, g->n_ops, &p, &err) == MP_OK) cost_evaluate(g, c, p, &r, &err);
  plan_free(p);
  return r;
}

#define NEAR(a, b) CU_ASSERT_DOUBLE_EQUAL((a), (b), 1e-12 * fabs((double)(b)) + 1e-15)

/* [1, 2]: stage 0 = a on core 0: compute 4e9 / 1e9 = 4 s (one core: no all-gather); x is read
 * later (by b and c), X = 1000 B, send = 1000 / 1000 = 1 s; t = 4 s; s = 100 / 1 + 1000 = 1100 B.
 * Stage 1 = b, c on core 1: compute 3e9 / 1e9 = 3 s; nothing leaves (z is an output), t = 3 s;
 * s = 200 + max(500, 10) = 700 B.  Bottleneck 4 s at stage 0, feasible. */
static void cost_should_match_the_hand_count_of_a_two_stage_plan(void) {
  graph *g = load_graph(GRAPH_TEXT);
  chip *c = load_chip(CHIP2_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  cost_result *r = evaluate(g, c, (int[]){1, 2});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(r->n_stages, 2);
  NEAR(r->stages[0].compute_s, 4.0);
  NEAR(r->stages[0].send_bytes, 1000);
  NEAR(r->stages[0].send_s, 1.0);
  NEAR(r->stages[0].time_s, 4.0);
  NEAR(r->stages[0].mem_bytes, 1100);
  NEAR(r->stages[1].compute_s, 3.0);
  NEAR(r->stages[1].send_bytes, 0);
  NEAR(r->stages[1].time_s, 3.0);
  NEAR(r->stages[1].mem_bytes, 700);
  NEAR(r->bottleneck_s, 4.0);
  CU_ASSERT_EQUAL(r->bottleneck_stage, 0);
  CU_ASSERT_EQUAL(r->feasible, 1);
  NEAR(r->mem_ratio, 1100.0 / 10000);
  cost_result_free(r);
  graph_free(g);
  chip_free(c);
}

/* [0, 3]: one stage on both cores: 7e9 / 2e9 = 3.5 s of work plus the all-gathers
 * (1/2) * (1000 + 500 + 10) / 1000 = 0.755 s: 4.255 s; s = 300 / 2 + 1000 = 1150 B.
 * [1, 0, 2] on the three-core chip: stage 1 = b, c on cores 1-2: speed 3e9, 3e9 / 3e9 = 1 s plus
 * (1/2) * 510 / 1000 = 0.255 s; gamma = 3 but nothing leaves; s = 200 / 2 + 500 = 600 B > the
 * 500 B of core 2: not feasible, ratio 1.2. */
static void cost_should_include_all_gathers_and_heterogeneous_groups(void) {
  graph *g = load_graph(GRAPH_TEXT);
  chip *c2 = load_chip(CHIP2_TEXT), *c3 = load_chip(CHIP3_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c3);
  cost_result *r = evaluate(g, c2, (int[]){0, 3});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(r->n_stages, 1);
  NEAR(r->stages[0].gather_bytes, 1510);
  NEAR(r->stages[0].time_s, 4.255);
  NEAR(r->stages[0].mem_bytes, 1150);
  cost_result_free(r);
  r = evaluate(g, c3, (int[]){1, 0, 2});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(r->n_stages, 2);
  NEAR(r->stages[1].speed, 3e9);
  NEAR(r->stages[1].gamma, 3);
  NEAR(r->stages[1].sram_bytes, 500);
  NEAR(r->stages[1].compute_s, 1.255);
  NEAR(r->stages[1].mem_bytes, 600);
  CU_ASSERT_EQUAL(r->stages[1].fits, 0);
  CU_ASSERT_EQUAL(r->feasible, 0);
  NEAR(r->mem_ratio, 1.2);
  NEAR(r->bottleneck_s, 4.0); /* stage 0: a alone on core 0 */
  cost_result_free(r);
  graph_free(g);
  chip_free(c2);
  chip_free(c3);
}

/* a, b as one stage: x (read by c) and y leave, X = 1500 B.  On core 0 (gamma 1) send = 1500 / 1000
 * = 1.5 s; on cores 1-2 (core 2 has gamma 3) send = 4.5 s, above its compute 6e9 / 3e9 + 0.5 * 1500
 * / 1000 = 2.75 s, so the stage takes 4.5 s. */
static void cost_should_weigh_sends_by_the_groups_largest_transfer_factor(void) {
  graph *g = load_graph(GRAPH_TEXT);
  chip *c3 = load_chip(CHIP3_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c3);
  cost_model *m = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(cost_model_new(g, c3, &m, &err), MP_OK);
  cost_stage s;
  cost_model_stage(m, 0, 2, 0, 1, &s); /* a, b on core 0: x and y leave for c */
  NEAR(s.send_bytes, 1500);
  NEAR(s.send_s, 1.5);
  cost_model_stage(m, 0, 2, 1, 2, &s); /* the same on cores 1-2: gamma 3 */
  NEAR(s.gamma, 3);
  NEAR(s.send_s, 4.5);
  NEAR(s.compute_s, 6e9 / 3e9 + 0.5 * 1500 / 1000);
  NEAR(s.time_s, 4.5);
  cost_model_free(m);
  graph_free(g);
  chip_free(c3);
}

/* Bounds on the two-core chip: flops 7e9 / 2e9 = 3.5 s.  Per layer, the better of one core and two:
 * a: min(4, 2 + 0.5) = 2.5 s; b: min(2, 1 + 0.25) = 1.25 s; c: min(1, 0.5 + 0.005) = 0.505 s;
 * so layer_s = 2.5 s (layer 0) and the bound is 3.5 s — below the best plan's 4 s. */
static void lower_bound_should_match_the_hand_count(void) {
  graph *g = load_graph(GRAPH_TEXT);
  chip *c = load_chip(CHIP2_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  cost_bound b;
  cost_lower_bound(g, c, &b);
  NEAR(b.flops_s, 3.5);
  NEAR(b.layer_s, 2.5);
  CU_ASSERT_EQUAL(b.layer, 0);
  NEAR(b.bound_s, 3.5);
  cJSON *j = cost_bound_to_json(&b);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "bound_s")), 3.5, 1e-12);
  cJSON_Delete(j);
  graph_free(g);
  chip_free(c);
}

static void cost_result_json_should_carry_the_stage_figures(void) {
  graph *g = load_graph(GRAPH_TEXT);
  chip *c = load_chip(CHIP2_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  cost_result *r = evaluate(g, c, (int[]){1, 2});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  cJSON *j = cost_result_to_json(r, c);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "bottleneck_s")), 4.0, 1e-12);
  CU_ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(j, "feasible")));
  cJSON *stages = cJSON_GetObjectItem(j, "stages");
  CU_ASSERT_EQUAL(cJSON_GetArraySize(stages), 2);
  cJSON *s1 = cJSON_GetArrayItem(stages, 1);
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(s1, "t_s")), 3.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(s1, "s_bytes")), 700, 1e-9);
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(s1, "first_layer")), 1);
  cJSON_Delete(j);
  cost_result_free(r);
  graph_free(g);
  chip_free(c);
}

static void cost_evaluate_should_refuse_a_plan_for_another_graph(void) {
  graph *g = load_graph(GRAPH_TEXT);
  chip *c = load_chip(CHIP2_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  plan *p = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(plan_new((int[]){1, 1}, 2, 2, &p, &err), MP_OK); /* two layers, not three */
  cost_result *r = NULL;
  CU_ASSERT_EQUAL(cost_evaluate(g, c, p, &r, &err), MP_INPUT);
  CU_ASSERT_PTR_NULL(r);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "g.json: plan: "));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "3 layers"));
  plan_free(p);
  graph_free(g);
  chip_free(c);
}

static CU_TestInfo tests[] = {
    {"cost_should_match_the_hand_count_of_a_two_stage_plan", cost_should_match_the_hand_count_of_a_two_stage_plan},
    {"cost_should_include_all_gathers_and_heterogeneous_groups", cost_should_include_all_gathers_and_heterogeneous_groups},
    {"cost_should_weigh_sends_by_the_groups_largest_transfer_factor",
     cost_should_weigh_sends_by_the_groups_largest_transfer_factor},
    {"lower_bound_should_match_the_hand_count", lower_bound_should_match_the_hand_count},
    {"cost_result_json_should_carry_the_stage_figures", cost_result_json_should_carry_the_stage_figures},
    {"cost_evaluate_should_refuse_a_plan_for_another_graph", cost_evaluate_should_refuse_a_plan_for_another_graph},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("cost", tests, argc, argv); }
